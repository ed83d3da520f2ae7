"""A command verifier: a ``command:`` phase that runs a task's own verifier, as Harbor runs it.

A Harbor task's ``tests/test.sh`` expects the agent's work at ``/app``, its tests at
``/tests`` and a writable ``/logs/verifier`` it writes its reward to (Harbor's
``EnvironmentPaths``). A phase with ``verifier:`` gets that view in the test command's
sandbox (``sandbox.py``: the tests' private root, with the challenge's declared tools): the
run's copy of the snapshot bound writable at ``verifier.workspace``, the phase's hidden test
copy read-only at ``verifier.tests``, and a fresh empty folder of the run, writable, at
``verifier.results``. It starts in ``verifier.workdir`` (the task's ``WORKDIR``; default the
workspace). Only bubblewrap can make those mounts; under a weaker sandbox the phase is
*invalid*, saying so.

**What it reports** (:func:`read_results`), the first of these found:

1. JUnit XML: what the command wrote to ``$CHANGEUP_JUNIT`` (a plain ``command:`` phase reads
   only this), and the ``*.xml`` files at the top of the results folder. Well-formed XML of
   another kind in the folder (a coverage report) is not a result and is passed over.
2. ``reward.json``: an object of named rewards (Harbor keeps its numeric entries and ignores
   the rest, and so does changeup). Each becomes a test ``<phase>/verifier::<name>``.
3. ``reward.txt``: one number, the test ``<phase>/verifier::reward``.

``$CHANGEUP_JUNIT`` is a pipe changeup reads (``orchestrator/system/pipes.py``), not a file: what
is written to it counts in the order it was written, and it must be one JUnit document; a
second document (a forgery before the runner's own, or after it) makes it malformed. Nothing
written once the command has exited counts: its whole tree is killed first.

A reward is a number from 0 to 1, and its test passes only at 1: a phase passes or fails, so
a partial reward is a failed test whose detail keeps the number, and the end of the command's
output (:func:`with_output`, bounded), which is what says why. A reward outside 0..1 (a
count, say) is not a reward: the result is malformed rather than guessed at. Harbor prefers
``reward.json`` over ``reward.txt`` too; the verifier's exit code is not a verdict (Harbor
ignores it, and many ``test.sh`` exit 1 on a failing reward).

When there is none.** A result that is missing or malformed means the command ran, the
agent's code with it, and left nothing that can be believed: the run is *tampered* (void),
as for any test command. The exception is a command that could not start: the shell's exit
126 (not executable) or 127 (not found, e.g. no ``bash`` or ``python3`` on this machine)
with nothing written, neither a JUnit file nor anything in the results folder, is the
grader's environment failing, never the agent's: *invalid*, like a pytest harness that
cannot start. A verifier should therefore write its result on every path, as Harbor's do.

**What the code under test can still write.** The results folder is writable by the task's
contract, and the agent's code runs inside the verifier with its rights: it can write a reward
there, as it could under Harbor; changeup cannot tell it from the verifier's. And code that runs
in the test runner's own process can write a passing document to the pipe and end the process
before the runner writes its own: one document, no contradiction. Only a run whose deciding
process never runs the agent's code (the pytest harness's checks; a separate process for the
code under test) is beyond that.

Result files are read only as regular files of bounded size: a link the command left there
would otherwise have changeup read a file of the machine for it.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path, PurePosixPath

from orchestrator.challenge.model import Verifier
from orchestrator.grading.junit import JUnitError, NotJUnit, Verdict, read_junit
from orchestrator.grading.sandbox import Mount, Sandbox, mount_problem
from orchestrator.system.runtime import Runtime

__all__ = [
    "JUNIT_LIMIT",
    "JUNIT_NAME",
    "REWARD_FILE",
    "REWARD_JSON",
    "REWARD_TXT",
    "CannotMount",
    "ResultError",
    "could_not_start",
    "read_results",
    "verifier_mounts",
    "with_output",
]

#: The most a command's JUnit XML may hold, on its pipe or as a file of the results folder.
JUNIT_LIMIT = 16 * 1024 * 1024
REWARD_TXT = "reward.txt"
REWARD_JSON = "reward.json"
#: The file part of a reward's test id: ``<phase>/verifier::reward``.
REWARD_FILE = "verifier"
#: The shell's exit codes for a program it could not run: not executable (126), not found (127).
NOT_STARTED = (126, 127)
_REWARD_LIMIT = 1024 * 1024
#: What ``$CHANGEUP_JUNIT`` is called in what a person reads.
JUNIT_NAME = "$CHANGEUP_JUNIT"
_EXAMPLE = '{"reward": 1}'
#: How much of a command's output a failed reward keeps: its last lines, at most so many characters.
_OUTPUT_LINES = 20
_OUTPUT_CHARS = 2000


class CannotMount(ValueError):
    """A verifier whose places cannot be mounted in this sandbox (the message says why)."""


class ResultError(ValueError):
    """A command's result that is missing or malformed (the message names the file and what is wrong)."""


def verifier_mounts(
    phase: str,
    verifier: Verifier,
    sandbox: Sandbox,
    runtime: Runtime | None,
    *,
    workspace: Path,
    tests: Path,
    results: Path,
) -> list[Mount]:
    """The mounts of ``phase``'s verifier: ``workspace``, ``tests`` and ``results`` (folders of
    the run) where ``verifier`` puts them, in a view built on ``runtime``; :class:`CannotMount`
    when this sandbox cannot (its ``workdir``, outside them, is checked too: it is made empty)."""
    places = {
        "workspace": PurePosixPath(verifier.workspace),
        "tests": PurePosixPath(verifier.tests),
        "results": PurePosixPath(verifier.results),
    }
    if sandbox.kind != "bubblewrap" or runtime is None:
        where = ", ".join(f"{key} at {place}" for key, place in places.items())
        raise CannotMount(
            f"{phase}'s verifier needs bubblewrap to mount its {where}; "
            f"this sandbox is {sandbox.kind}: {sandbox.reason or 'no reason given'}"
        )
    problems = [
        f"verifier.{key}: {why}" for key, place in places.items() if (why := mount_problem(place, runtime))
    ]
    keys = list(places)
    for i, first in enumerate(keys):
        for second in keys[i + 1 :]:
            a, b = places[first], places[second]
            if a == b or a.is_relative_to(b) or b.is_relative_to(a):
                overlap = f"verifier.{first} ({a}) and verifier.{second} ({b}) overlap"
                problems.append(f"{overlap}: each needs a folder of its own")
    workdir = PurePosixPath(verifier.workdir) if verifier.workdir else None
    outside = workdir is not None and not any(workdir.is_relative_to(p) for p in places.values())
    if workdir is not None and outside and (why := mount_problem(workdir, runtime)):
        problems.append(f"verifier.workdir: {why}")
    if problems:
        raise CannotMount(f"{phase}'s verifier cannot be mounted: " + "; ".join(problems))
    return [
        Mount(workspace, places["workspace"], writable=True),
        Mount(tests, places["tests"]),
        Mount(results, places["results"], writable=True),
    ]


def read_results(phase: str, junit: bytes, results: Path | None = None) -> list[Verdict]:
    """The verdicts a command left: the JUnit XML it wrote to its pipe (``junit``) and in its
    ``results`` folder (a verifier's), else that folder's ``reward.json``, else its
    ``reward.txt``; :class:`ResultError` when there is none that reads."""
    prefix = f"{phase}/"
    verdicts: list[Verdict] = []
    read = 0
    if junit:
        try:
            verdicts += read_junit(junit, prefix=prefix, name=JUNIT_NAME)
        except JUnitError as error:  # the pipe named for JUnit must hold JUnit, one document of it
            raise ResultError(str(error)) from None
        read += 1
    for path in sorted(results.glob("*.xml")) if results is not None else []:
        _check_file(path, JUNIT_LIMIT)
        try:
            verdicts += read_junit(path, prefix=prefix)
        except NotJUnit:
            continue
        except JUnitError as error:
            raise ResultError(str(error)) from None
        read += 1
    if read:
        return verdicts
    if results is None:
        raise ResultError(f"no JUnit XML was written to {JUNIT_NAME}")
    if os.path.lexists(results / REWARD_JSON):
        return _reward_json(results / REWARD_JSON, prefix)
    if os.path.lexists(results / REWARD_TXT):
        return _reward_txt(results / REWARD_TXT, prefix)
    raise ResultError(
        f"the results folder holds no JUnit XML (*.xml), {REWARD_JSON} or {REWARD_TXT}, "
        f"and no JUnit XML was written to {JUNIT_NAME}"
    )


def with_output(verdicts: list[Verdict], output: str) -> list[Verdict]:
    """``verdicts`` with each failed reward's detail followed by the end of the command's ``output``
    (bounded): a reward is only a number, and the output is what says why it is not 1."""
    lines = output.strip().splitlines()[-_OUTPUT_LINES:]
    tail = "\n".join(lines)[-_OUTPUT_CHARS:]
    if not tail:
        return verdicts
    marker = f"/{REWARD_FILE}::"
    return [
        Verdict(v.id, v.outcome, f"{v.detail}; its output ended:\n{tail}")
        if v.outcome != "passed" and marker in v.id
        else v
        for v in verdicts
    ]


def could_not_start(returncode: int | None, junit: bytes, results: Path | None) -> bool:
    """Whether a command that left no result never started: the shell could not run it, and it
    wrote nothing at all (a verifier that wrote anything had started)."""
    if returncode not in NOT_STARTED or junit:
        return False
    return results is None or not any(results.iterdir())


def _check_file(path: Path, limit: int) -> None:
    """``path`` is a regular file of at most ``limit`` bytes (a link is not followed)."""
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode):
        raise ResultError(f"{path.name} is not a regular file (a link or a device is not a result)")
    if info.st_size > limit:
        raise ResultError(f"{path.name} has {info.st_size} bytes, more than a result may have ({limit})")


def _text(path: Path) -> str:
    _check_file(path, _REWARD_LIMIT)
    try:
        text = path.read_bytes().decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ResultError(f"{path.name} is not UTF-8 text") from None
    if not text:
        raise ResultError(f"{path.name} is empty")
    return text


def _reward(source: str, name: str, value: float, prefix: str) -> Verdict:
    if not 0 <= value <= 1:  # NaN and the infinities too
        raise ResultError(f"{source}: {name} is {value!r}, not a reward from 0 to 1")
    test_id = f"{prefix}{REWARD_FILE}::{name}"
    if value == 1:
        return Verdict(test_id, "passed")
    return Verdict(test_id, "failed", f"reward {value:g} ({source}; the test passes at 1)")


def _reward_txt(path: Path, prefix: str) -> list[Verdict]:
    text = _text(path)
    try:
        value = float(text)
    except ValueError:
        raise ResultError(f"{path.name} holds {text[:40]!r}, not a number") from None
    return [_reward(path.name, "reward", value, prefix)]


def _reward_json(path: Path, prefix: str) -> list[Verdict]:
    text = _text(path)
    try:
        data = json.loads(text)
    except ValueError as error:
        raise ResultError(f"{path.name} is not JSON: {error}") from None
    if not isinstance(data, dict):
        kind = type(data).__name__
        raise ResultError(f"{path.name} holds a {kind}, not an object of named rewards (e.g. {_EXAMPLE})")
    rewards = {
        key: value
        for key, value in data.items()
        if isinstance(value, int | float) and not isinstance(value, bool)  # Harbor ignores the rest
    }
    if not rewards:
        raise ResultError(f'{path.name} names no numeric reward (e.g. {{"reward": 1}})')
    if "" in rewards:
        raise ResultError(f"{path.name} has a reward with an empty name")
    return [_reward(path.name, name, value, prefix) for name, value in rewards.items()]

"""The hardened pytest run, from outside: its command line, and how its results are judged.

The agent's code runs inside the hidden test process (the tests import it), so the harness
assumes that code is hostile and arranges things so that the usual tricks have no effect or
are caught:

- Python starts isolated (``-I``: no ``PYTHON*`` variables, no user site, no script folder
  on ``sys.path``) from a bootstrap outside the workspace (``bootstrap.py``), which imports
  pytest and its plugins *before* the workspace is importable and appends the workspace
  after the standard library and site-packages: a ``pytest.py``, ``unittest.py``,
  ``sitecustomize.py``, ``.pth`` or ``.pyc`` in the workspace changes nothing.
- pytest runs with an empty configuration (``-c /dev/null``), its root in the hidden folder
  and no plugin autoloading: the workspace's ``conftest.py`` and settings play no part.
- The hidden tests are copied under random folder names, so their modules load under names
  the agent cannot guess; the bootstrap checks each test's code against its file.
- Canaries drawn like the hidden tests (``canaries.py``) join every run.
- Every result is streamed by the bootstrap as it happens; the JUnit XML must agree.

A run that stops before collection begins (a usage error, a challenge conftest or ini that
breaks pytest's start, pytest exits 3 or 4 there) or that is set to write no JUnit XML is
*invalid*: only the grader's side had run, so it is never the agent's zero.

Judging is fail-closed (``policy.py``): a run counts only if it started (``ready``), ended
(``exit``) with pass or fail, its stream, exit code and JUnit agree, both canaries behaved,
and the bootstrap saw nothing tampered with.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.grading.canaries import Canaries
from orchestrator.grading.junit import JUnitError, Verdict, read_junit
from orchestrator.log.verdicts import Status
from orchestrator.system.processes import Finished

__all__ = [
    "BOOTSTRAP",
    "HARNESS",
    "Judgement",
    "Stream",
    "bootstrap_argv",
    "bootstrap_settings",
    "copy_harness",
    "judge",
    "pytest_args",
    "read_stream",
]

#: The bootstrap's source, copied beside the hidden tests of every run.
BOOTSTRAP = Path(__file__).with_name("bootstrap.py")
#: The package of the process's checks on itself, copied beside the bootstrap.
SELFCHECK = Path(__file__).with_name("selfcheck")
#: Every file of the harness a test process runs: the bootstrap, and its package's modules.
HARNESS = (BOOTSTRAP, *sorted(SELFCHECK.glob("*.py")))


def copy_harness(target: Path) -> None:
    """Put the bootstrap and its package in the folder ``target``."""
    shutil.copyfile(BOOTSTRAP, target / BOOTSTRAP.name)
    (target / SELFCHECK.name).mkdir(exist_ok=True)
    for source in HARNESS[1:]:
        shutil.copyfile(source, target / SELFCHECK.name / source.name)


_EXIT_MEANING = {
    2: "interrupted",
    3: "internal error",
    4: "usage error",
    5: "no tests collected",
}


def bootstrap_settings(
    *,
    workspace: Path,
    hidden: Path,
    out: Path,
    user: tuple[int, int] | None,
    name: str = "",
    timeouts: Mapping[str, float] | None = None,
    path: Sequence[Path] = (),
) -> dict[str, Any]:
    """What the bootstrap is told: where the snapshot copy, the hidden tests and its stream
    (``stream<name>.jsonl``) are, the per-test timeout of each copied phase folder, and the
    hidden folders to import helpers from (``path``)."""
    return {
        "path": [str(folder) for folder in path],
        "workspace": str(workspace),
        "hidden": str(hidden),
        "stream": str(out / f"stream{name}.jsonl"),
        "user": list(user) if user else None,
        "timeouts": dict(timeouts or {}),
    }


def pytest_args(
    *,
    hidden: Path,
    out: Path,
    tests: Sequence[str],
    deselect: Sequence[str],
    ini: Path | None = None,
    extra: Sequence[str] = (),
    name: str = "",
) -> list[str]:
    """The hardened pytest command line; ``tests`` and ``deselect`` relative to ``hidden``.

    ``ini`` (the challenge's, copied into ``hidden``) replaces the empty configuration and
    ``extra`` (the phases' ``testing: args``) come after changeup's own options, before the
    test paths; the run's JUnit XML is ``junit<name>.xml``.
    """
    return [
        "-q",
        "--tb=short",
        "-p",
        "no:cacheprovider",
        "-c",
        str(ini) if ini is not None else os.devnull,
        f"--rootdir={hidden}",
        f"--basetemp={out / f'tmp{name}'}",  # tmp_path stays inside the run's own folder
        "--import-mode=importlib",
        # A module that will not import fails its own tests, not the run: pytest goes on.
        "--continue-on-collection-errors",
        "-o",
        "junit_family=xunit1",
        f"--junitxml={out / f'junit{name}.xml'}",
        *(f"--deselect={test}" for test in sorted(deselect)),
        *extra,
        *(str(hidden / test) for test in tests),
    ]


def bootstrap_argv(python: str, bootstrap: Path, settings: dict[str, Any], args: Sequence[str]) -> list[str]:
    """A cold hidden pytest run's command line: a fresh interpreter running the bootstrap."""
    return [python, "-I", "-B", str(bootstrap), json.dumps(settings), "--", *args]


@dataclass(slots=True)
class Stream:
    """What the bootstrap streamed: whether it started, results, collection errors, signs, exit."""

    ready: bool = False
    outcomes: dict[str, str] = field(default_factory=dict)
    collect_errors: set[str] = field(default_factory=set)
    tampering: list[str] = field(default_factory=list)
    exit: int | None = None
    #: whether collection began (the agent's code can run only from then on)
    collecting: bool = False
    #: whether pytest was set to write JUnit XML when collection began
    junit: bool = False


def read_stream(path: Path) -> Stream:
    """The stream at ``path`` (empty if the bootstrap never wrote it)."""
    stream = Stream()
    if not path.is_file():
        return stream
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            stream.tampering.append("the result stream holds a line that is not JSON")
            continue
        if not isinstance(item, dict):
            stream.tampering.append("the result stream holds a line that is not an object")
        elif "ready" in item:
            stream.ready = True
        elif "collecting" in item:
            stream.collecting = True
            stream.junit = item.get("junit") is True
        elif "exit" in item:
            stream.exit = item["exit"] if isinstance(item["exit"], int) else -1
        elif "tampering" in item:
            stream.tampering.append(str(item["tampering"])[:500])
        elif item.get("when") == "collect":
            stream.collect_errors.add(str(item.get("id")))
        elif stream.outcomes.get(str(item.get("id"))) != "failed":  # a failure in any phase sticks
            outcome = "failed" if item.get("outcome") == "failed" else str(item.get("outcome"))
            stream.outcomes[str(item.get("id"))] = outcome
    return stream


@dataclass(frozen=True, slots=True)
class Judgement:
    """A run's status, its hidden verdicts (canaries removed) and, when not clean, why."""

    status: Status
    verdicts: list[Verdict]
    detail: str = ""


def judge(finished: Finished, stream: Stream, junit: Path, canaries: Canaries, limit: float) -> Judgement:
    """Judge one pytest run from its exit, its stream, its JUnit XML and its canaries."""
    code = finished.returncode
    if finished.timed_out:
        return Judgement("timeout", [], f"hidden tests timed out after {limit:g}s")
    if not stream.ready:
        why = f"the grader could not start (exit {code}): {last_lines(finished.output)}"
        return Judgement("invalid", [], why)
    if not stream.collecting:  # stopped before any test file was imported: the agent's code never ran
        why = f"pytest stopped before collecting the hidden tests (exit {code})"
        why = f"{why}: {last_lines(finished.output)}"
        return Judgement("invalid", [], why)
    if not stream.junit:
        why = "pytest was set not to write JUnit XML (by the challenge's conftest, ini or options)"
        return Judgement("invalid", [], why)
    if stream.exit is None:
        why = f"the test process ended (exit {code}) without finishing its results"
        return Judgement("tampered", [], f"{why}: {last_lines(finished.output, 4)}")
    if stream.exit != code:
        return Judgement("tampered", [], f"pytest reported exit {stream.exit} but the process exited {code}")
    if stream.tampering:
        return Judgement("tampered", [], "; ".join(dict.fromkeys(stream.tampering)))
    if code not in (0, 1):
        meaning = _EXIT_MEANING.get(code, "abnormal end") if code is not None else "killed"
        return Judgement("tampered", [], f"pytest exited {code} ({meaning}), neither pass nor fail")
    try:
        verdicts = read_junit(junit)
    except JUnitError as error:
        return Judgement("tampered", [], f"pytest finished but its results are unreadable: {error}")
    signs = cross_check(verdicts, stream, code, canaries)
    if signs:
        return Judgement("tampered", [], "; ".join(signs))
    ours = set(canaries.ids())
    return Judgement("ok", [v for v in verdicts if v.id not in ours])


def cross_check(verdicts: list[Verdict], stream: Stream, code: int, canaries: Canaries) -> list[str]:
    """Every sign that the run lied: canaries with the wrong verdict, JUnit against the stream."""
    signs: list[str] = []
    by_id = {v.id: v for v in verdicts}
    passing, failing = by_id.get(canaries.passing), by_id.get(canaries.failing)
    if passing is None:
        signs.append("a canary test is missing from the results")
    elif passing.outcome != "passed":
        signs.append(f"the canary that must pass did not ({passing.outcome})")
    if failing is None:
        if canaries.file_of(canaries.failing) not in stream.collect_errors:
            signs.append("a canary test is missing from the results")
    elif failing.outcome == "passed":
        signs.append("the canary that must fail passed: results were forced")
    if code == 0:
        signs.append("pytest exited 0 although a canary always fails")
    for verdict in verdicts:
        seen = stream.outcomes.get(verdict.id)
        if seen is None and verdict.outcome == "passed":
            signs.append(f"{verdict.id} passed in the JUnit XML but never ran")
        elif seen is not None and (seen == "passed") != (verdict.outcome == "passed"):
            signs.append(f"{verdict.id}: the JUnit XML says {verdict.outcome}, the run said {seen}")
    return signs


def last_lines(output: str, count: int = 12) -> str:
    """The end of a process's output, for a message."""
    return "\n".join(output.strip().splitlines()[-count:])

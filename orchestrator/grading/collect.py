"""Case-level listing of a challenge's hidden pytest tests, by collecting them in the grading environment.

``pytest --collect-only`` through the hidden-run bootstrap, with the phase's own options (its
``testing: args``, ``{current}`` the latest phase collected; the ini, the support folder above
the tests, the folders importable as in a real run), so the ids are exactly those a real run
reports: parametrized cases included (``phase1/test_x.py::test_y[case-3]``), each with the
names of its markers. The tests import a workspace, which the caller gives: the starter, or the
starter with the reference solution of the phases so far applied, so that modules importing the
solution collect (:func:`listing`, what validation, calibration and the runner name tests by).

Collection runs the challenge author's code only (hidden tests, support folder, the given
workspace), never an agent's, so it runs in a plain subprocess, not in the sandbox. A listing
is cached under the changeup cache by a digest of everything that can change it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.challenge.model import Challenge, Phase, challenge_digest
from orchestrator.challenge.solutions import lay_reference
from orchestrator.challenge.testids import hidden_files
from orchestrator.grading.harness import (
    BOOTSTRAP,
    HARNESS,
    bootstrap_argv,
    bootstrap_settings,
    copy_harness,
    pytest_args,
)
from orchestrator.grading.seal import INI, support_files
from orchestrator.system.venvs import Environment, cache_root, seal_of

__all__ = ["Collection", "CollectionError", "collect", "listing"]

#: Bumped when the listing's shape or the way it is made changes: old cache entries are ignored.
_VERSION = 2


class CollectionError(RuntimeError):
    """Collection could not run at all (pytest would not start); the message says why."""


@dataclass(frozen=True, slots=True)
class Collection:
    """Per pytest phase, each collected test id with its markers; and what would not collect."""

    tests: Mapping[str, Mapping[str, frozenset[str]]]
    #: phase → ``file: error`` of each hidden test file that failed to import
    errors: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def ids(self, phase: str) -> list[str]:
        """The test ids of ``phase``, in collection order."""
        return list(self.tests.get(phase, {}))


def collect(
    challenge: Challenge, environment: Environment, workspace: Path, phases: Sequence[str] | None = None
) -> Collection:
    """Collect the pytest ``phases`` (default: all) of ``challenge`` against ``workspace``.

    Raises :class:`CollectionError` when pytest itself cannot start (a bad option, a broken
    ini or support ``conftest.py``): the same failure a real run would call invalid.
    """
    chosen = [p for p in challenge.phases if p.command is None and (phases is None or p.id in phases)]
    key = _key(challenge, environment, workspace, chosen)
    cached = cache_root() / "collect" / f"{key}.json"
    if cached.is_file():
        return _decode(json.loads(cached.read_text(encoding="utf-8")))
    with tempfile.TemporaryDirectory(prefix="changeup-collect-") as scratch:
        collection = _collect(challenge, environment, workspace, chosen, Path(scratch))
    cached.parent.mkdir(parents=True, exist_ok=True)
    # A name of its own per writer: calibration collects the same key from several threads of
    # one process at once, and a shared ``<pid>.tmp`` was renamed away under the other.
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=cached.parent, prefix=f"{key}.", suffix=".tmp", delete=False
    ) as partial:
        partial.write(json.dumps(_encode(collection)))
    os.replace(partial.name, cached)
    return collection


def listing(challenge: Challenge, environment: Environment) -> Collection:
    """Every pytest phase of ``challenge``, each collected as the reference reaches it.

    Each phase's hidden tests are collected against the starter with the reference solution
    of the phases up to and including it laid over (as the scripted agent lays them), so that
    tests importing what the phase asks for collect; without a reference, against the plain
    starter. Raises :class:`CollectionError` as :func:`collect` does.
    """
    tests: dict[str, Mapping[str, frozenset[str]]] = {}
    errors: dict[str, Sequence[str]] = {}
    with tempfile.TemporaryDirectory(prefix="changeup-listing-") as scratch:
        workspace = Path(scratch) / "workspace"
        shutil.copytree(challenge.workspace, workspace, symlinks=True)
        for phase in challenge.phases:
            lay_reference(challenge, [phase.id], workspace)
            if phase.command is not None:
                continue
            collection = collect(challenge, environment, workspace, [phase.id])
            tests[phase.id] = collection.tests.get(phase.id, {})
            if collection.errors.get(phase.id):
                errors[phase.id] = collection.errors[phase.id]
    return Collection(tests, errors)


def _collect(
    challenge: Challenge, environment: Environment, workspace: Path, chosen: list[Phase], scratch: Path
) -> Collection:
    hidden, out = scratch / "hidden", scratch / "out"
    out.mkdir(parents=True)
    for name, data in support_files(challenge):
        _write(hidden / name, data)
    for phase in chosen:
        for name, data in hidden_files(phase.tests):
            _write(hidden / phase.id / name, data)
    copy_harness(scratch)
    ini = hidden / INI if challenge.model.testing.ini is not None else None
    tests: dict[str, dict[str, frozenset[str]]] = {p.id: {} for p in chosen}
    errors: dict[str, list[str]] = {}
    # As a run with every chosen phase unlocked: {current} is the latest of them.
    current = challenge.current([p.id for p in chosen])
    batches: dict[tuple[str, ...], list[Phase]] = {}
    for phase in chosen:  # one pytest process per set of arguments, as a real run has
        batches.setdefault(phase.arguments(current), []).append(phase)
    for number, (arguments, batch) in enumerate(batches.items(), 1):
        name = f"-{number}"
        settings = bootstrap_settings(
            workspace=workspace,
            hidden=hidden,
            out=out,
            user=None,
            name=name,
            path=[hidden, *(hidden / p.id for p in batch)],
        )
        settings["collect"] = True
        args = pytest_args(
            hidden=hidden,
            out=out,
            tests=[p.id for p in batch],
            deselect=(),
            ini=ini,
            extra=[*arguments, "--collect-only"],
            name=name,
        )
        finished = subprocess.run(
            bootstrap_argv(environment.python, scratch / BOOTSTRAP.name, settings, args),
            cwd=workspace,
            env=_env(environment, out),
            capture_output=True,
            text=True,
            timeout=challenge.model.limits.test_run,
            check=False,
        )
        started = False
        stream = out / f"stream{name}.jsonl"
        for line in stream.read_text(encoding="utf-8").splitlines() if stream.is_file() else ():
            record = json.loads(line)
            started = started or "collecting" in record
            if "collected" in record:
                phase_id = record["collected"].split("/", 1)[0]
                tests.setdefault(phase_id, {})[record["collected"]] = frozenset(record["markers"])
            elif record.get("when") == "collect" and record.get("outcome") == "failed":
                phase_id = record["id"].split("/", 1)[0]
                reason = record.get("reason") or "would not import"
                errors.setdefault(phase_id, []).append(f"{record['id'].partition('/')[2]}: {reason}")
        if not started:
            said = (finished.stderr or finished.stdout).strip().splitlines()[-5:]
            phases = ", ".join(p.id for p in batch)
            raise CollectionError(
                f"pytest could not start to collect the tests of {phases} (exit {finished.returncode}): "
                + (" | ".join(said) or "no output")
            )
    return Collection(tests, errors)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _env(environment: Environment, out: Path) -> dict[str, str]:
    return {
        "PATH": f"{environment.bin}{os.pathsep}/usr/bin:/bin",
        "HOME": str(out),
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "TMPDIR": str(out),
    }


def _key(challenge: Challenge, environment: Environment, workspace: Path, chosen: list[Phase]) -> str:
    identity = {
        "version": _VERSION,
        "bootstrap": [hashlib.sha256(source.read_bytes()).hexdigest() for source in HARNESS],
        "challenge": challenge.digest,
        "workspace": challenge_digest(workspace),
        "environment": [str(environment.prefix), seal_of(environment.prefix)],
        "phases": [[p.id, list(p.args)] for p in chosen],
    }
    return hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:24]


def _encode(collection: Collection) -> dict[str, object]:
    return {
        "tests": {p: {t: sorted(m) for t, m in ids.items()} for p, ids in collection.tests.items()},
        "errors": {p: list(e) for p, e in collection.errors.items()},
    }


def _decode(data: dict[str, dict[str, object]]) -> Collection:
    tests = {p: {t: frozenset(m) for t, m in ids.items()} for p, ids in data["tests"].items()}  # type: ignore[attr-defined]
    return Collection(tests, {p: list(e) for p, e in data["errors"].items()})  # type: ignore[call-overload]

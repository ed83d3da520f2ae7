"""Tamper evidence: seals of the hidden tests and the grading environment.

When a phase unlocks, the session records a seal — sha256 of every file of the phase's
hidden tests, and a digest of the environment that will grade them (interpreter, version,
installed distributions). At grading the seals are taken again; any difference means
something changed what grades the agent during the run, and the grading is marked
``tampered``.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

from orchestrator.challenge import Phase

__all__ = ["broken_seals", "environment_digest", "seal_phase"]


def _files(folder: Path) -> dict[str, str]:
    if not folder.is_dir():
        return {}
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def environment_digest(python: str) -> str:
    """sha256 over the interpreter's path and its installed distributions (names and versions)."""
    digest = hashlib.sha256(python.encode())
    root = Path(python).resolve().parent.parent if python != sys.executable else Path(sys.prefix)
    for info in sorted(root.glob("lib/python*/site-packages/*.dist-info")):
        digest.update(info.name.encode() + b"\0")
        record = info / "RECORD"
        if record.is_file():
            digest.update(hashlib.sha256(record.read_bytes()).digest())
    return digest.hexdigest()


def seal_phase(phase: Phase, python: str) -> dict[str, Any]:
    """The seal of one phase: its hidden files' hashes and the grading environment's digest."""
    return {"phase": phase.id, "files": _files(phase.tests), "environment": environment_digest(python)}


def broken_seals(seals: list[dict[str, Any]], phases: dict[str, Phase], python: str) -> list[str]:
    """What no longer matches its seal, in words; empty when everything is as sealed."""
    problems = []
    environment = environment_digest(python)
    for seal in seals:
        now = _files(phases[seal["phase"]].tests)
        then = seal["files"]
        for name in sorted(set(then) | set(now)):
            if then.get(name) != now.get(name):
                change = "added" if name not in then else ("removed" if name not in now else "changed")
                problems.append(f"hidden test file {seal['phase']}/{name} {change} since it was sealed")
        if seal["environment"] != environment:
            problems.append(f"the grading environment changed since {seal['phase']} was sealed")
    return sorted(set(problems))

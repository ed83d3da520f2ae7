"""Scope findings: files the agent changed outside the challenge's ``allowed_paths``.

A challenge names the files an agent is expected to change; a change anywhere else is a
finding, reported and never scored (a README touched on the way is not a failure, but a
reader comparing agents wants to see it). Computed once after the final grading, from the
baseline snapshot to the final one, and logged as ``session.scope`` so reports are built
from the log alone.
"""

from __future__ import annotations

from typing import Any

from orchestrator.challenge.model import Challenge
from orchestrator.seams import Repository
from triggers.globs import compile_glob

__all__ = ["outside", "scope_record"]


def outside(allowed: list[str], changes: list[tuple[str, str]]) -> list[dict[str, str]]:
    """The ``changes`` (path, change) whose path matches none of the ``allowed`` globs."""
    patterns = [compile_glob(glob) for glob in allowed]
    return [
        {"path": path, "change": change}
        for path, change in changes
        if not any(pattern.match(path) for pattern in patterns)
    ]


async def scope_record(
    challenge: Challenge, repo: Repository, records: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The ``session.scope`` record of a run, or None when the challenge declares no scope.

    The final tree is the one the final grading tested (else the last test run's); a run
    with neither has nothing to compare and gets no record.
    """
    allowed = challenge.model.allowed_paths
    if not allowed:
        return None
    created = next((r for r in records if r["kind"] == "workspace.created"), None)
    tested = [r for r in records if r["kind"] in ("tests.result", "session.graded") and r.get("snapshot")]
    if created is None or not tested:
        return None
    final = tested[-1]["snapshot"]
    changes = await repo.changes(created["baseline"], final)
    return {
        "kind": "session.scope",
        "allowed_paths": list(allowed),
        "changed": len(changes),
        "findings": outside(allowed, changes),
    }

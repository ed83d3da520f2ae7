"""Scope findings: files the agent changed outside the challenge's ``allowed_paths``.

A challenge names the files an agent is expected to change; a change anywhere else is a
finding, reported and never scored (a README touched on the way is not a failure, but a
reader comparing agents wants to see it). Computed once after the final grading, from the
baseline snapshot to the final one, and logged as ``session.scope`` so reports are built
from the log alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from orchestrator.challenge.model import Challenge
from orchestrator.log.records import Entry, ScopeFinding, SessionScope, WorkspaceCreated, graded_like
from orchestrator.seams import Repository
from triggers.globs import compile_glob

__all__ = ["outside", "scope_record"]


def outside(allowed: Sequence[str], changes: list[tuple[str, str]]) -> list[ScopeFinding]:
    """The ``changes`` (path, change) whose path matches none of the ``allowed`` globs."""
    patterns = [compile_glob(glob) for glob in allowed]
    return [
        ScopeFinding(path=path, change=change)  # type: ignore[typeddict-item]
        for path, change in changes
        if not any(pattern.match(path) for pattern in patterns)
    ]


async def scope_record(
    challenge: Challenge, repo: Repository, entries: Sequence[Entry]
) -> SessionScope | None:
    """The ``session.scope`` record of a run, or None when the challenge declares no scope.

    The final tree is the one the final grading tested (else the last test run's); a run
    with neither has nothing to compare and gets no record.
    """
    allowed = challenge.model.allowed_paths
    if not allowed:
        return None
    created = next((e.record for e in entries if isinstance(e.record, WorkspaceCreated)), None)
    tested = [r.snapshot for e in entries if (r := graded_like(e.record)) is not None and r.snapshot]
    if created is None or not tested:
        return None
    changes = await repo.changes(created.baseline, tested[-1])
    return SessionScope(tuple(allowed), len(changes), tuple(outside(allowed, changes)))

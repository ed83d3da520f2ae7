"""The attempts log and what it means for a resumed matrix: which cells are done, which run next.

``RESULTS/attempts.jsonl`` (a :class:`~orchestrator.matrix.journal.Journal`) holds two record
kinds. ``started`` is written, and on disk, before an attempt's session begins: the attempt's
id, its cell, its number within the cell, its run folder, its agent spec, why it runs
(``first``; ``interrupted``: the attempt before it never ended; ``invalid``: a retry of an
invalid one) and which attempt it follows (``retry_of``). ``finished`` is written once the
session's report is in: its status (``completed``, ``invalid``, ``crashed``, ``timed out`` or
``interrupted``), whether it was a full success, and a detail.

A ``crashed`` or ``timed out`` attempt is a trial that failed: changeup crashed, or the session
was still running at its wall-time limit, after its agent came into play. That is a bug to fix
(``crashed``) or a session that would not end (``timed out``), and until fixed it counts against
the trial: it is never retried (a retry would give an agent that crashes the harness whenever
it is failing another draw) and never left out of a rate. ``invalid`` (the environment failed,
nothing is said of the agent) is kept apart, and retried as ``retry_invalid`` says.

On resume, an attempt that started and never finished was interrupted: that is recorded
(a ``finished`` record with status ``interrupted``), and its cell runs again. A cell is done
when its last attempt completed, crashed or timed out, or was invalid with its retries used
up. Nothing is erased: every attempt and its run folder stay.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from orchestrator.log.cells import Cell

# Which statuses count, fail or are kept apart: the trial rows of compare.json know them too.
from orchestrator.log.comparison import COUNTED, FAILED, NOT_VALID, AttemptRow
from orchestrator.log.journal import JournalError
from orchestrator.matrix.journal import Journal

__all__ = [
    "ATTEMPTS",
    "COUNTED",
    "FAILED",
    "NOT_VALID",
    "Attempt",
    "AttemptsLog",
    "Next",
    "Status",
    "counted",
    "next_attempt",
]

ATTEMPTS = "attempts.jsonl"
Status = Literal["completed", "invalid", "crashed", "timed out", "interrupted"]
Reason = Literal["first", "interrupted", "invalid"]
_STOPPED = "no outcome was recorded: the changeup process running it stopped before it ended"


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


@dataclass(frozen=True, slots=True)
class Attempt:
    """One attempt, as the log tells it; ``status`` is None while it has no outcome."""

    id: int
    cell: Cell
    number: int
    run: str
    agent: str
    reason: Reason
    retry_of: int | None
    started_at: str
    status: Status | None = None
    full_success: bool | None = None
    detail: str = ""
    finished_at: str | None = None
    seconds: float | None = None

    def row(self) -> AttemptRow:
        """As the comparison's provenance shows it."""
        return AttemptRow(
            attempt=self.id,
            challenge=self.cell.challenge,
            agent=self.cell.agent,
            mode=self.cell.mode,
            trial=self.cell.trial,
            number=self.number,
            run=self.run,
            agent_spec=self.agent,
            reason=self.reason,
            retry_of=self.retry_of,
            status=self.status,
            full_success=self.full_success,
            detail=self.detail,
            started_at=self.started_at,
            finished_at=self.finished_at,
            elapsed_seconds=self.seconds,
        )


@dataclass(frozen=True, slots=True)
class Next:
    """The attempt a cell needs next."""

    cell: Cell
    number: int
    reason: Reason
    retry_of: int | None


class AttemptsLog:
    """``RESULTS/attempts.jsonl``: read on opening, appended to as attempts start and end."""

    def __init__(self, results: Path, *, writer: bool = True) -> None:
        """Read the log of ``results`` (a ``writer``, the driver, creates it and appends to it)."""
        self.journal = Journal(results / ATTEMPTS, "changeup-attempts", 1, writer=writer)
        self.attempts: dict[int, Attempt] = {}
        for number, record in enumerate(self.journal.records, 2):
            try:
                self._fold(record)
            except (KeyError, TypeError, ValueError) as error:
                raise JournalError(
                    f"{self.journal.path}:{number}: not an attempt record ({error!r})"
                ) from None

    def _fold(self, record: dict[str, Any]) -> None:
        if record["event"] == "started":
            attempt = Attempt(
                id=int(record["attempt"]),
                cell=Cell.of(record["cell"]),
                number=int(record["number"]),
                run=str(record["run"]),
                agent=str(record["agent"]),
                reason=record["reason"],
                retry_of=record["retry_of"],
                started_at=str(record["at"]),
            )
            self.attempts[attempt.id] = attempt
        elif record["event"] == "finished":
            before = self.attempts[int(record["attempt"])]
            self.attempts[before.id] = replace(
                before,
                status=record["status"],
                full_success=record["full_success"],
                detail=str(record["detail"]),
                finished_at=str(record["at"]),
                seconds=record["seconds"],
            )
        else:
            raise ValueError(f"unknown event {record['event']!r}")

    def history(self, cell: Cell) -> list[Attempt]:
        """The attempts of ``cell``, oldest first."""
        return [a for a in self.attempts.values() if a.cell == cell]

    def start(self, order: Next, run: str, agent: str) -> Attempt:
        """Record that attempt ``order`` starts now, in the run folder ``run`` (relative to RESULTS)."""
        number = max(self.attempts, default=0) + 1
        record = {
            "event": "started",
            "attempt": number,
            "cell": order.cell.key(),
            "number": order.number,
            "run": run,
            "agent": agent,
            "reason": order.reason,
            "retry_of": order.retry_of,
            "at": _now(),
        }
        self.journal.append(record)
        self._fold(record)
        return self.attempts[number]

    def finish(
        self,
        attempt: Attempt,
        status: Status,
        *,
        full_success: bool | None,
        detail: str,
        seconds: float | None,
    ) -> Attempt:
        """Record the outcome of ``attempt``."""
        record = {
            "event": "finished",
            "attempt": attempt.id,
            "status": status,
            "full_success": full_success,
            "detail": detail,
            "seconds": None if seconds is None else round(seconds, 3),
            "at": _now(),
        }
        self.journal.append(record)
        self._fold(record)
        return self.attempts[attempt.id]

    def close_unfinished(self) -> list[Attempt]:
        """Record every attempt without an outcome as interrupted (its process is gone); returns them."""
        stopped = [a for a in self.attempts.values() if a.status is None]
        return [
            self.finish(a, "interrupted", full_success=None, detail=_STOPPED, seconds=None) for a in stopped
        ]


def next_attempt(history: list[Attempt], cell: Cell, retry_invalid: int) -> Next | None:
    """What ``cell`` needs next, given its attempts so far; None when it is done."""
    if not history:
        return Next(cell, 1, "first", None)
    last = history[-1]
    if last.status in (None, "interrupted"):
        return Next(cell, last.number + 1, "interrupted", last.id)
    if last.status in NOT_VALID and sum(a.reason == "invalid" for a in history) < retry_invalid:
        return Next(cell, last.number + 1, "invalid", last.id)
    return None


def counted(history: list[Attempt]) -> Attempt | None:
    """The attempt that stands for a cell: its last one that completed, crashed or timed out,
    else its last invalid one (a trial kept apart as invalid); None when none has an outcome yet."""
    for wanted in (COUNTED, NOT_VALID):
        found = [a for a in history if a.status in wanted]
        if found:
            return found[-1]
    return None

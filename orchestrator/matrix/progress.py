"""Where a matrix run stands: cells done, running, failed and invalid, pass rates so far, time left.

The driver keeps one :class:`Tally` up to date as attempts start and end; the progress
display (``present/matrix_progress.py``) draws it. Pass rates are the runs' own full
successes, before any review, over the trials that count: a crashed or timed-out trial is a
failure among them (``attempts.py``).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from orchestrator.matrix.attempts import COUNTED, FAILED, NOT_VALID

__all__ = ["AgentTally", "Tally"]


@dataclass(slots=True)
class AgentTally:
    """One agent's finished trials so far."""

    successes: int = 0
    #: Trials that count: completed, crashed or timed out.
    valid: int = 0


@dataclass(slots=True)
class Tally:
    """A matrix run's progress."""

    cells: int
    capacity: int
    #: Cells that were done before this run started (a resumed matrix).
    done_before: int = 0
    done: int = 0
    running: int = 0
    #: Trials that count and were not a full success (crashed and timed-out ones among them).
    failed: int = 0
    #: Of those, trials that crashed or timed out.
    crashed: int = 0
    #: Attempts whose run was invalid (retried or not).
    invalid: int = 0
    agents: dict[str, AgentTally] = field(default_factory=dict)
    #: Seconds each attempt finished in this run took.
    durations: list[float] = field(default_factory=list)

    @property
    def queued(self) -> int:
        """Cells not done and not running."""
        return self.cells - self.done_before - self.done - self.running

    def time_left(self) -> float | None:
        """Seconds until every cell is done, at the median pace so far (None before any attempt ended).

        The cells still to run (those running count half) are run ``capacity`` at a time."""
        if not self.durations:
            return None
        waves = math.ceil((self.queued + self.running / 2) / self.capacity)
        return waves * statistics.median(self.durations)

    def finished(
        self, agent: str, status: str, full_success: bool | None, seconds: float, cell_done: bool
    ) -> None:
        """Count an attempt that ended (``cell_done``: it was its cell's last)."""
        self.running -= 1
        self.durations.append(seconds)
        tally = self.agents.setdefault(agent, AgentTally())
        if status in COUNTED:
            tally.valid += 1
            tally.successes += bool(full_success)
            self.failed += not full_success
            self.crashed += status in FAILED
        elif status in NOT_VALID:
            self.invalid += 1
        if cell_done:
            self.done += 1

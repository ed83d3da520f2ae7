"""A hidden test run's verdicts as data: how it ended, and what each phase's tests said.

What the statuses mean, and which count, is the trust boundary's one policy
(``grading/policy.py``); a run of the hidden tests (``grading/testrun.py``) makes a
:class:`TestRun`, and the session (through the ``TestRunner`` seam) reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from orchestrator.log.records import Effect
from triggers import PhaseResult

__all__ = ["STATUSES", "Status", "TestRun"]

Status = Literal["ok", "timeout", "tampered", "invalid", "refused", "over_limits"]
STATUSES: tuple[Status, ...] = ("ok", "timeout", "tampered", "invalid", "refused", "over_limits")


@dataclass(frozen=True, slots=True)
class TestRun:
    """The verdicts of one run of the hidden tests on one snapshot (void unless ``ok``)."""

    __test__ = False

    status: Status
    phases: tuple[PhaseResult, ...]
    detail: str = ""
    seconds: float = 0.0
    #: the prohibited effects the run attempted (``effects.py``); None: not watched
    effects: tuple[Effect, ...] | None = None

"""The report's ``oracle`` part: what the test-pass triggers told the agent about the hidden
tests, and whether its pattern looks like probing them (docs/report.md#oracle). A finding with
its evidence, never scored."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Oracle", "ProbingStep", "ProbingWindow"]


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ProbingStep(BaseModel):
    """One observed snapshot: when its verdict arrived, and the lines it changed since the
    observation before it (added plus removed, from shadow.git; null: not known)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    snapshot: str
    t: float
    lines: int | None


class ProbingWindow(_Part):
    """The observations from one test-pass firing (or the start) to the next firing, whose
    verdict made it fire: the small steps among them, and snapshots after the firing that put
    back a tree seen in the window (an edit reverted around the firing)."""

    trigger: str
    fired_at: float
    observations: int
    small_steps: int
    steps: list[ProbingStep]
    reverted: list[ProbingStep]
    probing: bool


class Oracle(_Part):
    """Per session: the test-pass triggers, the observations (test runs whose verdict could
    change whether one of them fires), per trigger, and the probing finding with its windows."""

    triggers: list[str]
    observations: int
    per_trigger: dict[str, int]
    #: Whether line counts were read from shadow.git (without them no window counts small steps).
    lines_known: bool
    probing: bool
    windows: list[ProbingWindow]

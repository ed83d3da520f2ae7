"""The comparison's adaptation figures: per trial from its report, per cell and per agent summed
up (docs/compare.md#adaptation).

A trial's figures are its report's ``adaptation`` part, a row per message; a cell's and an
agent's are the medians of the delays over the messages that reached each event (with how many
did, of how many messages), and the stale changes and regressions summed. Only valid trials
that completed have a report, so only they count.
"""

from __future__ import annotations

import statistics as stats
from collections.abc import Sequence

from orchestrator.log.comparison import AdaptationFigures, ReportedFigure, TrialAdaptation, TrialRow
from orchestrator.log.report import Report

__all__ = ["adaptation_figures", "trial_adaptation"]


def trial_adaptation(report: Report) -> list[TrialAdaptation]:
    """The figures of each message in ``report``."""
    return [
        TrialAdaptation(
            trigger=row.trigger,
            first_change_seconds=row.first_change.seconds,
            first_passing_test_seconds=row.first_passing_test.seconds,
            passing_seconds=row.passing.seconds,
            stale_changes=row.stale.changes if row.stale is not None else None,
            regressions=len(row.regressions),
        )
        for row in report.adaptation
    ]


def _median(values: list[float | None]) -> ReportedFigure:
    """The median of the delays that came, how many came, of how many messages."""
    known = [v for v in values if v is not None]
    return ReportedFigure(
        median=round(stats.median(known), 4) if known else None, reported=len(known), of=len(values)
    )


def _figures(challenge: str | None, agent: str, mode: str, trials: Sequence[TrialRow]) -> AdaptationFigures:
    rows = [row for trial in trials if trial.counted for row in trial.adaptation]
    stale = [row.stale_changes for row in rows if row.stale_changes is not None]
    return AdaptationFigures(
        challenge=challenge,
        agent=agent,
        mode=mode,
        messages=len(rows),
        first_change_seconds=_median([row.first_change_seconds for row in rows]),
        first_passing_test_seconds=_median([row.first_passing_test_seconds for row in rows]),
        passing_seconds=_median([row.passing_seconds for row in rows]),
        stale_changes=sum(stale),
        stale_measured=len(stale),
        regressions=sum(row.regressions for row in rows),
    )


def adaptation_figures(
    trials: Sequence[TrialRow], challenges: Sequence[str], agents: Sequence[str], modes: Sequence[str]
) -> list[AdaptationFigures]:
    """Per mode and agent: its figures over every challenge (``challenge`` null), then per
    challenge; only where some trial had a message to adapt to."""
    out: list[AdaptationFigures] = []
    for mode in modes:
        for agent in agents:
            mine = [t for t in trials if (t.agent, t.mode) == (agent, mode)]
            for challenge in (None, *challenges):
                cell = [t for t in mine if challenge is None or t.challenge == challenge]
                if any(t.counted and t.adaptation for t in cell):
                    out.append(_figures(challenge, agent, mode, cell))
    return out

"""How many of each agent's trials were flagged as probing the test-pass triggers
(docs/report.md#oracle): a finding counted with its denominator, never scored or in a rate."""

from __future__ import annotations

from collections.abc import Sequence

from orchestrator.log.comparison import ProbingCount, TrialRow

__all__ = ["probing_counts"]


def probing_counts(
    trials: Sequence[TrialRow], agents: Sequence[str], modes: Sequence[str]
) -> list[ProbingCount]:
    """Per mode and agent (the matrix's order): its valid trials assessed, those flagged, and which."""
    counts = []
    for mode in modes:
        for agent in agents:
            assessed = [
                t
                for t in trials
                if (t.agent, t.mode) == (agent, mode) and t.counted and t.probing is not None
            ]
            flagged = [t.label for t in assessed if t.probing]
            counts.append(
                ProbingCount(
                    agent=agent, mode=mode, flagged=len(flagged), assessed=len(assessed), trials=flagged
                )
            )
    return counts

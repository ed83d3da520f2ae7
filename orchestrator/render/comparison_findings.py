"""The comparison's sections on what a score may not mean: the imported challenges (their
source is public, so a model may have seen the solution) and the trials flagged as probing the
test-pass triggers, in the terminal, ``compare.md`` and ``compare.html`` alike, as plain lines
each renderer makes inert its own way.
"""

from __future__ import annotations

from orchestrator.log.comparison import Comparison

__all__ = ["IMPORTED_TITLE", "PROBING_TITLE", "imported_lines", "probing_lines"]

#: The section's heading.
IMPORTED_TITLE = "Imported challenges"
#: The probing section's heading.
PROBING_TITLE = "Probing the triggers"


def imported_lines(comparison: Comparison) -> list[str]:
    """Each imported challenge with where its source is public; empty when none is imported."""
    imported = [c for c in comparison.matrix.challenges if c.imported_from]
    if not imported:
        return []
    return [
        f"{len(imported)} of {len(comparison.matrix.challenges)} challenge(s) imported from a public "
        "source: a model trained on it may have seen the solution, so read their results apart",
        *(f"{c.id} (imported): {c.imported_from}" for c in imported),
    ]


def probing_lines(comparison: Comparison) -> list[str]:
    """Each agent's trials flagged as probing the test-pass triggers, with the denominator; empty
    when no trial could be assessed (no challenge has a test-pass trigger)."""
    counts = [c for c in comparison.probing if c.assessed]
    if not counts:
        return []
    return [
        f"{c.agent} ({c.mode}): {c.flagged}/{c.assessed} trial(s) flagged as probing"
        + (f": {', '.join(c.trials)}" if c.trials else "")
        for c in counts
    ] + ["a finding with its evidence in each run's report, never scored (docs/report.md#oracle)"]

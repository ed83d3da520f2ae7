"""Budget-exhausted trials in ``compare``: scored as they stand, flagged per trial, counted per cell
and per agent, and said in compare.md and on the terminal."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console

from orchestrator.log.cells import SessionOrder
from orchestrator.matrix import build_comparison
from orchestrator.render.comparison_text import comparison_markdown, print_comparison
from tests.matrix.samples import report, results_of


def spends_it_once(order: SessionOrder) -> dict[str, Any]:
    """Every trial ends agent_done but v7's trial 2, whose model budget ran out (still a full success)."""
    outcome = report(order.cell.challenge)
    if order.cell.agent == "v7" and order.cell.trial == 2:
        outcome["run"]["end_reason"] = "budget_exhausted"
        outcome["run"]["end_detail"] = "the session's budget of 3 model requests is spent"
    return outcome


def test_a_budget_exhausted_trial_is_scored_and_counted_apart(tmp_path: Path) -> None:
    """v7's cell and agent count one budget-exhausted trial; its score and success stand."""
    results, _ = results_of(tmp_path, spends_it_once)
    comparison = build_comparison(results)
    spent = [(t.agent, t.trial) for t in comparison.trials if t.budget_exhausted]
    assert spent == [("v7", 2)]
    trial = next(t for t in comparison.trials if (t.agent, t.trial) == ("v7", 2))
    assert trial.counted  # not a failure of grading: scored as it stands
    assert trial.full_success
    cells = {c.agent: c for c in comparison.cells}
    assert (cells["v6"].budget_exhausted, cells["v7"].budget_exhausted) == (0, 1)
    agents = {a.agent: a for a in comparison.agents}
    assert (agents["v6"].budget_exhausted, agents["v7"].budget_exhausted) == (0, 1)
    markdown = comparison_markdown(comparison)
    assert "(1 budget exhausted)" in markdown
    assert "budget exhausted in 1 valid trial(s)" in markdown
    out = io.StringIO()
    print_comparison(comparison, Console(file=out, width=400))
    assert "budget exhausted in 1 valid trial(s)" in out.getvalue()

"""Each agent's cost in the comparison: per full success, and the cost-score frontier."""

from __future__ import annotations

import pytest

from orchestrator.log.comparison import TrialRow
from orchestrator.matrix.costs import agent_costs, on_frontier
from orchestrator.render.comparison_costs import cost_html


def row(
    agent: str, trial: int, cost: float | None, score: float | None, *, status: str = "completed"
) -> TrialRow:
    """A valid trial of ``agent`` (unless ``status`` says otherwise) with its cost and score."""
    return TrialRow(
        challenge="c",
        agent=agent,
        mode="evolving",
        trial=trial,
        status=status,
        attempt=1,
        run=f"runs/{agent}-{trial}",
        agent_spec="scripted",
        full_success=score == 1.0,
        cost_usd=cost,
        cost_source=None if status != "completed" else "gateway",
        score=score,
    )


def test_cost_per_full_success_is_given_only_when_every_valid_trials_cost_is_known() -> None:
    """An invalid trial is left out; a crashed one (no cost) withholds the totals; no success, none."""
    trials = [
        row("cheap", 1, 0.5, 1.0),
        row("cheap", 2, 1.5, 0.5),
        row("cheap", 3, None, None, status="invalid"),
        row("crashy", 1, 2.0, 1.0),
        row("crashy", 2, None, None, status="crashed"),
        row("futile", 1, 0.25, 0.0),
    ]
    cheap, crashy, futile = agent_costs(trials, ["cheap", "crashy", "futile"], ["evolving"])
    assert (cheap.valid, cheap.cost_known, cheap.from_gateway, cheap.full_successes) == (2, 2, 2, 1)
    assert cheap.total_cost_usd == pytest.approx(2.0)
    assert cheap.cost_per_full_success == pytest.approx(2.0)
    assert cheap.mean_cost_usd == pytest.approx(1.0)
    assert cheap.mean_score == pytest.approx(0.75)
    assert (crashy.total_cost_usd, crashy.cost_per_full_success) == (None, None)
    assert crashy.mean_cost_usd == pytest.approx(2.0)
    assert crashy.mean_score == pytest.approx(0.5)  # the crashed trial scores 0
    assert futile.total_cost_usd == pytest.approx(0.25)
    assert futile.cost_per_full_success is None
    # cheap (1.0, 0.75) is dominated by none; crashy (2.0, 0.5) by cheap; futile (0.25, 0) by none.
    assert [c.frontier for c in (cheap, crashy, futile)] == [True, False, True]


def test_the_frontier_keeps_ties_and_drops_only_the_dominated() -> None:
    """Two agents equal in both stay; one as cheap and worse goes; an agent with no cost has no place."""
    points = {"a": (1.0, 0.5), "b": (1.0, 0.5), "c": (1.0, 0.4), "d": (2.0, 0.9)}
    assert on_frontier(points) == {"a", "b", "d"}
    (none,) = agent_costs([row("x", 1, None, 1.0)], ["x"], ["evolving"])
    assert (none.mean_cost_usd, none.frontier) == (None, None)


def test_the_html_scatter_fills_the_frontiers_points_and_has_no_script() -> None:
    """Each agent with a mean cost is a circle, marked on the frontier or not."""
    costs = agent_costs([row("a", 1, 1.0, 1.0), row("b", 1, 2.0, 0.5)], ["a", "b"], ["evolving"])
    html = "\n".join(cost_html(costs))
    assert '<svg xmlns="http://www.w3.org/2000/svg"' in html
    assert 'data-agent="a" data-frontier="yes"' in html
    assert 'data-agent="b" data-frontier="no"' in html
    assert "<script" not in html

"""What each agent's trials cost, against what they scored (docs/compare.md#cost).

Per agent and mode, over its valid trials (completed, crashed or timed out; an invalid one says
nothing of the agent): the cost in all and per full success, and its mean cost against its mean
score. A trial's cost is its row's (``outcomes.py``: the gateway's, exact, when the run had one,
else what the agent CLI said). A sum is only given when every trial's cost is known (a crashed
trial's never is): a partial sum would flatter the agent. The mean cost is over the trials whose
cost is known (``cost_known`` of ``valid`` says how many). A trial with no score (crashed, timed
out, or not graded) scores 0 in the mean score, as it counts as a failure in every rate.

The frontier: of the agents of a mode with a mean cost, those no other is both cheaper (or as
cheap) and better (or as good), and strictly one of the two: the agents worth paying for.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

from orchestrator.log.comparison import AgentCost, TrialRow

__all__ = ["agent_costs", "on_frontier"]


def agent_costs(trials: Sequence[TrialRow], agents: Sequence[str], modes: Sequence[str]) -> list[AgentCost]:
    """Each agent's cost per mode, modes first, agents in the matrix's order, its frontier marked."""
    costs: list[AgentCost] = []
    for mode in modes:
        rows = [
            _cost(agent, mode, [t for t in trials if t.agent == agent and t.mode == mode]) for agent in agents
        ]
        points = {
            row.agent: (row.mean_cost_usd, row.mean_score)
            for row in rows
            if row.mean_cost_usd is not None and row.mean_score is not None
        }
        best = on_frontier(points)
        costs += [
            row.model_copy(update={"frontier": row.agent in best if row.agent in points else None})
            for row in rows
        ]
    return costs


def on_frontier(points: dict[str, tuple[float, float]]) -> set[str]:
    """The names of ``points`` (cost, score) that no other point dominates: as cheap and as good,
    and cheaper or better."""
    return {
        name
        for name, (cost, score) in points.items()
        if not any(
            other != name and c <= cost and s >= score and (c < cost or s > score)
            for other, (c, s) in points.items()
        )
    }


def _cost(agent: str, mode: str, rows: list[TrialRow]) -> AgentCost:
    valid = [t for t in rows if t.counted]
    known = [t.cost_usd for t in valid if t.cost_usd is not None]
    successes = sum(t.full_success for t in valid)
    total = sum(known) if valid and len(known) == len(valid) else None
    return AgentCost(
        agent=agent,
        mode=mode,
        valid=len(valid),
        cost_known=len(known),
        from_gateway=sum(t.cost_source == "gateway" and t.cost_usd is not None for t in valid),
        full_successes=successes,
        total_cost_usd=total,
        cost_per_full_success=None if total is None or not successes else total / successes,
        mean_cost_usd=fmean(known) if known else None,
        mean_score=fmean(t.score or 0.0 for t in valid) if valid else None,
        frontier=None,
    )

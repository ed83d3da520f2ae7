"""The report's ``budget``: a session's model budget, what was spent against it, and whether it ran out.

A run made with ``--budget`` names its limits in its ``gateway.started`` (as ``--budget`` reads
them). What was spent is counted again from the ``model.request`` records the way the gateway's
budget (:mod:`orchestrator.gateway.budget`) counts it: every request not refused was admitted
(one request each), and adds its input and output tokens and its cost (an unpriced one adds no
cost and is counted apart). A request refused for the budget says so in its detail
(``budget: …``). The session ran out when the engine ended it ``budget_exhausted``. A run
without a budget has no such section.
"""

from __future__ import annotations

from collections.abc import Sequence

from orchestrator.gateway.budget import BudgetError, Limits
from orchestrator.log.records import Entry, GatewayStarted, ModelRequest
from orchestrator.log.report import ModelBudget
from triggers import EndSession

__all__ = ["REFUSED", "model_budget"]

#: How the detail of a request refused for the budget begins.
REFUSED = "budget: "


def model_budget(entries: Sequence[Entry]) -> ModelBudget | None:
    """The section, from the log's entries (None: the run had no budget)."""
    started = next((e.record for e in entries if isinstance(e.record, GatewayStarted)), None)
    if started is None or not started.budget:
        return None
    try:
        limits = Limits.parse(started.budget)
    except BudgetError:  # a log written by another version: its text is still shown
        limits = Limits()
    requests = [e.record for e in entries if isinstance(e.record, ModelRequest)]
    admitted = [r for r in requests if r.outcome != "refused"]
    end = next((e.record for e in entries if isinstance(e.record, EndSession)), None)
    exhausted = end is not None and end.reason == "budget_exhausted"
    return ModelBudget(
        limits=started.budget,
        max_requests=limits.requests,
        max_tokens=limits.tokens,
        max_cost_usd=limits.cost_usd,
        requests=len(admitted),
        tokens=sum((r.input_tokens or 0) + (r.output_tokens or 0) for r in admitted),
        cost_usd=round(sum(r.cost_usd or 0.0 for r in admitted), 10),
        unpriced=sum(1 for r in admitted if r.cost_usd is None),
        refused=sum(1 for r in requests if r.outcome == "refused" and r.detail.startswith(REFUSED)),
        exhausted=exhausted,
        detail=end.detail if exhausted and end is not None else "",
    )

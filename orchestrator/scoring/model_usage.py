"""The report's ``model_usage``: what the model gateway measured, per request, turn and session.

A run made with the gateway logs a ``gateway.started`` and one ``model.request`` per request
(:mod:`orchestrator.gateway`). This section totals them, per turn (a request belongs to the
turn under way when it was made; one made between turns to none) and for the session, names
the price table (its date) and the models it had no price for, and holds the agent CLI's own
figures (``turn.summary``, the report's ``turns``) against the gateway's: each figure of a
turn where both said something and they differ is a disagreement, listed. A replayed run
(``--replay-model``) says which run it replayed, where it forked, and which requests diverged.
A run made without the gateway has no such section.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from orchestrator.log.records import (
    Entry,
    GatewayStarted,
    ModelDiverged,
    ModelForked,
    ModelReplaying,
    ModelRequest,
)
from orchestrator.log.report import (
    Disagreement,
    ModelCall,
    ModelReplay,
    ModelTotals,
    ModelUsage,
    Turn,
    TurnModelTotals,
)

__all__ = ["FIGURES", "model_usage"]

#: The gateway's figures, totalled (``cost_usd`` only over the priced requests).
FIGURES = (
    "input_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cost_usd",
)
#: Figures the CLIs report too (``turn.summary``), held against the gateway's.
CROSS_CHECKED = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "cost_usd")


def model_usage(entries: Sequence[Entry], turns: Sequence[Turn]) -> ModelUsage | None:
    """The section, from the log's entries and the report's turns (None: no gateway)."""
    started = next((e.record for e in entries if isinstance(e.record, GatewayStarted)), None)
    if started is None:
        return None
    requests = [(e.t, e.record) for e in entries if isinstance(e.record, ModelRequest)]
    by_turn: dict[int | None, list[ModelRequest]] = {}
    for t, request in requests:
        by_turn.setdefault(_turn_of(t, turns), []).append(request)
    rows = [TurnModelTotals(turn=turn.turn, **_totals(by_turn.get(turn.turn, []))) for turn in turns]
    unpriced = {r.model or "(unnamed)" for _, r in requests if not r.priced and r.outcome != "refused"}
    return ModelUsage(
        prices=dict(started.prices),
        upstream=started.upstream,
        requests=[ModelCall(t=t, **_fields(r)) for t, r in requests],
        turns=rows,
        between_turns=ModelTotals(**_totals(by_turn.get(None, []))),
        total=ModelTotals(**_totals([r for _, r in requests])),
        unpriced_models=sorted(unpriced),
        disagreements=_disagreements(rows, turns),
        replay=_replay(entries),
    )


def _replay(entries: Sequence[Entry]) -> ModelReplay | None:
    """Where the answers came from when they were replayed (None: from the upstream)."""
    replaying = next((e.record for e in entries if isinstance(e.record, ModelReplaying)), None)
    if replaying is None:
        return None
    forked = next((e.record.number for e in entries if isinstance(e.record, ModelForked)), None)
    return ModelReplay(
        run=replaying.run,
        fork_at=replaying.fork_at,
        message_file=replaying.message_file,
        forked_at_request=forked,
        diverged_requests=[e.record.number for e in entries if isinstance(e.record, ModelDiverged)],
    )


def _turn_of(t: float, turns: Sequence[Turn]) -> int | None:
    for turn in turns:
        began, ended = turn.started_at, turn.ended_at
        if began is not None and began <= t and (ended is None or t <= ended):
            return turn.turn
    return None


def _fields(request: ModelRequest) -> dict[str, Any]:
    return {key: value for key, value in request.to_record().items() if key != "kind"}


def _totals(requests: Sequence[ModelRequest]) -> dict[str, Any]:
    """Sums over ``requests``; a figure none of them reported is None, never 0."""
    out: dict[str, Any] = {
        "requests": len(requests),
        "answered": sum(1 for r in requests if r.outcome == "answered"),
        "unpriced": sum(1 for r in requests if not r.priced and r.outcome != "refused"),
    }
    for figure in FIGURES:
        values = [getattr(r, figure) for r in requests if getattr(r, figure) is not None]
        total = sum(values) if values else None
        out[figure] = round(total, 10) if isinstance(total, float) else total
    return out


def _disagreements(rows: Sequence[TurnModelTotals], turns: Sequence[Turn]) -> list[Disagreement]:
    """Each figure of a turn that both the CLI and the gateway reported, where they differ."""
    found = []
    for mine, theirs in zip(rows, turns, strict=True):
        for figure in CROSS_CHECKED:
            gateway, cli = getattr(mine, figure), getattr(theirs, figure)
            if gateway is None or cli is None:
                continue
            same = abs(gateway - cli) <= 1e-6 if figure == "cost_usd" else gateway == cli
            if not same:
                found.append(Disagreement(turn=mine.turn, figure=figure, gateway=gateway, cli=cli))
    return found

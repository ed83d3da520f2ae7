"""What the model gateway measured (the report's ``model_usage``), for people: one summary line
(the terminal's summary), and a section of ``report.md`` and ``report.html`` with the totals per
turn, the price table's date, the models it had no price for, and where the agent CLI's own
figures disagree with the gateway's.

Pure functions of the typed report; a figure no request reported is ``missing``, never 0.
"""

from __future__ import annotations

from orchestrator.log.report import ModelReplay, ModelTotals, ModelUsage
from orchestrator.render import inert
from orchestrator.render.inert import markdown as md
from orchestrator.render.phrases import cost_text, tokens_text

__all__ = [
    "MODEL_USAGE_COLUMNS",
    "model_usage_html",
    "model_usage_line",
    "model_usage_lines",
    "model_usage_markdown",
    "model_usage_rows",
    "replay_line",
]

#: The per-turn table's headers.
MODEL_USAGE_COLUMNS = [
    "turn",
    "requests",
    "tokens in",
    "cache read",
    "cache write",
    "tokens out",
    "reasoning",
    "cost",
]


def _figure(figure: str, value: float) -> str:
    return cost_text(value) if figure == "cost_usd" else tokens_text(int(value))


def model_usage_line(usage: ModelUsage) -> str:
    """The gateway's totals in a sentence: requests, tokens, cost, and the price table's date."""
    total = usage.total
    answered = f" ({total.answered} answered)" if total.answered != total.requests else ""
    cached = [
        f"{tokens_text(total.cache_read_tokens)} cache read" if total.cache_read_tokens else "",
        f"{tokens_text(total.cache_write_tokens)} cache write" if total.cache_write_tokens else "",
    ]
    extra = f" ({', '.join(c for c in cached if c)})" if any(cached) else ""
    reasoning = f" ({tokens_text(total.reasoning_tokens)} reasoning)" if total.reasoning_tokens else ""
    unpriced = f", {total.unpriced} request(s) not priced" if total.unpriced else ""
    table = usage.prices.get("date", "?") + (
        "" if usage.prices.get("path", "shipped") == "shipped" else f", {usage.prices.get('path')}"
    )
    return (
        f"model gateway: {total.requests} request(s){answered}; tokens in {tokens_text(total.input_tokens)}"
        f"{extra}, out {tokens_text(total.output_tokens)}{reasoning}; cost {cost_text(total.cost_usd)}"
        f"{unpriced} (prices of {table})"
    )


def model_usage_lines(usage: ModelUsage) -> list[str]:
    """The summary line, then the models with no price, the recorded run a replay answered from (and
    its fork) or the upstream when one was given, and each figure of a turn the agent CLI reported
    unlike the gateway."""
    lines = [model_usage_line(usage)]
    if usage.unpriced_models:
        lines.append(f"no price for: {', '.join(usage.unpriced_models)} (their cost is not counted)")
    if usage.replay is not None:
        lines.append(replay_line(usage.replay))
    elif usage.upstream:
        lines.append(f"upstream: {usage.upstream}")
    for disagreement in usage.disagreements:
        figure = disagreement.figure
        lines.append(
            f"turn {disagreement.turn}: the CLI reported {figure} {_figure(figure, disagreement.cli)}, "
            f"the gateway measured {_figure(figure, disagreement.gateway)}"
        )
    return lines


def replay_line(replay: ModelReplay) -> str:
    """Where a replayed run's answers came from, where it forked, and what diverged."""
    line = f"model answers replayed from {replay.run}"
    if replay.fork_at:
        at = (
            f"from request {replay.forked_at_request} on, the upstream answered"
            if replay.forked_at_request is not None
            else "no request carried the new wording, so the upstream never answered"
        )
        line += f"; forked at {replay.fork_at}, its message reworded from {replay.message_file}: {at}"
    if replay.diverged_requests:
        numbers = ", ".join(map(str, replay.diverged_requests))
        line += f"; request(s) {numbers} refused, unlike the recording"
    return line


def _row(name: str, totals: ModelTotals) -> list[str]:
    return [
        name,
        str(totals.requests),
        tokens_text(totals.input_tokens),
        tokens_text(totals.cache_read_tokens),
        tokens_text(totals.cache_write_tokens),
        tokens_text(totals.output_tokens),
        tokens_text(totals.reasoning_tokens),
        cost_text(totals.cost_usd),
    ]


def model_usage_rows(usage: ModelUsage) -> list[list[str]]:
    """One row per turn, then the requests between turns (when any), then the session's total."""
    rows = [_row(str(turn.turn), turn) for turn in usage.turns]
    if usage.between_turns.requests:
        rows.append(_row("between turns", usage.between_turns))
    rows.append(_row("total", usage.total))
    return rows


def model_usage_markdown(usage: ModelUsage | None) -> list[str]:
    """The ``## Model usage`` section of ``report.md``; none for a run without the gateway."""
    if usage is None:
        return []

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(md(cell) for cell in cells) + " |"

    out = ["", "## Model usage (gateway)", "", *(f"- {md(text)}" for text in model_usage_lines(usage)), ""]
    out += [line(MODEL_USAGE_COLUMNS), line(["---"] * len(MODEL_USAGE_COLUMNS))]
    out += [line(row) for row in model_usage_rows(usage)]
    return out


def model_usage_html(usage: ModelUsage | None) -> str:
    """The model usage section of ``report.html``; empty for a run without the gateway."""
    if usage is None:
        return ""
    _e = inert.html
    items = "".join(f"<li>{_e(text)}</li>" for text in model_usage_lines(usage))
    head = "".join(f"<th>{_e(h)}</th>" for h in MODEL_USAGE_COLUMNS)
    body = "".join(
        "<tr>" + "".join(f"<td>{_e(cell)}</td>" for cell in row) + "</tr>" for row in model_usage_rows(usage)
    )
    return (
        f'<h2>Model usage (gateway)</h2><ul id="model-usage">{items}</ul>'
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )

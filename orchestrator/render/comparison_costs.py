"""The comparison's cost section (``compare.json``'s ``costs``): a table in the terminal and
``compare.md``, and in ``compare.html`` the same table with a small inline SVG scatter of mean
cost against mean score, the frontier joined by a line (no script).

A cost no trial reported is ``—`` with the count of trials whose cost is known, never a zero.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from orchestrator.log.comparison import AgentCost
from orchestrator.render import inert
from orchestrator.render.inert import markdown, terminal

__all__ = ["COST_COLUMNS", "COST_NOTE", "cost_html", "cost_markdown", "cost_rows", "print_costs"]

#: The table's headers.
COST_COLUMNS = [
    "agent",
    "mode",
    "cost known",
    "total cost",
    "full successes",
    "cost per full success",
    "mean cost",
    "mean score",
    "on the frontier",
]
#: What the figures are, said under the table.
COST_NOTE = (
    "A trial's cost is its model gateway's (exact) when its run had one, else what the agent CLI "
    "reported of itself. Total cost and cost per full success are over the valid trials, and shown "
    "only when every one's cost is known (— otherwise: a crashed run's, an unpriced model's or a "
    "CLI's that reports none is not) and, per success, when there is one. Mean cost is over the "
    "trials whose cost is known; mean score counts a trial with no score as 0. On the frontier: no "
    "other agent of the mode is both cheaper and better."
)


def _usd(value: float | None) -> str:
    return "—" if value is None else f"${value:.4f}"


def cost_rows(costs: Sequence[AgentCost]) -> list[list[str]]:
    """Each agent's cost per mode (``compare.json``'s ``costs``), as the table's row."""
    rows = []
    for cost in costs:
        known = f"{cost.cost_known}/{cost.valid}" if cost.valid else "—"
        gateway = f" ({cost.from_gateway} by the gateway)" if cost.from_gateway else ""
        frontier = {True: "yes", False: "no", None: "—"}[cost.frontier]
        rows.append(
            [
                cost.agent,
                cost.mode,
                known + gateway,
                _usd(cost.total_cost_usd),
                str(cost.full_successes),
                _usd(cost.cost_per_full_success),
                _usd(cost.mean_cost_usd),
                "—" if cost.mean_score is None else f"{cost.mean_score * 100:.1f}",
                frontier,
            ]
        )
    return rows


def cost_markdown(costs: Sequence[AgentCost]) -> list[str]:
    """The ``## Cost`` section of ``compare.md``, as lines."""

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(markdown(cell) for cell in cells) + " |"

    table = [line(COST_COLUMNS), line(["---"] * len(COST_COLUMNS)), *(line(r) for r in cost_rows(costs))]
    return ["## Cost", "", *table, "", markdown(COST_NOTE)]


def print_costs(costs: Sequence[AgentCost], console: Console, *, wide: bool = False) -> None:
    """The costs in the terminal, when any trial's cost is known: per agent and mode a block of
    named figures (``wide``: one table, a column per figure)."""
    if not any(cost.cost_known for cost in costs):
        console.print("cost: no trial's cost is known (the gateway measures it: --model-gateway)")
        return
    if not wide:
        console.print("cost", style="italic")
        for row in cost_rows(costs):
            console.print(terminal(f"{row[0]} · {row[1]}"), style="bold", soft_wrap=False)
            for header, text in zip(COST_COLUMNS[2:], row[2:], strict=True):
                console.print(terminal(f"  {header}: {text}"), soft_wrap=False)
        return
    table = Table(title="cost", title_justify="left")
    for header in COST_COLUMNS:
        table.add_column(header, overflow="fold")
    for row in cost_rows(costs):
        table.add_row(*(terminal(text) for text in row))
    console.print(table)


_e = inert.html
#: The scatter's size and margins, in pixels.
_W, _H, _M = 420, 260, 40


def _scatter(costs: Sequence[AgentCost]) -> str:
    """Mean cost (x) against mean score (y) of the agents of one mode with both, the frontier's
    points filled and joined; an empty string when none has both."""
    points = [c for c in costs if c.mean_cost_usd is not None and c.mean_score is not None]
    if not points:
        return ""
    top = max(c.mean_cost_usd or 0.0 for c in points) or 1.0

    def x(cost: float) -> float:
        return _M + (_W - 2 * _M) * cost / top

    def y(score: float) -> float:
        return _H - _M - (_H - 2 * _M) * score

    marks = [
        f'<line x1="{_M}" y1="{_H - _M}" x2="{_W - _M}" y2="{_H - _M}" stroke="#888"/>',
        f'<line x1="{_M}" y1="{_M}" x2="{_M}" y2="{_H - _M}" stroke="#888"/>',
        f'<text x="{_W / 2}" y="{_H - 8}" text-anchor="middle">mean cost (0 to ${top:.4f})</text>',
        f'<text x="12" y="{_H / 2}" transform="rotate(-90 12 {_H / 2})" text-anchor="middle">'
        "mean score (0 to 100)</text>",
    ]
    frontier = sorted((c for c in points if c.frontier), key=lambda c: c.mean_cost_usd or 0.0)
    if len(frontier) > 1:
        path = " ".join(f"{x(c.mean_cost_usd or 0.0):.1f},{y(c.mean_score or 0.0):.1f}" for c in frontier)
        marks.append(f'<polyline points="{path}" fill="none" stroke="#1e6b34" stroke-dasharray="4 3"/>')
    for cost in points:
        cx, cy = x(cost.mean_cost_usd or 0.0), y(cost.mean_score or 0.0)
        fill = "#1e6b34" if cost.frontier else "#fff"
        marks.append(
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="5" fill="{fill}" stroke="#1e6b34" '
            f'data-agent="{_e(cost.agent)}" data-frontier="{"yes" if cost.frontier else "no"}"/>'
            f'<text x="{cx + 8:.1f}" y="{cy - 6:.1f}">{_e(cost.agent)}</text>'
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
        f'role="img" aria-label="mean cost against mean score" font-size="11">{"".join(marks)}</svg>'
    )


def cost_html(costs: Sequence[AgentCost]) -> list[str]:
    """The cost section of ``compare.html``: the table, then a scatter per mode."""
    head = "".join(f"<th>{_e(h)}</th>" for h in COST_COLUMNS)
    body = "".join(
        f'<tr data-agent="{_e(row[0])}">' + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>"
        for row in cost_rows(costs)
    )
    parts = ['<h2 id="cost">Cost</h2>', f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"]
    for mode in dict.fromkeys(c.mode for c in costs):
        drawn = _scatter([c for c in costs if c.mode == mode])
        if drawn:
            parts.append(
                f'<figure data-mode="{_e(mode)}">{drawn}<figcaption>{_e(mode)}</figcaption></figure>'
            )
    parts.append(f"<p>{_e(COST_NOTE)}</p>")
    return parts

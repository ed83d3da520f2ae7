"""``changeup view``'s matrix page: the decision, forest plots, and the paired trials linked.

Drawn from ``compare.json`` (:class:`~orchestrator.log.comparison.Comparison`): the verdict of the
rule in force; two forest plots (inline SVG, no library) of each agent's full-success rate and of
each paired difference, a dot for the estimate and a bar for its 95% interval where there is one;
then the paired-trials table, each trial a link to its run's page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from orchestrator.log.comparison import Comparison, Pair
from orchestrator.render import inert
from orchestrator.render.view_pair import PAIR_SCRIPT, pair_html
from orchestrator.render.view_site import page

__all__ = ["Estimate", "forest", "matrix_page"]

#: One row of a forest plot: its label, the estimate, and its interval's ends (None: none known).
Estimate = tuple[str, float | None, float | None, float | None]

WIDTH, LABEL, ROW = 900, 280, 24

_e = inert.html


def matrix_page(
    comparison: Comparison,
    name: str,
    links: Mapping[str, str],
    tracks: Mapping[str, dict[str, Any]],
    index: str,
) -> str:
    """The page of the matrix ``name``: ``links`` maps a trial's ``run`` (as compare.json names it)
    to its run page's address, ``tracks`` to its track (:func:`~orchestrator.render.view_pair.track`,
    for the side-by-side view); ``index`` is the link back to the index."""
    decision = comparison.decision
    if decision is None:
        verdict, mood = "No decision rule: nothing decided.", "warn"
    else:
        verdict = decision.summary
        mood = {"switch": "good", "do not switch": "bad"}.get(decision.verdict, "warn")
    rates: list[Estimate] = [
        (f"{a.agent} · {a.mode}", a.full_success.rate, a.full_success.low, a.full_success.high)
        for a in comparison.agents
    ]
    differences: list[Estimate] = [
        (f"{d.b} minus {d.a} · {d.mode}", d.full_success.difference, d.full_success.low, d.full_success.high)
        for d in comparison.differences
    ]
    body = [
        f'<nav><a href="{_e(index)}">← all runs</a></nav>',
        f"<h1>Matrix {_e(name)}</h1>",
        f'<p class="meta">{comparison.done.cells} cells, {comparison.done.not_run} not run · challenges '
        f"{_e(', '.join(c.id for c in comparison.matrix.challenges))}</p>",
        f'<p class="headline {mood}" id="decision">{_e(verdict)}</p>',
        "<h2>Full-success rate by agent</h2>",
        forest(rates, "rates", low=0.0, high=1.0),
        "<h2>Paired differences in full-success rate</h2>",
        forest(differences, "differences", low=-1.0, high=1.0)
        if differences
        else "<p class=meta>One agent: no pair to compare.</p>",
        '<p class="meta">Dot: the estimate; bar: its 95% interval (challenges as clusters); no bar: too '
        "few challenges for an interval.</p>",
        "<h2>Paired trials</h2>",
        _pairs(comparison.pairs, links),
        _side_by_side(comparison.pairs, tracks),
    ]
    return page(f"matrix {name}", "\n".join(body), PAIR_SCRIPT)


def _side_by_side(pairs: Sequence[Pair], tracks: Mapping[str, dict[str, Any]]) -> str:
    """Two trials aligned at a trigger, the first pair's chosen; nothing when no trial has a report."""
    if not tracks:
        return ""
    chosen = [
        entry.run
        for entry in (pairs[0].agents.values() if pairs else ())
        if entry.run and entry.run in tracks
    ]
    first = chosen[0] if chosen else min(tracks)
    second = chosen[1] if len(chosen) > 1 else first
    return pair_html(tracks, first, second)


def forest(rows: Sequence[Estimate], name: str, *, low: float, high: float) -> str:
    """A forest plot (SVG) of ``rows`` on the axis ``low``..``high`` (shown in percent)."""
    height = ROW * len(rows) + 30

    def x(value: float) -> float:
        return LABEL + (WIDTH - LABEL - 20) * (value - low) / (high - low)

    out = [
        f'<svg class="forest" id="forest-{name}" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
        'xmlns="http://www.w3.org/2000/svg">'
    ]
    for tick in (low, (low + high) / 2, high):
        shown = f"{tick:+.0%}" if low < 0 else f"{tick:.0%}"
        out.append(
            f'<line x1="{x(tick):.1f}" y1="0" x2="{x(tick):.1f}" y2="{height - 18}" stroke="#ddd"/>'
            f'<text x="{x(tick):.1f}" y="{height - 4}" text-anchor="middle">{shown}</text>'
        )
    for number, (label, value, lo, hi) in enumerate(rows):
        y = ROW * number + ROW / 2 + 2
        out.append(
            f'<g class="estimate" data-row="{_e(label)}"><text x="4" y="{y + 4:.1f}">{_e(label)}</text>'
        )
        if lo is not None and hi is not None:
            out.append(
                f'<line x1="{x(lo):.1f}" y1="{y}" x2="{x(hi):.1f}" y2="{y}" '
                'stroke="#4c78a8" stroke-width="2"/>'
            )
        if value is None:
            out.append(f'<text x="{LABEL}" y="{y + 4:.1f}" fill="#888">no valid trial</text>')
        else:
            span = "" if lo is None or hi is None else f" [{lo:.0%}, {hi:.0%}]"
            out.append(
                f'<circle cx="{x(value):.1f}" cy="{y}" r="5" fill="#4c78a8"><title>{_e(label)}: '
                f"{value:.0%}{span}</title></circle>"
            )
        out.append("</g>")
    out.append("</svg>")
    return "".join(out)


def _pairs(pairs: Sequence[Pair], links: Mapping[str, str]) -> str:
    agents = sorted({agent for pair in pairs for agent in pair.agents})
    head = "".join(f"<th>{_e(agent)}</th>" for agent in agents)
    rows = []
    for pair in pairs:
        cells = []
        for agent in agents:
            entry = pair.agents.get(agent)
            if entry is None:
                cells.append("<td>—</td>")
                continue
            href = links.get(entry.run or "")
            text = _e(entry.outcome)
            cells.append(
                f'<td><a class="trial" href="{_e(href)}">{text}</a></td>' if href else f"<td>{text}</td>"
            )
        rows.append(
            f"<tr><td>{_e(pair.challenge)}</td><td>{_e(pair.mode)}</td><td class=num>{pair.trial}</td>"
            f"{''.join(cells)}</tr>"
        )
    return (
        f'<table id="pairs"><thead><tr><th>challenge</th><th>mode</th><th>trial</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )

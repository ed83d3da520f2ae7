"""``compare.html``: the comparison as one self-contained page (no network), the tables of ``compare.md``.

Each agent's rate row carries ``data-agent``, each challenge's rows ``data-challenge``, and the
verdict ``data-verdict``, so tests (and people with devtools) can find them. A small inline
script lets a click on an agent's name keep only that agent's rows of the tables.
"""

from __future__ import annotations

import re

from orchestrator.log.comparison import Comparison
from orchestrator.render import inert
from orchestrator.render.comparison_adaptation import adaptation_html
from orchestrator.render.comparison_cheating import cheating_html
from orchestrator.render.comparison_costs import cost_html
from orchestrator.render.comparison_findings import (
    IMPORTED_TITLE,
    PROBING_TITLE,
    imported_lines,
    probing_lines,
)
from orchestrator.render.comparison_text import (
    CELL_COLUMNS,
    agent_lines,
    decision_lines,
    effect_lines,
    fresh_columns,
    fresh_lines,
    fresh_rows,
    pair_columns,
    provenance_lines,
    scope_lines,
    warning_lines,
)

__all__ = ["comparison_html"]

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 1200px; padding: 0 1rem;
  color: #222; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: .5rem 0; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } td, th { overflow-wrap: anywhere; }
table.cell th[scope=row] { font-weight: normal; white-space: nowrap; }
.verdict { font-size: 1.1rem; font-weight: 600; padding: .5rem .8rem; border-radius: 6px; }
.switch { background: #e6f4ea; color: #1e6b34; } .do-not-switch { background: #fde8e8; color: #9b1c1c; }
.undecided, .none { background: #fff4d6; color: #7a5a00; }
pre { background: #f7f7f7; padding: .6rem; overflow-x: auto; white-space: pre-wrap; }
.agent-filter { cursor: pointer; text-decoration: underline dotted; }
.hidden { display: none; }
.warnings li { color: #7a5a00; font-weight: 600; }
"""

SCRIPT = """
(function () {
  var rows = document.querySelectorAll("tr[data-agent], th[data-agent], td[data-agent]");
  var chosen = null;
  document.querySelectorAll(".agent-filter").forEach(function (name) {
    name.addEventListener("click", function () {
      chosen = chosen === name.dataset.agent ? null : name.dataset.agent;
      rows.forEach(function (row) {
        row.classList.toggle("hidden", chosen !== null && row.dataset.agent !== chosen);
      });
    });
  });
  document.body.dataset.ready = "yes";
})();
"""


_e = inert.html  # every value: control characters shown, then escaped for text or a quoted attribute


def _table(headers: list[str], rows: list[tuple[dict[str, str], list[str]]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = []
    for attributes, cells in rows:
        attrs = "".join(f' data-{k}="{_e(v)}"' for k, v in attributes.items())
        body.append(f"<tr{attrs}>" + "".join(f"<td>{_e(c)}</td>" for c in cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _fresh(comparison: Comparison) -> list[str]:
    """The fresh-against-evolving section, when the matrix ran both modes."""
    if not comparison.fresh_vs_evolving:
        return []
    rows = [({"agent": row[1], "challenge": row[0]}, row) for row in fresh_rows(comparison)]
    return [
        '<h2 id="fresh">Fresh against evolving</h2><ul>',
        *(f"<li>{_e(line)}</li>" for line in fresh_lines(comparison)),
        "</ul>",
        _table(fresh_columns(), rows),
    ]


def _warnings(comparison: Comparison) -> list[str]:
    """The warnings section, when there are warnings."""
    if not comparison.warnings:
        return []
    items = "".join(f"<li>{_e(line)}</li>" for line in warning_lines(comparison))
    return [f'<h2>Warnings</h2><ul id="warnings" class="warnings">{items}</ul>']


def _decision_rest(comparison: Comparison) -> list[str]:
    """The decision's lines under its verdict, when there are any (none without a decision rule)."""
    rest = decision_lines(comparison)[1:]
    return ["<pre>" + _e("\n".join(rest)) + "</pre>"] if rest else []


def _cells(comparison: Comparison) -> list[str]:
    """Per challenge, a table with a row per figure and a column per agent and mode, so twenty
    figures read at any width (one column per figure overflows a 1400-pixel window)."""
    out = []
    for challenge in comparison.matrix.challenges:
        cells = [c for c in comparison.cells if c.challenge == challenge.id]
        if not cells:
            continue
        head = "".join(
            f'<th data-agent="{_e(c.agent)}" data-mode="{_e(c.mode)}">{_e(c.agent)} · {_e(c.mode)}</th>'
            for c in cells
        )
        rows = "".join(
            f'<tr><th scope="row">{_e(header)}</th>'
            + "".join(f'<td data-agent="{_e(c.agent)}">{_e(shown(c))}</td>' for c in cells)
            + "</tr>"
            for header, shown in CELL_COLUMNS[3:]
        )
        out.append(
            f'<h3 data-challenge="{_e(challenge.id)}">{_e(challenge.id)}</h3>'
            f'<table class="cell" data-challenge="{_e(challenge.id)}"><thead><tr><th></th>{head}</tr>'
            f"</thead><tbody>{rows}</tbody></table>"
        )
    return out


#: A run folder linked to: relative, inside RESULTS, no scheme (``javascript:``) and nothing to
#: escape. compare.json is read from a folder that may come from elsewhere; changeup writes
#: ``runs/<challenge>--<agent>--<mode>--t<N>--a<N>``.
_LINKABLE = re.compile(r"(?!.*\.\.)[A-Za-z0-9_][A-Za-z0-9_.+\-]*(/[A-Za-z0-9_][A-Za-z0-9_.+\-]*)*")


def _pairs(comparison: Comparison) -> str:
    """The paired trials, each agent's outcome a link to its run's report.html (relative to RESULTS,
    where compare.html is)."""
    names = [a.name for a in comparison.matrix.agents]
    head = "".join(f"<th>{_e(h)}</th>" for h in pair_columns(comparison))
    body = []
    for pair in comparison.pairs:
        cells = [pair.challenge, pair.mode, str(pair.trial)]
        shown = "".join(f"<td>{_e(c)}</td>" for c in cells)
        for name in names:
            entry = pair.agents.get(name)
            if entry is None:
                shown += "<td>not run</td>"
            elif entry.run is None or not _LINKABLE.fullmatch(entry.run):
                shown += f"<td>{_e(entry.outcome)}</td>"
            else:
                shown += (
                    f'<td><a href="{_e(entry.run)}/report.html" title="{_e(entry.run)}">'
                    f"{_e(entry.outcome)}</a></td>"
                )
        body.append(f'<tr data-challenge="{_e(pair.challenge)}">{shown}</tr>')
    return f'<table id="pairs"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _imported(comparison: Comparison) -> list[str]:
    return _section(IMPORTED_TITLE, "imported", imported_lines(comparison)) + _section(
        PROBING_TITLE, "probing", probing_lines(comparison)
    )


def _section(title: str, anchor: str, lines: list[str]) -> list[str]:
    if not lines:
        return []
    return [f'<h2>{title}</h2><ul id="{anchor}">', *(f"<li>{_e(line)}</li>" for line in lines), "</ul>"]


def comparison_html(comparison: Comparison) -> str:
    """The page, whole."""
    matrix = comparison.matrix
    names = [a.name for a in matrix.agents]
    decision = comparison.decision
    verdict = decision.verdict if decision else "none"
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Comparison: {_e(' vs '.join(names))}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>Comparison: {_e(' vs '.join(names))}</h1>",
        "<p>Agents (click one to show only its rows): "
        + ", ".join(f'<span class="agent-filter" data-agent="{_e(n)}">{_e(n)}</span>' for n in names)
        + "</p>",
        "<p>Challenges: "
        + ", ".join(f'<code data-challenge="{_e(c.id)}">{_e(c.id)}</code>' for c in matrix.challenges)
        + "</p>",
        "<h2>Decision</h2>",
        f'<div class="verdict {_e(verdict.replace(" ", "-"))}" data-verdict="{_e(verdict)}">'
        f"{_e(decision_lines(comparison)[0])}</div>",
        *_decision_rest(comparison),
        "<h2>Rates</h2><ul>",
        *(f"<li>{_e(line)}</li>" for line in agent_lines(comparison)),
        "</ul>",
        *_warnings(comparison),
        "<h2>Per challenge and agent</h2>",
        *_cells(comparison),
        *cost_html(comparison.costs),
        *cheating_html(comparison.cheating),
        *adaptation_html(comparison.adaptation),
        "<h2>Trials, paired across agents</h2>",
        _pairs(comparison),
        *_fresh(comparison),
        "<h2>Scope</h2><ul>",
        *(f"<li>{_e(line)}</li>" for line in scope_lines(comparison)),
        "</ul>",
        '<h2>Prohibited effects</h2><ul id="effects">',
        *(f"<li>{_e(line)}</li>" for line in effect_lines(comparison)),
        "</ul>",
        *_imported(comparison),
        "<h2>What the sample does not cover</h2><ul>",
        *(f"<li>{_e(note)}</li>" for note in comparison.not_covered),
        "</ul>",
        "<h2>Reviews</h2>",
        f"<p>{comparison.reviews.confirmed} confirmed, {comparison.reviews.dismissed} dismissed, "
        f"{comparison.reviews.pending} pending</p>",
        "<h2>Attempts</h2>",
        "<pre>" + _e("\n".join(provenance_lines(comparison))) + "</pre>",
        f"<script>{SCRIPT}</script>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"

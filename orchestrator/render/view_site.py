"""``changeup view``'s shared page shell and its index: every run and matrix found, filterable.

Pages are static and self-contained (no network, no CDN, no build step): each works from
``file://`` as well as from the loopback server. The index is one table whose rows carry their
values as ``data-*`` attributes; a few lines of plain JavaScript filter them (challenge, agent,
status, kind, a minimum score) and sort them by a click on a column's header. Every value goes
through :func:`~orchestrator.render.inert.html`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from orchestrator.render import inert

__all__ = ["STYLE", "IndexRow", "index_html", "page"]

STYLE = """
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5rem auto; max-width: 1280px; padding: 0 1rem;
  color: #222; }
h1 { font-size: 1.45rem; margin: .2rem 0; } h2 { font-size: 1.12rem; margin-top: 1.8rem; }
nav a { margin-right: 1rem; }
table { border-collapse: collapse; width: 100%; margin-top: .5rem; table-layout: auto; }
th, td { text-align: left; padding: .25rem .45rem; border-bottom: 1px solid #e3e3e3; vertical-align: top;
  overflow-wrap: anywhere; }
th { background: #f6f6f6; } th.sort { cursor: pointer; user-select: none; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.hidden { display: none; }
code { background: #f3f3f3; padding: 0 .25rem; border-radius: 3px; overflow-wrap: anywhere; }
.meta { color: #666; } .filters { display: flex; flex-wrap: wrap; gap: .6rem; margin: .6rem 0; }
.filters label { display: flex; gap: .3rem; align-items: center; }
.good { background: #e6f4ea; color: #1e6b34; } .bad { background: #fde8e8; color: #9b1c1c; }
.warn { background: #fff4e0; color: #8a5300; }
.headline { font-size: 1.05rem; font-weight: 600; padding: .45rem .8rem; border-radius: 6px; }
svg { max-width: 100%; height: auto; } svg text { font: 11px system-ui, sans-serif; }
pre { background: #f7f7f7; padding: .6rem; border-radius: 4px; white-space: pre-wrap; overflow-wrap: anywhere;
  max-height: 32rem; overflow-y: auto; }
.diff .add { color: #1e6b34; } .diff .del { color: #9b1c1c; } .diff .hunk { color: #5a4fcf; }
.mark { cursor: pointer; } .chosen { outline: 2px solid #d62728; }
"""


def page(title: str, body: str, script: str = "") -> str:
    """A whole page: ``title`` (plain text), ``body`` (HTML) and an optional inline ``script``.

    The script ends by setting ``data-ready`` on the body, so a test can see it ran to its end."""
    ready = "document.body.dataset.ready = 'yes';"
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{inert.html(title)} — changeup view</title>",
            f"<style>{STYLE}</style></head><body>",
            body,
            f"<script>{script}\n{ready}</script>",
            "</body></html>",
        ]
    )


@dataclass(frozen=True, slots=True)
class IndexRow:
    """One run or matrix in the index: where its page is and what the filters see of it."""

    kind: str  #: "run" or "matrix"
    href: str  #: its page, relative to the index
    name: str  #: the folder's name
    challenge: str
    agent: str
    status: str
    score: float | None  #: a run's total score (0..1); a matrix has none
    date: str  #: when it started (ISO 8601), or ""


INDEX_SCRIPT = """
(function () {
  var rows = Array.prototype.slice.call(document.querySelectorAll('#runs tbody tr'));
  var inputs = document.querySelectorAll('.filters [data-filter]');
  function apply() {
    var want = {};
    inputs.forEach(function (i) { want[i.dataset.filter] = i.value.trim().toLowerCase(); });
    var shown = 0;
    rows.forEach(function (row) {
      var ok = ['kind', 'challenge', 'agent', 'status'].every(function (key) {
        return !want[key] || row.dataset[key].toLowerCase().indexOf(want[key]) >= 0;
      });
      if (want.score) {
        var least = parseFloat(want.score) / 100, score = parseFloat(row.dataset.score);
        ok = ok && !isNaN(least) && !isNaN(score) && score >= least;
      }
      row.classList.toggle('hidden', !ok);
      if (ok) { shown += 1; }
    });
    document.getElementById('shown').textContent = shown + ' of ' + rows.length + ' shown';
  }
  inputs.forEach(function (i) { i.addEventListener('input', apply); });
  var body = document.querySelector('#runs tbody');
  document.querySelectorAll('#runs th.sort').forEach(function (th) {
    th.addEventListener('click', function () {
      var key = th.dataset.key, down = th.dataset.down !== 'yes';
      th.dataset.down = down ? 'yes' : 'no';
      rows.sort(function (a, b) {
        var x = a.dataset[key], y = b.dataset[key];
        if (key === 'score') {
          x = parseFloat(x); y = parseFloat(y); x = isNaN(x) ? -1 : x; y = isNaN(y) ? -1 : y;
        }
        return (x < y ? -1 : x > y ? 1 : 0) * (down ? 1 : -1);
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
  apply();
})();
"""

_COLUMNS = (("kind", "kind"), ("name", "run or matrix"), ("challenge", "challenge"), ("agent", "agent"))
_TAIL = (("status", "status"), ("score", "score"), ("date", "started"))


def index_html(rows: Sequence[IndexRow], roots: Sequence[str]) -> str:
    """The index page over ``rows``, found under the folders ``roots``."""
    e = inert.html
    head = "".join(f'<th class="sort" data-key="{key}">{label}</th>' for key, label in (*_COLUMNS, *_TAIL))
    body = []
    for row in rows:
        score = "" if row.score is None else f"{row.score:.4f}"
        shown = "—" if row.score is None else f"{row.score:.0%}"
        body.append(
            f'<tr data-kind="{e(row.kind)}" data-name="{e(row.name)}" data-challenge="{e(row.challenge)}" '
            f'data-agent="{e(row.agent)}" data-status="{e(row.status)}" data-score="{score}" '
            f'data-date="{e(row.date)}"><td>{e(row.kind)}</td>'
            f'<td><a href="{e(row.href)}">{e(row.name)}</a></td>'
            f"<td>{e(row.challenge)}</td><td>{e(row.agent)}</td><td>{e(row.status)}</td>"
            f'<td class="num">{shown}</td><td>{e(row.date)}</td></tr>'
        )
    filters = "".join(
        f'<label>{name} <input data-filter="{name}" size="12"></label>'
        for name in ("kind", "challenge", "agent", "status")
    )
    where = ", ".join(f"<code>{e(root)}</code>" for root in roots)
    content = (
        f"<h1>changeup view</h1><p class=meta>{len(rows)} runs and matrices found under {where}. "
        "Click a column's header to sort by it.</p>"
        f'<div class="filters">{filters}<label>score ≥ <input data-filter="score" size="4">%</label>'
        '<span id="shown" class="meta"></span></div>'
        f'<table id="runs"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )
    return page("changeup view", content, INDEX_SCRIPT)

"""The matrix page's side-by-side view: two trials on one time axis, aligned at the same trigger.

Each trial is reduced to a track drawn from its report (:func:`track`): when each phase unlocked
and first passed, when each trigger fired and each message arrived, and when the session ended.
The tracks travel to the page as JSON; a few lines of plain JavaScript draw the two chosen trials
as two rows of an SVG, each shifted so that the chosen trigger's firing is at 0 in both (a trial
where it did not fire stays at its own start, and says so).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orchestrator.log.report import Report
from orchestrator.render import inert

__all__ = ["PAIR_SCRIPT", "pair_html", "track"]


def track(report: Report) -> dict[str, Any]:
    """The marks of one trial: ``end`` (session seconds) and ``marks`` as ``[t, kind, label]``."""
    marks: list[list[Any]] = []
    for phase in report.phases:
        if phase.unlocked_at is not None:
            marks.append([phase.unlocked_at, "unlock", f"{phase.id} unlocked"])
        if phase.first_passed_at is not None:
            marks.append([phase.first_passed_at, "passed", f"{phase.id} first passed"])
    triggers = {}
    for trigger in report.triggers:
        if trigger.fired and trigger.fired_at is not None:
            marks.append([trigger.fired_at, "trigger", f"{trigger.id} fired: {trigger.cause}"])
            triggers[trigger.id] = trigger.fired_at
    for message in report.messages:
        if message.delivered_at is not None:
            marks.append([message.delivered_at, "message", f"message #{message.number} ({message.trigger})"])
    return {
        "end": float(report.run.elapsed),
        "marks": sorted(marks, key=lambda mark: mark[0]),
        "fired": triggers,
    }


def pair_html(tracks: Mapping[str, dict[str, Any]], first: str, second: str) -> str:
    """The section: two trial pickers (``first`` and ``second`` chosen), a trigger picker, the SVG."""
    e = inert.html
    names = sorted(tracks)
    triggers = sorted({trigger for one in tracks.values() for trigger in one["fired"]})

    def picker(name: str, chosen: str) -> str:
        options = "".join(
            f'<option value="{e(run)}"{" selected" if run == chosen else ""}>{e(run)}</option>'
            for run in names
        )
        return f'<select id="{name}">{options}</select>'

    align = "".join(
        f'<option value="{e(t)}"{" selected" if n == 0 else ""}>{e(t)}</option>'
        for n, t in enumerate(triggers)
    )
    payload = inert.json_text(dict(tracks), ensure_ascii=False).replace("</", "<\\/")
    return (
        '<h2>Two trials side by side</h2><div class="filters" id="pair-pickers">'
        f"<label>top {picker('pair-a', first)}</label><label>bottom {picker('pair-b', second)}</label>"
        f'<label>aligned at <select id="pair-align"><option value="">the session start</option>{align}'
        "</select></label></div>"
        '<svg id="pair" viewBox="0 0 1200 120" width="1200" xmlns="http://www.w3.org/2000/svg"></svg>'
        '<p class="meta" id="pair-note"></p>'
        f'<script type="application/json" id="pair-data">{payload}</script>'
    )


PAIR_SCRIPT = """
(function () {
  var holder = document.getElementById('pair-data');
  if (!holder) { return; }
  var tracks = JSON.parse(holder.textContent), svg = document.getElementById('pair');
  var colors = {unlock: '#4c78a8', passed: '#54a24b', trigger: '#d62728', message: '#9467bd'};
  var ns = 'http://www.w3.org/2000/svg';
  function add(name, attrs, text) {
    var el = document.createElementNS(ns, name);
    Object.keys(attrs).forEach(function (k) { el.setAttribute(k, attrs[k]); });
    if (text) { el.textContent = text; }
    svg.appendChild(el);
    return el;
  }
  function draw() {
    var names = [document.getElementById('pair-a').value, document.getElementById('pair-b').value];
    var on = document.getElementById('pair-align').value, notes = [];
    var shifts = names.map(function (n) {
      var at = on && tracks[n] ? tracks[n].fired[on] : undefined;
      if (on && at === undefined) { notes.push(n + ': ' + on + ' did not fire; drawn from its start'); }
      return at === undefined ? 0 : at;
    });
    var lo = 0, hi = 1;
    names.forEach(function (n, i) {
      if (!tracks[n]) { return; }
      lo = Math.min(lo, -shifts[i]); hi = Math.max(hi, tracks[n].end - shifts[i]);
    });
    while (svg.firstChild) { svg.removeChild(svg.firstChild); }
    function x(t) { return 220 + 960 * (t - lo) / (hi - lo); }
    names.forEach(function (n, i) {
      var y = 20 + i * 44, track = tracks[n];
      add('text', {x: 4, y: y + 16}, n.length > 34 ? '…' + n.slice(-33) : n);
      if (!track) { return; }
      add('rect', {x: x(-shifts[i]), y: y, width: x(track.end - shifts[i]) - x(-shifts[i]), height: 28,
        fill: '#f4f4f4'});
      track.marks.forEach(function (m) {
        var at = x(m[0] - shifts[i]);
        var mark = add('line', {x1: at, y1: y, x2: at, y2: y + 28, stroke: colors[m[1]] || '#222',
          'stroke-width': 2, 'class': 'pair-mark'});
        add('title', {}, m[2]);
        mark.appendChild(svg.lastChild);
      });
    });
    add('line', {x1: x(0), y1: 12, x2: x(0), y2: 112, stroke: '#222', 'stroke-dasharray': '2 3'});
    add('text', {x: x(0) + 3, y: 118}, on ? on + ' fired (0 s)' : 'session start (0 s)');
    if (lo < 0) { add('text', {x: 220, y: 118}, lo.toFixed(1) + ' s'); }
    add('text', {x: 1180, y: 118, 'text-anchor': 'end'}, hi.toFixed(1) + ' s');
    document.getElementById('pair-note').textContent = notes.join('; ') ||
      'Blue: a phase unlocked; green: it first passed; red: a trigger fired; purple: a message arrived.';
  }
  ['pair-a', 'pair-b', 'pair-align'].forEach(function (id) {
    document.getElementById(id).addEventListener('change', draw);
  });
  draw();
})();
"""

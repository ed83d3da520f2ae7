"""``changeup view``'s run page: the report's headline and one timeline on one time axis.

The timeline (inline SVG) has a lane per phase (its band from the moment it unlocked, the share
of its tests passing as a step line), trigger firings with their cause, the messages delivered
(a click shows the message whole, below), and marks for the agent's commits and the hidden test
runs. Under it a scrubber walks the tested snapshots: each shows the workspace diff from the
snapshot before it (given by the caller, read from ``shadow.git``) and the tests whose verdict
changed there; the tests of an earlier phase that broke are listed with the snapshot that broke
them. Snapshots travel to the page as JSON inside a ``<script type="application/json">``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from orchestrator.log.records import Entry, WorkspaceCreated, graded_like
from orchestrator.log.report import Report
from orchestrator.render import inert
from orchestrator.render.view_site import page
from triggers import CommitMade, MessageDelivered, TriggerFired
from triggers.durations import clock

__all__ = ["Snapshot", "run_page", "snapshots_of"]

WIDTH, LEFT, RIGHT, LANE, TOP = 1200, 110, 20, 40, 44
COLORS = ("#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2", "#eeca3b")


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A tested snapshot of the workspace: when, its commit in ``shadow.git``, the commit before
    it (the baseline for the first), and each test whose verdict changed: ``(id, before, after)``."""

    t: float
    sha: str
    before: str
    changes: tuple[tuple[str, str, str], ...]


def snapshots_of(entries: Sequence[Entry]) -> list[Snapshot]:
    """The distinct snapshots the log's test runs graded, in order, each with its verdict changes."""
    before = next((e.record.baseline for e in entries if isinstance(e.record, WorkspaceCreated)), "")
    verdicts: dict[str, str] = {}
    seen: set[str] = set()
    found = []
    for entry in entries:
        record = graded_like(entry.record)
        if record is None or not record.snapshot or record.snapshot in seen:
            continue
        seen.add(record.snapshot)
        changes = []
        for phase in record.phases:
            for test in phase.tests:
                was = verdicts.get(test.id, "not run")
                if was != test.outcome:
                    changes.append((test.id, was, test.outcome))
                verdicts[test.id] = test.outcome
        found.append(Snapshot(entry.t, record.snapshot, before, tuple(changes)))
        before = record.snapshot
    return found


_e = inert.html

SCRIPT = """
(function () {
  var data = JSON.parse(document.getElementById('snapshot-data').textContent);
  var range = document.getElementById('scrubber'), out = document.getElementById('snapshot');
  function esc(s) { return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'); }
  function show(i) {
    var s = data[i];
    if (!s) { out.innerHTML = '<p class=meta>No snapshot was tested.</p>'; return; }
    var lines = s.diff.split('\\n').map(function (l) {
      var c = l.startsWith('+') ? 'add' : l.startsWith('-') ? 'del' : l.startsWith('@@') ? 'hunk' : '';
      return '<span class="' + c + '">' + esc(l) + '</span>';
    }).join('\\n');
    var changes = s.changes.map(function (c) {
      return '<li><code>' + esc(c[0]) + '</code>: ' + esc(c[1]) + ' → ' + esc(c[2]) + '</li>';
    }).join('');
    out.innerHTML = '<p><b>snapshot ' + (i + 1) + ' of ' + data.length + '</b> at ' + esc(s.at) +
      ' <code>' + esc(s.sha.slice(0, 12)) + '</code></p><h3>Verdicts that changed</h3>' +
      (changes ? '<ul>' + changes + '</ul>' : '<p class=meta>none</p>') +
      '<h3>Workspace diff from the snapshot before</h3><pre class="diff">' +
      (lines || '(no change)') + '</pre>';
    document.querySelectorAll('g.snap line').forEach(function (m, j) {
      m.setAttribute('stroke-width', j === i ? 3 : 1);
    });
  }
  if (range) {
    range.addEventListener('input', function () { show(parseInt(range.value, 10)); });
    document.querySelectorAll('[data-snapshot]').forEach(function (el) {
      el.addEventListener('click', function () {
        range.value = el.dataset.snapshot;
        show(parseInt(el.dataset.snapshot, 10));
      });
    });
  }
  show(0);
  document.querySelectorAll('[data-message]').forEach(function (mark) {
    mark.addEventListener('click', function () {
      var target = document.getElementById('message-' + mark.dataset.message);
      document.querySelectorAll('.chosen').forEach(function (c) { c.classList.remove('chosen'); });
      if (target) { target.open = true; target.classList.add('chosen'); target.scrollIntoView(); }
    });
  });
})();
"""


def _at(t: float) -> str:
    """A time on the session's clock at a resolution that fits: tenths of a second under two minutes."""
    return f"{t:.1f} s" if t < 120 else clock(t)


def run_page(report: Report, entries: Sequence[Entry], diffs: Mapping[str, str], index: str) -> str:
    """The run's page: ``entries`` its log (may be empty), ``diffs`` each snapshot's diff by its
    sha (a snapshot missing has none shown), ``index`` the link back to the index."""
    run, score = report.run, report.score
    snapshots = snapshots_of(entries)
    total = "no score" if score.total is None else f"score {score.total:.0%}"
    verdict = "full success" if score.full_success else "not a full success"
    mood = "warn" if score.total is None else "good" if score.full_success else "bad"
    data = [
        {
            "t": s.t,
            "at": _at(s.t),
            "sha": s.sha,
            "diff": diffs.get(s.sha, "(diff not available)"),
            "changes": [list(c) for c in s.changes],
        }
        for s in snapshots
    ]
    payload = inert.json_text(data, ensure_ascii=False).replace("</", "<\\/")
    scrubber = (
        f'<input id="scrubber" type="range" min="0" max="{max(len(snapshots) - 1, 0)}" value="0" '
        'style="width:100%">'
        if snapshots
        else ""
    )
    body = [
        f'<nav><a href="{_e(index)}">← all runs</a></nav>',
        f"<h1>{_e(run.challenge.title or run.challenge.id)}</h1>",
        f'<p class="meta">challenge <code>{_e(run.challenge.id)}</code> · agent <code>{_e(run.agent)}</code>'
        f" · started {_e(run.started_at)} · {_e(run.status)} ({_e(run.end_reason or '—')})"
        f" · session time {_at(float(run.elapsed))}</p>",
        f'<p class="headline {mood}" id="headline">{_e(total)} — {_e(verdict)}</p>',
        "<h2>Timeline</h2>",
        _timeline(report, entries, snapshots),
        '<p class="meta">Bands: each phase from the moment it unlocked; the line in a band: the share of '
        "its tests passing (bottom 0%, top 100%). Red dashes: a trigger fired (hover: its cause). "
        "Purple dots: a message delivered (click: its text). Black ticks: the agent's commits; "
        "grey ticks: hidden test runs (click: that snapshot). Across: session time.</p>",
        _phases(report),
        _triggers(report),
        "<h2>Snapshots</h2>",
        scrubber,
        '<div id="snapshot"></div>',
        f'<script type="application/json" id="snapshot-data">{payload}</script>',
        _broken(report, snapshots),
        _messages(report),
    ]
    return page(f"{run.challenge.id} · {run.agent}", "\n".join(b for b in body if b), SCRIPT)


def _timeline(report: Report, entries: Sequence[Entry], snapshots: Sequence[Snapshot]) -> str:
    end = max([e.t for e in entries] + [float(report.run.elapsed), 1.0])
    lanes = len(report.phases)
    bottom = TOP + LANE * lanes
    height = bottom + 56

    def x(t: float) -> float:
        return LEFT + (WIDTH - LEFT - RIGHT) * (t / end)

    out = [
        f'<svg id="timeline" role="img" aria-label="session timeline" viewBox="0 0 {WIDTH} {height}" '
        f'width="{WIDTH}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for index, phase in enumerate(report.phases):
        y, color = TOP + index * LANE, COLORS[index % len(COLORS)]
        out.append(f'<text x="4" y="{y + LANE / 2 + 4}">{_e(phase.id)}</text>')
        out.append(
            f'<rect x="{LEFT}" y="{y + 4}" width="{WIDTH - LEFT - RIGHT}" height="{LANE - 8}" '
            'fill="#f4f4f4"/>'
        )
        if phase.unlocked_at is not None:
            start = x(phase.unlocked_at)
            out.append(
                f'<rect class="band" data-phase="{_e(phase.id)}" x="{start:.1f}" y="{y + 4}" '
                f'width="{x(end) - start:.1f}" height="{LANE - 8}" fill="{color}" fill-opacity="0.15">'
                f"<title>{_e(phase.id)} unlocked at {_at(phase.unlocked_at)}</title></rect>"
            )
        steps = _steps(phase.id, entries, end)
        if steps:
            path = " ".join(f"{x(t):.1f},{y + LANE - 6 - (LANE - 12) * share:.1f}" for t, share in steps)
            out.append(
                f'<polyline class="ratio" data-phase="{_e(phase.id)}" points="{path}" fill="none" '
                f'stroke="{color}" stroke-width="2"/>'
            )
    delivered = {m.trigger: m.number for m in report.messages if m.delivered_at is not None}
    for entry in entries:
        record, at = entry.record, x(entry.t)
        if isinstance(record, TriggerFired):
            name = _e(record.trigger)
            out.append(
                f'<g class="trigger" data-trigger="{name}"><line x1="{at:.1f}" y1="{TOP - 10}" x2="{at:.1f}" '
                f'y2="{bottom}" stroke="#d62728" stroke-dasharray="4 3"/>'
                f'<text x="{at + 3:.1f}" y="{TOP - 14}" '
                f'fill="#d62728">⚡ {name}</text><title>{name} fired at {_at(entry.t)}: '
                f"{_e(record.cause)}</title></g>"
            )
        elif isinstance(record, MessageDelivered):
            number = delivered.get(record.trigger)
            mark = f' data-message="{number}"' if number is not None else ""
            out.append(
                f'<circle class="mark message"{mark} cx="{at:.1f}" cy="{bottom + 8}" r="5" fill="#9467bd">'
                f"<title>message of {_e(record.trigger)} delivered at {_at(entry.t)}</title></circle>"
            )
        elif isinstance(record, CommitMade):
            out.append(
                f'<g class="commit"><line x1="{at:.1f}" y1="{bottom + 16}" x2="{at:.1f}" y2="{bottom + 28}" '
                f'stroke="#222" stroke-width="2"/><title>commit {_e(record.sha[:12])} at {_at(entry.t)}: '
                f"{_e(record.message)}</title></g>"
            )
    for number, snapshot in enumerate(snapshots):
        at = x(snapshot.t)
        out.append(
            f'<g class="snap mark" data-snapshot="{number}">'
            f'<line x1="{at:.1f}" y1="{bottom + 30}" x2="{at:.1f}" '
            f'y2="{bottom + 42}" stroke="#888" stroke-width="1"/><rect x="{at - 4:.1f}" y="{bottom + 30}" '
            f'width="8" height="12" fill="transparent"/><title>snapshot {number + 1} tested at '
            f"{_at(snapshot.t)}: {len(snapshot.changes)} verdict(s) changed</title></g>"
        )
    for fraction in (0.0, 0.25, 0.5, 0.75, 1.0):
        at = LEFT + (WIDTH - LEFT - RIGHT) * fraction
        anchor = "end" if fraction == 1.0 else "start"
        out.append(f'<text x="{at:.1f}" y="{height - 2}" text-anchor="{anchor}">{_at(end * fraction)}</text>')
    out.append("</svg>")
    return "".join(out)


def _steps(phase: str, entries: Sequence[Entry], end: float) -> list[tuple[float, float]]:
    points: list[tuple[float, float]] = []
    for entry in entries:
        record = graded_like(entry.record)
        for result in record.phases if record else ():
            if result.phase == phase:
                total = result.passed + result.failed
                if points:
                    points.append((entry.t, points[-1][1]))  # a step, not a slope
                points.append((entry.t, result.passed / total if total else 0.0))
    if points:
        points.append((end, points[-1][1]))
    return points


def _broken(report: Report, snapshots: Sequence[Snapshot]) -> str:
    """Each test of an earlier phase that went from passing to not, with the snapshot that did it."""
    latest = report.phases[-1].id if report.phases else ""
    rows = [
        f"<li><code>{_e(test)}</code> {_e(was)} → {_e(now)} at snapshot "
        f'<a href="#snapshot" data-snapshot="{n}">'
        f"{n + 1}</a> ({_at(s.t)})</li>"
        for n, s in enumerate(snapshots)
        for test, was, now in s.changes
        if was == "passed" and now != "passed" and not test.startswith(f"{latest}/")
    ]
    listed = (
        f"<ul>{''.join(rows)}</ul>" if rows else "<p class=meta>None: no test of an earlier phase broke.</p>"
    )
    return f'<h2>Earlier tests that broke</h2><div id="broken">{listed}</div>'


def _messages(report: Report) -> str:
    items = "".join(
        f'<details class="message" id="message-{m.number}" open><summary>#{m.number} {_e(m.kind)} from '
        f"{_e(m.trigger)}, delivered {_at(m.delivered_at) if m.delivered_at is not None else 'never'}"
        f"</summary><pre>{_e(m.text)}</pre></details>"
        for m in report.messages
    )
    return f'<h2>Messages to the agent</h2><div id="messages">{items or "<p class=meta>none</p>"}</div>'


def _phases(report: Report) -> str:
    """Each phase: when it unlocked and by what, when it first passed, its tests and score."""
    rows = "".join(
        f'<tr data-phase-row="{_e(p.id)}"><td>{_e(p.id)}</td><td>{_e(p.title)}</td>'
        f"<td>{'—' if p.unlocked_at is None else _at(p.unlocked_at)}</td><td>{_e(p.unlocked_by or '—')}</td>"
        f"<td>{'—' if p.first_passed_at is None else _at(p.first_passed_at)}</td>"
        f'<td class="num">{p.scored.passed}/{p.scored.total}</td><td class="num">{p.score:.0%}</td></tr>'
        for p in report.phases
    )
    return (
        '<h2>Phases</h2><table id="phases"><thead><tr><th>phase</th><th>title</th><th>unlocked</th>'
        "<th>by</th>"
        f"<th>first passed</th><th>tests scored</th><th>score</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def _triggers(report: Report) -> str:
    """Each trigger: whether and when it fired, and why (or why not), in words."""
    rows = "".join(
        f'<tr data-trigger-row="{_e(t.id)}"><td>{_e(t.id)}</td>'
        f"<td>{_at(t.fired_at) if t.fired and t.fired_at is not None else 'not fired'}</td>"
        f"<td>{_e(t.cause)}</td></tr>"
        for t in report.triggers
    )
    return (
        '<h2>Triggers</h2><table id="triggers"><thead><tr><th>trigger</th><th>fired</th><th>cause</th></tr>'
        f"</thead><tbody>{rows}</tbody></table>"
    )

"""``report.html``: one self-contained page (no network) with the run's timeline and tables.

The timeline is an inline SVG drawn from the event log: one band per phase from the moment
it unlocked, the share of its tests passing over time as a step line inside the band,
markers for every trigger that fired, every message delivered, every commit and every test
run, and a time axis with ticks. Each trigger marker
carries ``data-trigger`` so tests (and people with devtools) can find it. Every value goes
through :func:`~orchestrator.render.inert.html`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from orchestrator.log.records import Entry, graded_like
from orchestrator.log.report import CriterionScore, Fraction, Report
from orchestrator.render import inert
from orchestrator.render.adaptation_view import adaptation_html
from orchestrator.render.model_usage_view import model_usage_html
from orchestrator.render.oracle_view import oracle_html
from orchestrator.render.phrases import (
    CHEATED,
    bounds_lines,
    budget_line,
    cause,
    cheated,
    cheating_line,
    duration,
    effects_line,
    failing_checks,
    groups_line,
    percent,
    phase_name,
    points,
    policy_note,
    ran,
    rescore_line,
    retirement_line,
    scope_line,
    score_formula,
    start_line,
    tests_cell,
    weight,
)
from triggers import CommitMade, MessageDelivered, TestsResult, TriggerFired

__all__ = ["report_html"]

WIDTH, LEFT, RIGHT, LANE, TOP = 960, 120, 20, 46, 40
COLORS = ("#4c78a8", "#f58518", "#54a24b", "#b279a2", "#e45756", "#72b7b2", "#eeca3b")

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 1000px; color: #222; }
h1 { font-size: 1.5rem; margin-bottom: .2rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
.headline { font-size: 1.1rem; font-weight: 600; padding: .5rem .8rem; border-radius: 6px; }
.good { background: #e6f4ea; color: #1e6b34; } .bad { background: #fde8e8; color: #9b1c1c; }
.warn { background: #fff4e0; color: #8a5300; }
table { border-collapse: collapse; width: 100%; margin-top: .5rem; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #e3e3e3; vertical-align: top; }
th { background: #f6f6f6; } .num { text-align: right; font-variant-numeric: tabular-nums; }
td .kind { color: #666; font-size: 12px; }
tr.critical td { background: #fde8e8; font-weight: 600; }
code { background: #f3f3f3; padding: 0 .25rem; border-radius: 3px; }
svg text { font: 11px system-ui, sans-serif; } .lit { stroke-width: 3; opacity: 1; }
.meta { color: #666; } .rescore { background: #e8f0fe; color: #1a3e8a; }
.legend { display: flex; flex-wrap: wrap; gap: 1.2rem; color: #444; font-size: 12px; margin: .3rem 0; }
.legend svg { vertical-align: middle; margin-right: .3rem; }
details { margin: .4rem 0; } summary { cursor: pointer; }
@media print { details > pre.message { display: block; } }
pre.message { white-space: pre-wrap; background: #f8f8f8; padding: .6rem; border-radius: 4px; }
"""

SCRIPT = """
document.querySelectorAll('tr[data-trigger]').forEach(function (row) {
  var marks = document.querySelectorAll('g.trigger[data-trigger="' + row.dataset.trigger + '"] line');
  row.addEventListener('mouseenter', function () { marks.forEach(function (m) { m.classList.add('lit'); }); });
  row.addEventListener('mouseleave', function () { marks.forEach(function (m) { m.classList.remove('lit'); }); });
});
document.body.dataset.ready = 'yes';
"""


_e = inert.html  # every value: control characters shown, then escaped for text or a quoted attribute


def report_html(report: Report, entries: Sequence[Entry]) -> str:
    """The whole page."""
    run = report.run
    score = report.score
    title = run.challenge.title or run.challenge.id
    headline, mood = _headline(report)
    rescore = rescore_line(report)
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)} — changeup report</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="headline rescore" id="rescore">{_e(rescore)}</p>' if rescore else "",
        f'<p class="meta">challenge <code>{_e(run.challenge.id)}</code> · agent <code>{_e(run.agent)}</code>'
        f" · started {_e(run.started_at)} · ran {_e(ran(run))} · ended "
        f"{_e(run.end_reason or run.status)}</p>",
        f'<p class="meta" id="start">{_e(start_line(report))}</p>' if start_line(report) else "",
        f'<p class="meta" id="budget">{_e(budget_line(report))}</p>' if budget_line(report) else "",
        f'<p class="headline {mood}">{_e(headline)}</p>',
        _cheating(report),
    ]
    if run.status == "invalid":
        parts.append(f'<p id="invalid">Invalid because: {_e(run.detail.strip())}</p>')
    else:
        parts.append(
            f"<p>Changed requirement (latest phase): {_ratio(score.changed)} · "
            f"preserved behaviour: {_ratio(score.preserved)}</p>"
        )
    if score.total is not None:
        parts.append(_score(report))
    parts += ["<h2>Timeline</h2>", _timeline(report, entries), LEGEND, _phases(report)]
    if report.rubric:
        parts.append(_rubric(report.rubric))
    parts += [
        _triggers(report),
        _messages(report),
        _failing(report),
        adaptation_html(report),
        _scope(report),
        _effects(report),
        oracle_html(report.oracle),
        _bounds(report),
        model_usage_html(report.model_usage),
    ]
    parts.append(_superseded(report))
    parts += [f"<script>{SCRIPT}</script>", "</body></html>"]
    return "\n".join(part for part in parts if part)


LEGEND = (
    '<div class="legend" id="legend">'
    '<span><svg width="22" height="12"><rect width="22" height="12" fill="#4c78a8" fill-opacity="0.15"/></svg>'
    "a phase, from the moment it unlocked</span>"
    '<span><svg width="22" height="12"><polyline points="0,11 8,11 8,2 22,2" fill="none" stroke="#4c78a8" '
    'stroke-width="2"/></svg>share of its tests passing (bottom of the band 0%, top 100%)</span>'
    '<span><svg width="12" height="12"><line x1="6" y1="0" x2="6" y2="12" stroke="#d62728" '
    'stroke-dasharray="4 3"/></svg>a trigger fired</span>'
    '<span><svg width="12" height="12"><circle cx="6" cy="6" r="4" fill="#9467bd"/></svg>'
    "a message delivered to the agent</span>"
    '<span><svg width="12" height="12"><rect x="3" y="3" width="7" height="7" fill="#1f77b4"/></svg>'
    "a commit</span>"
    '<span><svg width="12" height="12"><line x1="6" y1="0" x2="6" y2="12" stroke="#555" stroke-width="2"/>'
    "</svg>a hidden test run</span>"
    "<span>Across: session time since the start (the session clock, which skips ahead while the "
    "agent is idle and only time can fire a trigger).</span>"
    "</div>"
)


def _cheating(report: Report) -> str:
    """The honeypot finding, as loud as a headline when the run cheated."""
    line = cheating_line(report.cheating)
    if line is None:
        return ""
    if report.cheating is not None and report.cheating.cheated:
        return f'<p class="headline bad" id="cheating">{_e(line)}</p>'
    return f'<p class="meta" id="cheating">{_e(line[0].upper() + line[1:])}.</p>'


def _headline(report: Report) -> tuple[str, str]:
    run, score = report.run, report.score
    if run.status == "invalid":
        return "No score: the run is invalid (an environment failure, not the agent's).", "warn"
    if score.critical_failures:
        names = ", ".join(score.critical_failures)
        return (
            f"CRITICAL FAILURE: {names} — no other score cancels it. Score {percent(score.total)}.",
            "bad",
        )
    verdict = "Full success" if score.full_success else "Not a full success"
    tail = "" if run.status == "completed" else f" (run {run.status})"
    if cheated(report):
        return f"Score {percent(score.total)} — {CHEATED}{tail}.", "bad"
    return f"Score {percent(score.total)} — {verdict}{tail}.", "good" if score.full_success else "bad"


def _ratio(part: Fraction) -> str:
    return f"{part.passed}/{part.total}" if part.total else "—"


def _timeline(report: Report, entries: Sequence[Entry]) -> str:
    phases = [p.id for p in report.phases]
    end = float(max([e.t for e in entries] + [1.0]))
    height = TOP + LANE * len(phases) + 62

    def x(t: float) -> float:
        return LEFT + (WIDTH - LEFT - RIGHT) * (t / end)

    out = [
        f'<svg id="timeline" role="img" aria-label="session timeline" viewBox="0 0 {WIDTH} {height}" '
        f'width="100%" xmlns="http://www.w3.org/2000/svg">'
    ]
    for index, phase in enumerate(report.phases):
        y = TOP + index * LANE
        color = COLORS[index % len(COLORS)]
        out.append(f'<text x="4" y="{y + LANE / 2 + 4}">{_e(phase.id)}</text>')
        out.append(
            f'<rect x="{LEFT}" y="{y + 4}" width="{WIDTH - LEFT - RIGHT}" height="{LANE - 8}" fill="#f4f4f4"/>'
        )
        if phase.unlocked_at is not None:
            start = x(phase.unlocked_at)
            out.append(
                f'<rect class="band" data-phase="{_e(phase.id)}" x="{start:.1f}" y="{y + 4}" '
                f'width="{x(end) - start:.1f}" height="{LANE - 8}" fill="{color}" fill-opacity="0.15">'
                f"<title>{_e(phase.id)} unlocked at {duration(phase.unlocked_at)}</title></rect>"
            )
        points = _ratio_steps(phase.id, entries, end)
        if points:
            path = " ".join(f"{x(t):.1f},{y + LANE - 6 - (LANE - 12) * share:.1f}" for t, share in points)
            out.append(
                f'<polyline class="ratio" data-phase="{_e(phase.id)}" points="{path}" fill="none" '
                f'stroke="{color}" stroke-width="2"/>'
            )
    bottom = TOP + LANE * len(phases)
    for entry in entries:
        record, at = entry.record, x(entry.t)
        if isinstance(record, TriggerFired):
            trigger = _e(record.trigger)
            out.append(
                f'<g class="trigger" data-trigger="{trigger}"><line x1="{at:.1f}" y1="{TOP - 8}" '
                f'x2="{at:.1f}" y2="{bottom}" stroke="#d62728" stroke-dasharray="4 3" opacity="0.8"/>'
                f'<text x="{at + 3:.1f}" y="{TOP - 12}" fill="#d62728">⚡ {trigger}</text>'
                f"<title>{trigger} fired at {duration(entry.t)}: {_e(cause(record.cause))}</title></g>"
            )
        elif isinstance(record, MessageDelivered):
            trigger = _e(record.trigger)
            out.append(
                f'<circle class="message" data-message="{trigger}" cx="{at:.1f}" cy="{bottom + 10}" '
                f'r="4" fill="#9467bd"><title>{trigger} delivered at {duration(entry.t)}</title>'
                "</circle>"
            )
        elif isinstance(record, CommitMade):
            sha = _e(record.sha[:10])
            out.append(
                f'<rect class="commit" data-commit="{sha}" x="{at - 3.5:.1f}" y="{bottom + 20}" width="7" '
                f'height="7" fill="#1f77b4"><title>commit {sha} at {duration(entry.t)}: '
                f"{_e(record.message)}</title></rect>"
            )
        elif isinstance(record, TestsResult):
            passed = sum(p.passed for p in record.phases)
            total = sum(p.passed + p.failed for p in record.phases)
            out.append(
                f'<line class="test-run" x1="{at:.1f}" y1="{bottom + 30}" x2="{at:.1f}" y2="{bottom + 40}" '
                f'stroke="#555" stroke-width="2"><title>hidden tests ran at {duration(entry.t)}: '
                f"{_e(record.status)}, {passed}/{total} passing</title></line>"
            )
    out += _axis(x, end, TOP - 8, bottom + 40, height)
    out.append("</svg>")
    return "".join(out)


def _axis(x: Callable[[float], float], end: float, top: float, bottom: float, height: float) -> list[str]:
    """Five ticks across, each a faint line over the lanes and its time below them."""
    out = []
    for index in range(5):
        t = end * index / 4
        at = x(t)
        anchor = ("start", "middle", "middle", "middle", "end")[index]
        out.append(
            f'<line class="tick" x1="{at:.1f}" y1="{top}" x2="{at:.1f}" y2="{bottom}" stroke="#999" '
            f'stroke-opacity="0.35"/><text x="{at:.1f}" y="{height - 6}" text-anchor="{anchor}" '
            f'class="meta">{duration(t)}</text>'
        )
    return out


def _ratio_steps(phase: str, entries: Sequence[Entry], end: float) -> list[tuple[float, float]]:
    points: list[tuple[float, float]] = []
    for entry in entries:
        record = graded_like(entry.record)
        if record is None:
            continue
        for result in record.phases:
            if result.phase != phase:
                continue
            share = result.passed / result.total if result.total else 0.0
            if points:
                points.append((entry.t, points[-1][1]))  # a step, not a slope
            points.append((entry.t, share))
    if points:
        points.append((end, points[-1][1]))
    return points


def _phases(report: Report) -> str:
    rows = "".join(
        f"<tr><td>{_e(phase_name(p))}</td><td class=num>{p.weight:g}</td>"
        f"<td>{duration(p.unlocked_at)}</td><td>{_e(p.unlocked_by or '—')}</td><td>{duration(p.first_passed_at)}</td>"
        f"<td class=num>{_e(tests_cell(p))}</td>"
        f"<td class=num>{percent(p.score)}</td></tr>"
        for p in report.phases
    )
    grouped = [(p, groups_line(p, " · ")) for p in report.phases if p.groups]
    groups = "".join(
        f'<li data-phase="{_e(p.id)}">{_e(p.id)} {_e(tests_cell(p))}: {_e(line)}'
        + (f" — {_e(policy_note(p))}" if policy_note(p) else "")
        + "</li>"
        for p, line in grouped
    )
    return (
        '<h2>Phases</h2><table><tr><th>phase</th><th class="num">weight</th><th>unlocked</th><th>by</th>'
        f'<th>first passed</th><th class="num">tests</th><th class="num">score</th></tr>{rows}</table>'
        + (f'<h3>Test groups</h3><ul id="groups">{groups}</ul>' if groups else "")
    )


def _rubric(rubric: list[CriterionScore]) -> str:
    rows = []
    for c in rubric:
        score = percent(c.score)
        if c.critical_failure:
            score = f"CRITICAL FAILURE ({score})"
        findings = "<br>".join(_e(f) for f in c.findings[:8]) or "—"
        rows.append(
            f'<tr class="{"critical" if c.critical_failure else ""}"><td>{_e(c.id)}'
            f"{' — ' + _e(c.title) if c.title else ''}</td><td class=num>{weight(c.weight)}</td>"
            f"<td class=num>{score}</td><td>{findings}</td></tr>"
        )
    return (
        '<h2>Rubric</h2><table><tr><th>criterion</th><th class="num">weight</th><th class="num">score</th>'
        "<th>evidence</th></tr>" + "".join(rows) + "</table>"
    )


def _triggers(report: Report) -> str:
    rows = "".join(
        f'<tr data-trigger="{_e(t.id)}"><td>{_e(t.id)}</td><td>{_e(t.kind)}</td>'
        f"<td><code>{_e(t.condition)}</code></td><td>{duration(t.fired_at) if t.fired else 'no'}</td>"
        f"<td>{_e(cause(t.cause))}</td></tr>"
        for t in report.triggers
    )
    return (
        "<h2>Triggers</h2><table><tr><th>trigger</th><th>kind</th><th>condition</th><th>fired</th>"
        f"<th>cause</th></tr>{rows}</table>"
    )


def _failing(report: Report) -> str:
    items, none = failing_checks(report)
    body = (
        "<ul>" + "".join(f"<li>{_e(item)}</li>" for item in items) + "</ul>"
        if items
        else f"<p>{_e(none)}</p>"
    )
    return f'<h2>Failing checks</h2><div id="failing">{body}</div>'


def _score(report: Report) -> str:
    score = report.score
    rows = "".join(
        f'<tr><td>{_e(p.id)} <span class="kind">({_e(p.kind)})</span></td><td class=num>{p.weight:g}</td>'
        f"<td class=num>{percent(p.score)}</td><td class=num>{points(p.contribution)}</td></tr>"
        for p in report.scoring.parts
    )
    return (
        f'<h2>How the score is computed</h2><p id="formula">{_e(score_formula(report))}.</p>'
        '<table id="score"><tr><th>part</th><th class="num">weight</th><th class="num">score</th>'
        f'<th class="num">points (of 100)</th></tr>{rows}<tr><th>total</th><th></th><th></th>'
        f"<th class=num>{percent(score.total)}</th></tr></table>"
    )


def _messages(report: Report) -> str:
    messages = report.messages or []
    if not messages:
        return ""
    items = "".join(
        f'<details class="message" data-message="{m.number}" open><summary><b>{m.number}. {_e(m.trigger)}</b> '
        f"({_e(m.kind)}): queued {duration(m.queued_at)}, delivered "
        f"{duration(m.delivered_at) if m.delivered_at is not None else 'never'}</summary>"
        f'<pre class="message">{_e(m.text)}</pre></details>'
        for m in messages
    )
    return f'<h2>Messages to the agent</h2><div id="messages">{items}</div>'


def _bounds(report: Report) -> str:
    lines = bounds_lines(report)
    if not lines:
        return ""
    return '<h2>Bounds</h2><ul id="bounds">' + "".join(f"<li>{_e(line)}</li>" for line in lines) + "</ul>"


def _effects(report: Report) -> str:
    line = effects_line(report.effects)
    if line is None:
        return ""
    return f'<h2>Prohibited effects</h2><p id="effects">{_e(line[0].upper() + line[1:])}.</p>'


def _scope(report: Report) -> str:
    line = scope_line(report.scope)
    if line is None or report.scope is None:
        return ""
    globs = ", ".join(f"<code>{_e(g)}</code>" for g in report.scope.allowed_paths)
    return f'<h2>Scope</h2><p id="scope">{_e(line)}.</p><p class="meta">Allowed paths: {globs}.</p>'


def _superseded(report: Report) -> str:
    items = "".join(
        f"<li><code>{_e(test)}</code> (replaced by {_e(p.id)})</li>"
        for p in report.phases
        for test in p.superseded
    )
    items += "".join(
        f'<li data-retired="{_e(p.id)}">{_e(line)}</li>'
        for p in report.phases
        if (line := retirement_line(p)) is not None
    )
    if not items:
        return ""
    return f'<h2>Superseded tests</h2><ul id="superseded">{items}</ul>'

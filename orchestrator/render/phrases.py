"""How a report's values are said, in every format: times, scores, test counts, causes, headlines.

The terminal summary (:mod:`~orchestrator.render.terminal`), ``report.md``
(:mod:`~orchestrator.render.markdown`), the HTML report and the timeline all say a value the
same way because they all say it through here.
"""

from __future__ import annotations

from typing import Any

from orchestrator.log.records import EffectFinding
from orchestrator.log.report import (
    Cheating,
    EffectFound,
    Effects,
    Fraction,
    PhaseOutcome,
    Report,
    RunInfo,
    Scope,
    Usage,
    UsageFigure,
)
from triggers.durations import DurationError, parse_duration

__all__ = [
    "CHEATED",
    "MISSING",
    "agent_failures",
    "bounds_lines",
    "budget_line",
    "cause",
    "cheated",
    "cheating_line",
    "cost_text",
    "duration",
    "effects_line",
    "failing_checks",
    "first_line",
    "groups_line",
    "headline",
    "made_in",
    "percent",
    "phase_good",
    "phase_name",
    "points",
    "policy_note",
    "ran",
    "ratio",
    "rescore_line",
    "retirement_line",
    "scope_line",
    "score_formula",
    "start_line",
    "tests_cell",
    "tests_in_verdict",
    "tokens_text",
    "usage_line",
    "weight",
]


def duration(seconds: float | None) -> str:
    """How long something took: ``0.4s``, ``12.3s``, ``2m 05s``, ``1h 02m 05s``; None → ``—``."""
    if seconds is None:
        return "—"
    if seconds < 60:
        return f"{seconds:.1f}s"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes:02d}m {secs:02d}s" if hours else f"{minutes}m {secs:02d}s"


def cause(text: str) -> str:
    """A recorded trigger cause with its moment on the run's clock: ``… at 6392ms`` → ``… at 00:06``."""
    head, at, when = text.rpartition(" at ")
    try:
        seconds = parse_duration(when)
    except DurationError:
        return text
    return f"{head} at {duration(seconds)}" if at else text


def points(contribution: float | None) -> str:
    """A part's contribution to the total in points of 100 (``0.035`` → ``3.5``); None → not judged."""
    return "not judged" if contribution is None else f"{contribution * 100:.1f}"


def weight(value: float) -> str:
    """A rubric criterion's weight; 0 means it is reported, not scored."""
    return f"{value:g}" if value else "not scored"


def ratio(part: Fraction) -> str:
    """``3/5`` tests; ``—`` for none."""
    return f"{part.passed}/{part.total}" if part.total else "—"


def tests_cell(phase: PhaseOutcome) -> str:
    """``3/3``, ``3/3 (2 superseded)`` when later phases superseded some of its tests, ``3/3
    (retired)`` when its tests stopped running (its ``retire:``), or ``locked``."""
    if not phase.unlocked:
        return "locked"
    retired = phase.retired
    note = f" ({len(retired)} superseded)" if retired else ""
    note += " (retired)" if phase.retirement else ""
    return f"{phase.passed}/{phase.total}{note}"


def retirement_line(phase: PhaseOutcome) -> str | None:
    """Why a retired phase's tests no longer ran and what it is scored on; None for any other."""
    retirement = phase.retirement
    if not retirement:
        return None
    return (
        f"{phase.id}: its tests stopped running when {retirement.by} unlocked at "
        f"{duration(retirement.at)} (retire: {retirement.rule}); it is scored on its last run before then"
    )


def groups_line(phase: PhaseOutcome, sep: str = "  ") -> str | None:
    """A phase's test groups, e.g. ``core 5/5 ✓  functionality 2/3  error 0/1 (not in policy)``;
    None for a phase whose verdict has no groups (none declared, locked, or an older log)."""
    groups = phase.groups
    if not groups:
        return None
    policy = phase.policy
    return sep.join(
        f"{g.name} {g.passed}/{g.total}"
        + (" ✓" if g.failed == 0 and g.passed > 0 else "")
        + (" (not in policy)" if policy and not g.in_policy else "")
        for g in groups
    )


def policy_note(phase: PhaseOutcome) -> str:
    """``scored on core: 5/5`` for a phase whose score follows its pass policy, else ``""``."""
    if not phase.policy or not phase.groups:
        return ""
    scored = phase.scored
    return f"scored on {', '.join(phase.policy)}: {scored.passed}/{scored.total}"


def phase_good(phase: PhaseOutcome) -> bool:
    """The phase reached full marks (under its pass policy)."""
    return phase.full_marks


def rescore_line(report: Report) -> str | None:
    """The line that says a report is a re-score, or None for a report of a run."""
    rescore = report.rescore
    if not rescore:
        return None
    original = rescore.original_score
    was = (
        "the original run had no score" if original is None else f"the original score was {percent(original)}"
    )
    return f"Re-score of {rescore.run} with {rescore.challenge} — the agent did not run again; {was}"


def scope_line(scope: Scope | None) -> str | None:
    """``scope: …`` for a challenge that declares ``allowed_paths`` (a report's ``scope``), else None."""
    if scope is None:
        return None
    findings = scope.findings
    if not findings:
        return "scope: every change is inside allowed_paths"
    files = "file" if len(findings) == 1 else "files"
    listed = ", ".join(f"{f.path} ({f.change})" for f in findings)
    return f"scope: {len(findings)} {files} changed outside allowed_paths: {listed}"


#: A cheating run's verdict, where its score would be called a success or not.
CHEATED = "CHEATING: a honeypot test passed, so the score says nothing of the agent's work"


def cheated(report: Report) -> bool:
    """Whether the run passed a honeypot test (no honest solution can)."""
    return report.cheating is not None and report.cheating.cheated


def cheating_line(cheating: Cheating | None) -> str | None:
    """``CHEATING: …`` when the run passed a honeypot test (a report's ``cheating``), what its
    honeypots came to otherwise; None for a challenge without honeypot phases."""
    if cheating is None:
        return None
    named = ", ".join(cheating.honeypots)
    if cheating.cheated:
        listed = "; ".join(f"{p.test} (first at {duration(p.at)}, {p.during})" for p in cheating.passes)
        return (
            f"CHEATING: passed {len(cheating.passes)} honeypot test(s) of {named}, which no honest "
            f"solution can pass: {listed}"
        )
    if not cheating.exposed:
        return f"honeypot ({named}): not reached, so nothing to say about cheating"
    return f"honeypot ({named}): no honeypot test passed, no sign of cheating"


def phase_name(phase: PhaseOutcome) -> str:
    """A phase's id and title, and ``(honeypot, not scored)`` for a honeypot."""
    name = phase.id + (f" — {phase.title}" if phase.title else "")
    return name + (" (honeypot, not scored)" if phase.honeypot else "")


def effects_line(effects: Effects | None) -> str | None:
    """``prohibited effects: …`` for a challenge that declares ``prohibited_effects`` (a report's
    ``effects``), else None."""
    if effects is None:
        return None
    named = ", ".join(effects.prohibited)
    if not effects.watched:
        return f"prohibited effects ({named}): not observed, no test run of the final workspace was watched"
    findings = effects.findings
    if not findings:
        return f"prohibited effects ({named}): none in the hidden test runs of the final workspace"
    listed = "; ".join(f"{f.effect}: {f.detail} ({made_in(f)})" for f in findings)
    return f"prohibited effects: {len(findings)} in the hidden test runs of the final workspace: {listed}"


def bounds_lines(report: Report) -> list[str]:
    """What was not bounded, what the agent went over, how long it was frozen, and the test runs
    that went over their limits (none for a run made before the bounds were logged)."""
    bounds = report.bounds
    if bounds is None:
        return []
    lines = [f"NOT BOUNDED: {warning}" for warning in bounds.warnings]
    for over in bounds.agent_over_limits:
        then = f"; {over.action}" if over.action else ""
        lines.append(
            f"the agent went over its {over.resource} limit ({duration(over.t)}): {over.detail}{then}"
        )
    frozen = bounds.frozen
    if frozen.runs:
        killed = frozen.killed
        lines.append(
            f"the agent was frozen {duration(frozen.seconds)} in all, while {frozen.runs} hidden "
            f"test runs ran"
            + (
                f" ({killed} time{'s' if killed > 1 else ''} it would not freeze and was killed)"
                if killed
                else ""
            )
        )
    runs = bounds.test_runs_over_limits
    if runs:
        many = runs > 1
        lines.append(
            f"{runs} hidden test run{'s' if many else ''} went over {'their' if many else 'its'} limits"
        )
    return lines


def made_in(finding: EffectFound | EffectFinding) -> str:
    """Where a prohibited effect was made: ``in phase1/test_x.py::test_y and 3 other tests`` (a
    report's finding, or a comparison's)."""
    where = f"in {finding.test}" if finding.test else "while collecting the tests"
    others = finding.tests - 1
    return where + (f" and {others} other test{'s' if others > 1 else ''}" if others else "")


def budget_line(report: Report) -> str | None:
    """``model budget requests=3: spent — …`` for a run made with a budget, else None."""
    budget = report.budget
    if budget is None:
        return None
    used = f"{budget.requests} request(s), {budget.tokens} tokens, ${budget.cost_usd:.4f}"
    used += f" ({budget.unpriced} unpriced)" if budget.unpriced else ""
    if not budget.exhausted:
        return f"model budget {budget.limits}: used {used}"
    refused = f"{budget.refused} request(s) refused"
    return f"model budget {budget.limits}: spent — the session ended budget_exhausted; used {used}; {refused}"


def start_line(report: Report) -> str | None:
    """``started at phase2: …`` for a session started at a later phase, else None."""
    start = report.run.start_at
    if start is None:
        return None
    ids = [phase.id for phase in report.phases]
    earlier = ids[: ids.index(start)] if start in ids else ["the phases before it"]
    before = " and ".join([", ".join(earlier[:-1]), earlier[-1]] if len(earlier) > 1 else earlier)
    return (
        f"started at {start}: the workspace held the reference solution of {before}, committed, "
        f"and {start}'s message was the briefing"
    )


def score_formula(report: Report) -> str:
    """The total's arithmetic in one line: ``79% = (25 * 100% + …) / 100: …``."""
    score = report.score
    scoring = report.scoring
    parts = [p for p in scoring.parts if p.score is not None]
    terms = " + ".join(f"{p.weight:g} * {percent(p.score)}" for p in parts)
    weights = sum(p.weight for p in parts)
    over = (
        "the weighted mean of the rubric's scored criteria (phase tests count through them)"
        if scoring.method == "rubric"
        else "the weighted mean of the phases' scores"
    )
    return f"{percent(score.total)} = ({terms}) / {weights:g}: {over}"


def tests_in_verdict(report: Report) -> int:
    """How many tests the verdict holds, over every phase."""
    return sum(int(p.total) for p in report.phases)


def _outside(phase: PhaseOutcome) -> str:
    """``; outside phase2's pass policy`` for a failing test of a phase with full marks under
    its policy: every policy test passed, so this one is reported, not scored."""
    return f"; outside {phase.id}'s pass policy" if phase.policy and phase.full_marks else ""


def failing_checks(report: Report) -> tuple[list[str], str]:
    """The checks that fell short (failing tests, then criteria short of full marks), and what
    to say when there are none: a run with no test verdict never reads as all passing."""
    if report.run.status == "invalid":
        return [], "Not graded: the run is invalid, so no verdict says anything about the agent."
    items = [
        f"{test.id} ({test.outcome}{_outside(phase)})"
        + (f": {first_line(test.detail, 200)}" if test.detail else "")
        for phase in report.phases
        for test in phase.failing
    ]
    for criterion in report.rubric or []:
        if criterion.score is None or criterion.score < 1:
            evidence = f": {criterion.findings[0]}" if criterion.findings else ""
            items.append(
                f"criterion {criterion.id} ({percent(criterion.score, 'not judged')}, "
                f"weight {weight(criterion.weight)}){evidence}"
            )
    if tests_in_verdict(report) == 0:
        none = "No test verdict: no hidden test ran on an unlocked phase, so nothing passed."
        return items, none
    rubric = " and every rubric criterion has full marks" if report.rubric else ""
    return items, f"None: every test of every unlocked phase passes{rubric}."


def headline(report: Report) -> str:
    run = report.run
    score = report.score
    verdict = "FULL SUCCESS" if score.full_success else "not a full success"
    if run.status == "invalid":
        return "no score — the run is INVALID (an environment failure, not the agent's)"
    if cheated(report):
        verdict = CHEATED
    if score.critical_failures:
        verdict = "CRITICAL FAILURE: " + ", ".join(score.critical_failures) + " (no score cancels it)"
    total = "—" if score.total is None else f"{score.total * 100:.0f}%"
    line = f"score {total} — {verdict}"
    if score.incomplete:
        line += " — some criteria could not be judged"
    if run.status != "completed":
        line += f" — run {run.status.upper()}"
    return line


def ran(run: RunInfo) -> str:
    """How long the run took, as far as its log tells: wall time, and the session clock's apart
    when it skipped ahead to fire a timed trigger (``clock.skipped``)."""
    took = duration(run.elapsed)
    if run.wall is not None and run.elapsed - run.wall >= 0.05:
        took = (
            f"{duration(run.wall)} wall time, {duration(run.elapsed)} session time "
            f"(the session clock skipped {duration(run.elapsed - run.wall)} ahead while the agent was idle)"
        )
    if run.status in ("interrupted", "crashed") and run.end_reason is None:
        return f"{took} until its last record (it may have run on unrecorded)"
    return took


MISSING = "missing"


def tokens_text(value: int | None) -> str:
    return MISSING if value is None else f"{value:,}"


def cost_text(value: float | None) -> str:
    return MISSING if value is None else f"${value:.4f}"


def first_line(text: str | None, width: int = 120) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return (line[: width - 1] + "…" if len(line) > width else line).replace("|", "/") or "—"


def usage_line(usage: Usage) -> str:
    """The run's usage totals in a sentence; a figure no turn reported is called missing."""

    def part(figure: str, label: str, shown: Any) -> str:
        entry: UsageFigure = getattr(usage, figure)
        text = f"{label} {shown(entry.total)}"
        if entry.missing_turns and entry.total is not None:
            turns = ", ".join(map(str, entry.missing_turns))
            text += (
                f" (turn {turns} did not report)"
                if len(entry.missing_turns) == 1
                else f" (turns {turns} did not report)"
            )
        return text

    figures = ("input_tokens", "output_tokens", "cost_usd")
    parts = [
        part("input_tokens", "tokens in", tokens_text),
        part("output_tokens", "tokens out", tokens_text),
        part("cost_usd", "cost", cost_text),
    ]
    if all(getattr(usage, figure).total is None for figure in figures):
        parts = ["tokens and cost not reported"]
    return "; ".join([*parts, f"{usage.turns} turns, {duration(usage.seconds)} working"])


def percent(score: float | None, missing: str = "—") -> str:
    """``0.875`` → ``88%``; None (no score) → ``missing``."""
    return missing if score is None else f"{score * 100:.0f}%"


def agent_failures(report: Report) -> list[str]:
    """Each turn, or agent process, that exited non-zero: ``the agent failed: …``."""
    found = []
    for turn in report.turns:
        if turn.exit_code not in (0, None):
            who = "its process" if turn.end == "exited" else "it"
            found.append(f"the agent failed: in turn {turn.turn} {who} exited with {turn.exit_code}")
    return found

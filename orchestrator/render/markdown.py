"""``report.md``: a finished run's report as Markdown.

Every value taken from the report goes through :func:`~orchestrator.render.inert.markdown` (or,
for lines shown as written, :func:`~orchestrator.render.inert.markdown_block`): no raw HTML,
link, emphasis or table cell starts from what an agent wrote. The messages to the agent are
the challenge author's Markdown and are shown as such.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orchestrator.log.report import CriterionScore, Report
from orchestrator.render.adaptation_view import adaptation_markdown
from orchestrator.render.inert import markdown as md
from orchestrator.render.inert import markdown_block
from orchestrator.render.model_usage_view import model_usage_markdown
from orchestrator.render.oracle_view import ORACLE_TITLE, oracle_lines
from orchestrator.render.phrases import (
    agent_failures,
    bounds_lines,
    budget_line,
    cause,
    cheating_line,
    cost_text,
    duration,
    effects_line,
    failing_checks,
    first_line,
    groups_line,
    headline,
    percent,
    phase_name,
    points,
    policy_note,
    ran,
    ratio,
    rescore_line,
    retirement_line,
    scope_line,
    score_formula,
    start_line,
    tests_cell,
    tokens_text,
    usage_line,
    weight,
)

__all__ = ["report_markdown"]


def report_markdown(report: Report) -> str:
    """The report as Markdown."""
    run = report.run
    score = report.score
    challenge = run.challenge
    rescore = rescore_line(report)
    out = [f"# {md(challenge.title or challenge.id)}", ""]
    if rescore:
        out += [f"> **{md(rescore)}**", ""]
    start = start_line(report)
    out += [
        f"**{md(headline(report))}**",
        "",
        f"- challenge: {md(challenge.id)}" + (f" ({md(challenge.pattern)})" if challenge.pattern else ""),
        f"- agent: {md(run.agent)}",
        *([f"- {md(start)}"] if start else []),
        f"- started: {md(run.started_at)}; ran {md(ran(run))}",
        f"- ended: {md(run.end_reason or run.status)}"
        + (f" ({md(run.end_detail)})" if run.end_detail else ""),
    ]
    budget = budget_line(report)
    out += [f"- {md(budget)}"] if budget else []
    if run.status == "invalid":
        out.append(f"- invalid because: {md(first_line(run.detail, 300))}")
    else:
        out += [
            f"- changed requirement (latest phase): {ratio(score.changed)} tests pass; "
            f"preserved behaviour (earlier phases): {ratio(score.preserved)}",
            f"- graded on the {md(score.graded_on)}"
            + (
                f" — grading {md(score.grading_status)}: {md(score.grading_detail)}"
                if score.grading_status not in ("ok", "missing")
                else ""
            ),
        ]
    out += [f"- **{md(problem)}**" for problem in agent_failures(report)]
    cheating = cheating_line(report.cheating)
    if cheating is not None:
        out += [
            f"- **{md(cheating)}**" if report.cheating and report.cheating.cheated else f"- {md(cheating)}"
        ]
    if run.detail and "\n" in run.detail.strip():  # a traceback, in full
        out += ["", markdown_block(run.detail)]
    if score.total is not None:
        out += _score_markdown(report)
    out += [
        "",
        "## Phases",
        "",
        "| phase | weight | unlocked | by | first passed | tests | score |",
        "|---|---|---|---|---|---|---|",
    ]
    for phase in report.phases:
        name = md(phase_name(phase))
        by = md(phase.unlocked_by or "—")
        out.append(
            f"| {name} | {phase.weight:g} | {duration(phase.unlocked_at)} | {by} "
            f"| {duration(phase.first_passed_at)} | {md(tests_cell(phase))} | {phase.score * 100:.0f}% |"
        )
    if any(phase.retired for phase in report.phases):
        out += [
            "",
            "(N superseded): tests of the phase that a later phase replaced; "
            "they no longer run and are not counted.",
        ]
    grouped = [(phase, groups_line(phase, " · ")) for phase in report.phases if phase.groups]
    if grouped:
        out += ["", "### Test groups", ""]
        for phase, groups in grouped:
            note = policy_note(phase)
            line = f"{phase.id} {tests_cell(phase)}: {groups}" + (f" — {note}" if note else "")
            out.append(f"- {md(line)}")
    if report.rubric:
        out += _rubric_markdown(report.rubric)
    out += [
        "",
        "## Triggers",
        "",
        "| trigger | kind | condition | fired | cause |",
        "|---|---|---|---|---|",
    ]
    for trigger in report.triggers:
        when = duration(trigger.fired_at) if trigger.fired else "no"
        condition, because = md(trigger.condition), md(cause(trigger.cause))
        out.append(f"| {md(trigger.id)} | {md(trigger.kind)} | {condition} | {when} | {because} |")
    out += _messages_markdown(report)
    items, none = failing_checks(report)
    out += ["", "## Failing checks", ""]
    out += [f"- {md(item)}" for item in items] if items else [md(none)]
    scope = scope_line(report.scope)
    if scope is not None and report.scope is not None:
        out += ["", "## Scope", "", f"{md(scope[0].upper() + scope[1:])}."]
        out.append(f"Allowed paths: {', '.join(md(glob) for glob in report.scope.allowed_paths)}.")
    effects = effects_line(report.effects)
    if effects is not None:
        out += ["", "## Prohibited effects", "", f"{md(effects[0].upper() + effects[1:])}."]
    if oracle := oracle_lines(report.oracle):
        out += ["", f"## {ORACLE_TITLE}", "", *(f"- {md(line)}" for line in oracle)]
    bounds = bounds_lines(report)
    if bounds:
        out += ["", "## Bounds", "", *(f"- {md(line)}" for line in bounds)]
    superseded = [(p.id, s) for p in report.phases for s in p.superseded]
    retirements = [said for p in report.phases if (said := retirement_line(p)) is not None]
    if superseded or retirements:
        out += ["", "## Superseded tests", ""]
        out += [f"- {md(test)} (replaced by {md(phase_id)})" for phase_id, test in superseded]
        out += [f"- {md(line)}" for line in retirements]
    out += adaptation_markdown(report)
    out += _turns_markdown(report)
    out += model_usage_markdown(report.model_usage)
    activity = report.activity
    out += [
        "",
        f"_{activity.test_runs} test runs, {activity.agent_turns} agent turns, "
        f"{activity.commits} commits. Times are session time since the start (the session clock, "
        "which skips ahead while the agent is idle and only time can fire a trigger)._",
        "",
    ]
    return "\n".join(out)


def _score_markdown(report: Report) -> list[str]:
    score = report.score
    out = ["", "## How the score is computed", "", f"{md(score_formula(report))}.", ""]
    out += ["| part | weight | score | points (of 100) |", "|---|--:|--:|--:|"]
    for part in report.scoring.parts:
        share = points(part.contribution)
        name = md(f"{part.id} ({part.kind})")
        out.append(f"| {name} | {part.weight:g} | {percent(part.score, '—')} | {share} |")
    out.append(f"| **total** | | | **{percent(score.total)}** |")
    return out


def _messages_markdown(report: Report) -> list[str]:
    messages = report.messages or []
    if not messages:
        return []
    out = ["", "## Messages to the agent"]
    for message in messages:
        delivered = duration(message.delivered_at) if message.delivered_at is not None else "never"
        out += [
            "",
            f"**{message.number}. {md(message.trigger)}** ({md(message.kind)}): "
            f"queued {duration(message.queued_at)}, delivered {delivered}",
            "",
        ]
        out += [f"> {line}".rstrip() for line in message.text.rstrip().splitlines()]
    return out


def _turns_markdown(report: Report) -> list[str]:
    usage = report.usage
    if not usage.turns_reporting:
        return []
    out = [
        "",
        "## Agent turns",
        "",
        f"Usage: {md(usage_line(usage))}.",
        "",
        "| turn | messages | time | tokens in | tokens out | cost | final message |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in report.turns:
        messages = md(", ".join(row.messages) or "—")
        time = md(duration(row.seconds) + (f" ({row.end})" if row.end else ""))
        tokens = f"{tokens_text(row.input_tokens)} | {tokens_text(row.output_tokens)}"
        said = md(first_line(row.final_message))
        out.append(f"| {row.turn} | {messages} | {time} | {tokens} | {cost_text(row.cost_usd)} | {said} |")
    out += [
        "",
        "Full transcripts: " + (", ".join(md(r.transcript) for r in report.turns if r.transcript) or "—"),
    ]
    return out


def _rubric_markdown(rubric: list[CriterionScore]) -> list[str]:
    out = ["", "## Rubric", "", "| criterion | weight | score | evidence |", "|---|---|---|---|"]
    for criterion in rubric:
        name = md(criterion.id + (f" — {criterion.title}" if criterion.title else ""))
        score = percent(criterion.score, "not judged")
        if criterion.critical_failure:
            score = f"**CRITICAL FAILURE** ({score})"
        elif criterion.critical:
            score += " (critical)"
        findings = "; ".join(criterion.findings[:5]) or "—"
        if len(criterion.findings) > 5:
            findings += f"; … {len(criterion.findings) - 5} more"
        out.append(f"| {name} | {weight(criterion.weight)} | {score} | {md(findings)} |")
    for criterion in rubric:
        data: Mapping[str, Any] = criterion.data
        if "stages" in data:
            out += ["", f"### Quality curve ({md(criterion.id)})", ""]
            out += ["| stage | lines | lint / 1,000 lines | worst complexity | unused abstractions |"]
            out += ["|---|---|---|---|---|"]
            for row in data["stages"]:
                if not row["reached"]:
                    out.append(f"| {md(row['phase'])} | not reached | | | |")
                    continue
                out.append(
                    f"| {md(row['phase'])} | {row['lines']} | {row['findings_per_kloc']} | "
                    f"{row['worst_complexity']} | {len(row['unused'])} |"
                )
        if data.get("survival") is not None:
            out += [
                "",
                f"Code survival ({md(criterion.id)}): {data['survival']:.0%} of "
                f"{data['phase_lines']} lines kept (target {data['target']:.0%}).",
            ]
        if data.get("judge"):
            judge = data["judge"]
            out += ["", f"Judge ({md(judge['by'])}) on {md(criterion.id)}: {md(judge['reason'])}"]
    return out

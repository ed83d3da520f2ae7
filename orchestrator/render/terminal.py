"""The summary printed at the end of a run, as rich tables on the terminal.

Every text taken from the report goes through :func:`~orchestrator.render.inert.terminal`:
neither rich's markup nor a control character in it reaches the console as such.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from orchestrator.log.report import Report
from orchestrator.render.adaptation_view import adaptation_line
from orchestrator.render.inert import terminal
from orchestrator.render.model_usage_view import model_usage_line
from orchestrator.render.oracle_view import oracle_lines
from orchestrator.render.phrases import (
    bounds_lines,
    budget_line,
    cause,
    cheated,
    cheating_line,
    duration,
    effects_line,
    failing_checks,
    first_line,
    groups_line,
    headline,
    percent,
    phase_good,
    policy_note,
    rescore_line,
    retirement_line,
    scope_line,
    score_formula,
    start_line,
    tests_cell,
    usage_line,
    weight,
)

__all__ = ["print_outcome", "print_summary"]


def print_summary(report: Report, console: Console) -> None:
    """The end-of-run summary: one row per phase, then the triggers and the headline."""
    rescore = rescore_line(report)
    if rescore:
        console.print(f"[bold]{terminal(rescore)}[/]", highlight=False)
    if report.run.status == "invalid":  # nothing of the agent was measured: no tables
        console.print(f"[bold yellow]{terminal(headline(report))}[/]")
        reason = first_line(report.run.detail, 300)
        console.print(f"  invalid because: {terminal(reason)}", highlight=False)
        return
    table = Table(
        title=terminal(f"{report.run.challenge.id} with {report.run.agent}"),
        title_justify="left",
    )
    for column in ("phase", "unlocked", "by", "first passed", "tests", "score"):
        table.add_column(column, justify="right" if column in ("tests", "score") else "left")
    for phase in report.phases:
        style = "green" if phase_good(phase) else ("dim" if not phase.unlocked else "red")
        table.add_row(
            terminal(phase.id + (" (honeypot, not scored)" if phase.honeypot else "")),
            duration(phase.unlocked_at),
            terminal(phase.unlocked_by or "—"),
            duration(phase.first_passed_at),
            terminal(tests_cell(phase)),
            f"{phase.score * 100:.0f}%",
            style=style,
        )
    console.print(table)
    for phase in report.phases:
        groups = groups_line(phase)
        if groups is not None:
            note = policy_note(phase)
            line = f"{phase.id}  {tests_cell(phase)}  {groups}" + (f"  — {note}" if note else "")
            console.print(f"  {terminal(line)}", highlight=False)
    start = start_line(report)
    if start is not None:
        console.print(f"  {terminal(start)}", highlight=False)
    budget = budget_line(report)
    if budget is not None:
        console.print(f"  {terminal(budget)}", highlight=False)
    for phase in report.phases:
        if phase.retired:
            by = ", ".join(sorted({r.by for r in phase.retired}))
            console.print(
                terminal(
                    f"  {phase.id}: {len(phase.retired)} superseded test(s) no longer run since {by} "
                    "(a test count taken before then included them)"
                ),
                highlight=False,
            )
        retirement = retirement_line(phase)
        if retirement is not None:
            console.print(f"  {terminal(retirement)}", highlight=False)
    if report.rubric:
        rubric = Table(title="rubric", title_justify="left")
        for column in ("criterion", "weight", "score"):
            rubric.add_column(column, justify="left" if column == "criterion" else "right")
        for criterion in report.rubric:
            score = percent(criterion.score, "not judged")
            style = "green" if criterion.score == 1 else "red"
            if criterion.critical_failure:
                score, style = f"CRITICAL ({score})", "bold red"
            rubric.add_row(terminal(criterion.id), weight(criterion.weight), terminal(score), style=style)
        console.print(rubric)
        for criterion in report.rubric:
            if not criterion.weight:  # "not scored" alone leaves open why the row is there
                critical = "; its failure is a critical failure" if criterion.critical else ""
                console.print(
                    f"  {terminal(criterion.id)}: {terminal(criterion.title)}: not scored (weight 0), so not "
                    f"in the total, but short of 100% it blocks full success{critical}",
                    highlight=False,
                )
    for trigger in report.triggers:
        mark = "[green]fired[/]" if trigger.fired else "[dim]not fired[/]"
        console.print(f"  trigger [bold]{terminal(trigger.id)}[/] {mark}: {terminal(cause(trigger.cause))}")
    print_outcome(report, console)


def print_outcome(report: Report, console: Console) -> None:
    """What a run came to: failing checks, usage, scope, how the total is made, the headline."""
    items, _ = failing_checks(report)
    for item in items:
        console.print(f"  [red]✗[/] {terminal(item)}", highlight=False)
    usage = report.usage
    if usage.turns_reporting:
        console.print(f"  agent usage: {terminal(usage_line(usage))}", highlight=False)
    if report.model_usage is not None:
        console.print(f"  {terminal(model_usage_line(report.model_usage))}", highlight=False)
    adapted = [adaptation_line(row) for row in report.adaptation]
    for line in (
        *adapted,
        scope_line(report.scope),
        effects_line(report.effects),
        *oracle_lines(report.oracle),
    ):
        if line is not None:
            console.print(f"  {terminal(line)}", highlight=False)
    for line in bounds_lines(report):
        if line is not None:
            console.print(f"  {terminal(line)}", highlight=False)
    if report.score.total is not None:
        console.print(f"  score: {terminal(score_formula(report))}", highlight=False)
    style = "bold red" if cheated(report) else "bold green" if report.score.full_success else "bold yellow"
    console.print(f"[{style}]{terminal(headline(report))}[/]")
    cheating = cheating_line(report.cheating)
    if cheating is not None:
        loud = report.cheating is not None and report.cheating.cheated
        console.print(
            f"[bold red]{terminal(cheating)}[/]" if loud else f"  {terminal(cheating)}", highlight=False
        )

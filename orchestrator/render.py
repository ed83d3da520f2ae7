"""Reports for people: ``report.md`` and the summary table printed at the end of a run."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = ["clock", "print_summary", "report_markdown"]


def clock(seconds: float | None) -> str:
    """``754.2`` → ``12:34``; None → ``—``."""
    if seconds is None:
        return "—"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def _ratio(part: dict[str, int]) -> str:
    return f"{part['passed']}/{part['total']}" if part["total"] else "—"


def _headline(report: dict[str, Any]) -> str:
    run = report["run"]
    score = report["score"]
    verdict = "FULL SUCCESS" if score["full_success"] else "not a full success"
    if score["total"] is None:
        return f"no score — the run is {run['status'].upper()} (an environment failure, not the agent's)"
    line = f"score {score['total'] * 100:.0f}% — {verdict}"
    if run["status"] != "completed":
        line += f" — run {run['status'].upper()}"
    return line


def report_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown."""
    run = report["run"]
    score = report["score"]
    challenge = run["challenge"]
    out = [
        f"# {challenge['title'] or challenge['id']}",
        "",
        f"**{_headline(report)}**",
        "",
        f"- challenge: `{challenge['id']}`" + (f" ({challenge['pattern']})" if challenge["pattern"] else ""),
        f"- agent: `{run['agent']}`",
        f"- started: {run['started_at']}; ran {clock(run['elapsed'])}",
        f"- ended: {run['end_reason'] or run['status']}"
        + (f" ({run['end_detail']})" if run["end_detail"] else ""),
        f"- changed requirement (latest phase): {_ratio(score['changed'])} tests pass; "
        f"preserved behaviour (earlier phases): {_ratio(score['preserved'])}",
        f"- graded on the {score['graded_on']}"
        + (
            f" — grading {score['grading_status']}: {score['grading_detail']}"
            if score["grading_status"] != "ok"
            else ""
        ),
    ]
    if run["detail"]:
        out += ["", "```", run["detail"], "```"]
    out += [
        "",
        "## Phases",
        "",
        "| phase | weight | unlocked | by | first passed | tests | score |",
        "|---|---|---|---|---|---|---|",
    ]
    for phase in report["phases"]:
        name = phase["id"] + (f" — {phase['title']}" if phase["title"] else "")
        tests = f"{phase['passed']}/{phase['total']}" if phase["unlocked"] else "locked"
        out.append(
            f"| {name} | {phase['weight']:g} | {clock(phase['unlocked_at'])} | {phase['unlocked_by'] or '—'} "
            f"| {clock(phase['first_passed_at'])} | {tests} | {phase['score'] * 100:.0f}% |"
        )
    out += [
        "",
        "## Triggers",
        "",
        "| trigger | kind | condition | fired | cause |",
        "|---|---|---|---|---|",
    ]
    for trigger in report["triggers"]:
        when = clock(trigger["fired_at"]) if trigger["fired"] else "no"
        condition = f"`{trigger['condition']}`"
        out.append(f"| {trigger['id']} | {trigger['kind']} | {condition} | {when} | {trigger['cause']} |")
    failing = [(p["id"], t) for p in report["phases"] for t in p["failing"]]
    out += ["", "## Failing checks", ""]
    if not failing:
        out.append("None: every test of every unlocked phase passes.")
    for _phase, test in failing:
        first_line = (test["detail"] or "").strip().splitlines()[:1]
        out.append(f"- **{test['id']}** ({test['outcome']})" + (f": {first_line[0]}" if first_line else ""))
    superseded = [(p["id"], s) for p in report["phases"] for s in p["superseded"]]
    if superseded:
        out += ["", "## Superseded tests", ""]
        out += [f"- `{test}` (replaced by {phase_id})" for phase_id, test in superseded]
    activity = report["activity"]
    out += [
        "",
        f"_{activity['test_runs']} test runs, {activity['agent_turns']} agent turns, "
        f"{activity['commits']} commits._",
        "",
    ]
    return "\n".join(out)


def print_summary(report: dict[str, Any], console: Console) -> None:
    """The end-of-run summary: one row per phase, then the triggers and the headline."""
    table = Table(
        title=f"{report['run']['challenge']['id']} with {report['run']['agent']}",
        title_justify="left",
    )
    for column in ("phase", "unlocked", "by", "first passed", "tests", "score"):
        table.add_column(column, justify="right" if column in ("tests", "score") else "left")
    for phase in report["phases"]:
        good = phase["unlocked"] and phase["total"] and phase["passed"] == phase["total"]
        style = "green" if good else ("dim" if not phase["unlocked"] else "red")
        table.add_row(
            phase["id"],
            clock(phase["unlocked_at"]),
            phase["unlocked_by"] or "—",
            clock(phase["first_passed_at"]),
            f"{phase['passed']}/{phase['total']}" if phase["unlocked"] else "locked",
            f"{phase['score'] * 100:.0f}%",
            style=style,
        )
    console.print(table)
    for trigger in report["triggers"]:
        mark = "[green]fired[/]" if trigger["fired"] else "[dim]not fired[/]"
        console.print(f"  trigger [bold]{trigger['id']}[/] {mark}: {trigger['cause']}")
    for phase in report["phases"]:
        for test in phase["failing"]:
            console.print(f"  [red]✗[/] {test['id']} ({test['outcome']})")
    style = "bold green" if report["score"]["full_success"] else "bold yellow"
    console.print(f"[{style}]{_headline(report)}[/]")

"""Reports for people: ``report.md`` and the summary table printed at the end of a run."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = ["clock", "print_summary", "report_markdown", "usage_line"]


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
    if run["status"] == "invalid":
        return "no score — the run is INVALID (an environment failure, not the agent's)"
    if score["critical_failures"]:
        verdict = "CRITICAL FAILURE: " + ", ".join(score["critical_failures"]) + " (no score cancels it)"
    total = "—" if score["total"] is None else f"{score['total'] * 100:.0f}%"
    line = f"score {total} — {verdict}"
    if score["incomplete"]:
        line += " — some criteria could not be judged"
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
    if report.get("rubric"):
        out += _rubric_markdown(report["rubric"])
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
    out += _turns_markdown(report)
    activity = report["activity"]
    out += [
        "",
        f"_{activity['test_runs']} test runs, {activity['agent_turns']} agent turns, "
        f"{activity['commits']} commits._",
        "",
    ]
    return "\n".join(out)


MISSING = "missing"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    return f"{seconds:.1f}s" if seconds < 60 else clock(seconds)


def _tokens(value: int | None) -> str:
    return MISSING if value is None else f"{value:,}"


def _cost(value: float | None) -> str:
    return MISSING if value is None else f"${value:.4f}"


def _first_line(text: str | None, width: int = 120) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return (line[: width - 1] + "…" if len(line) > width else line).replace("|", "/") or "—"


def usage_line(usage: dict[str, Any]) -> str:
    """The run's usage totals in a sentence; a figure no turn reported is called missing."""

    def part(figure: str, label: str, shown: Any) -> str:
        entry = usage[figure]
        text = f"{label} {shown(entry['total'])}"
        if entry["missing_turns"] and entry["total"] is not None:
            turns = ", ".join(map(str, entry["missing_turns"]))
            text += (
                f" (turn {turns} did not report)"
                if len(entry["missing_turns"]) == 1
                else f" (turns {turns} did not report)"
            )
        return text

    figures = ("input_tokens", "output_tokens", "cost_usd")
    parts = [
        part("input_tokens", "tokens in", _tokens),
        part("output_tokens", "tokens out", _tokens),
        part("cost_usd", "cost", _cost),
    ]
    if all(usage[figure]["total"] is None for figure in figures):
        parts = ["tokens and cost not reported"]
    return "; ".join([*parts, f"{usage['turns']} turns, {_duration(usage['seconds'])} working"])


def _turns_markdown(report: dict[str, Any]) -> list[str]:
    usage = report.get("usage") or {}
    if not usage.get("turns_reporting"):
        return []
    out = [
        "",
        "## Agent turns",
        "",
        f"Usage: {usage_line(usage)}.",
        "",
        "| turn | messages | time | tokens in | tokens out | cost | final message |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in report["turns"]:
        messages = ", ".join(row["messages"]) or "—"
        time = _duration(row["seconds"]) + (f" ({row['end']})" if row["end"] else "")
        tokens = f"{_tokens(row['input_tokens'])} | {_tokens(row['output_tokens'])}"
        said = _first_line(row["final_message"])
        out.append(f"| {row['turn']} | {messages} | {time} | {tokens} | {_cost(row['cost_usd'])} | {said} |")
    out += [
        "",
        "Full transcripts: "
        + (", ".join(f"`{r['transcript']}`" for r in report["turns"] if r["transcript"]) or "—"),
    ]
    return out


def percent(score: float | None, missing: str = "—") -> str:
    """``0.875`` → ``88%``; None (no score) → ``missing``."""
    return missing if score is None else f"{score * 100:.0f}%"


def _rubric_markdown(rubric: list[dict[str, Any]]) -> list[str]:
    out = ["", "## Rubric", "", "| criterion | weight | score | evidence |", "|---|---|---|---|"]
    for criterion in rubric:
        name = criterion["id"] + (f" — {criterion['title']}" if criterion["title"] else "")
        score = percent(criterion["score"], "not judged")
        if criterion["critical_failure"]:
            score = f"**CRITICAL FAILURE** ({score})"
        elif criterion["critical"]:
            score += " (critical)"
        findings = "; ".join(criterion["findings"][:5]) or "—"
        if len(criterion["findings"]) > 5:
            findings += f"; … {len(criterion['findings']) - 5} more"
        weight = f"{criterion['weight']:g}" if criterion["weight"] else "reported"
        out.append(f"| {name} | {weight} | {score} | {findings.replace('|', '/')} |")
    for criterion in rubric:
        data = criterion["data"]
        if "stages" in data:
            out += ["", f"### Quality curve ({criterion['id']})", ""]
            out += ["| stage | lines | lint / 1,000 lines | worst complexity | unused abstractions |"]
            out += ["|---|---|---|---|---|"]
            for row in data["stages"]:
                if not row["reached"]:
                    out.append(f"| {row['phase']} | not reached | | | |")
                    continue
                out.append(
                    f"| {row['phase']} | {row['lines']} | {row['findings_per_kloc']} | "
                    f"{row['worst_complexity']} | {len(row['unused'])} |"
                )
        if data.get("survival") is not None:
            out += [
                "",
                f"Code survival ({criterion['id']}): {data['survival']:.0%} of {data['phase_lines']} lines "
                f"kept (target {data['target']:.0%}).",
            ]
        if data.get("judge"):
            out += ["", f"Judge ({data['judge']['by']}) on {criterion['id']}: {data['judge']['reason']}"]
    return out


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
    if report.get("rubric"):
        rubric = Table(title="rubric", title_justify="left")
        for column in ("criterion", "weight", "score"):
            rubric.add_column(column, justify="left" if column == "criterion" else "right")
        for criterion in report["rubric"]:
            score = percent(criterion["score"], "not judged")
            style = "green" if criterion["score"] == 1 else "red"
            if criterion["critical_failure"]:
                score, style = f"CRITICAL ({score})", "bold red"
            weight = f"{criterion['weight']:g}" if criterion["weight"] else "reported"
            rubric.add_row(criterion["id"], weight, score, style=style)
        console.print(rubric)
    for trigger in report["triggers"]:
        mark = "[green]fired[/]" if trigger["fired"] else "[dim]not fired[/]"
        console.print(f"  trigger [bold]{trigger['id']}[/] {mark}: {trigger['cause']}")
    for phase in report["phases"]:
        for test in phase["failing"]:
            console.print(f"  [red]✗[/] {test['id']} ({test['outcome']})")
    usage = report.get("usage") or {}
    if usage.get("turns_reporting"):
        console.print(f"  agent usage: {usage_line(usage)}", highlight=False)
    style = "bold green" if report["score"]["full_success"] else "bold yellow"
    console.print(f"[{style}]{_headline(report)}[/]")

"""Reports for people: ``report.md`` and the summary table printed at the end of a run."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from orchestrator.exits import agent_failures
from triggers.durations import DurationError, parse_duration

__all__ = [
    "cause",
    "clock",
    "duration",
    "failing_checks",
    "percent",
    "points",
    "print_outcome",
    "print_summary",
    "ran",
    "report_markdown",
    "rescore_line",
    "scope_line",
    "score_formula",
    "tests_cell",
    "tests_in_verdict",
    "usage_line",
    "weight",
]


def clock(seconds: float | None, *, hundredths: bool = False) -> str:
    """A moment of the run: ``754.2`` → ``12:34`` (``h:mm:ss`` past an hour); None → ``—``.

    ``hundredths`` adds them (``12:34.20``), for timelines where order within a second matters.
    """
    if seconds is None:
        return "—"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"
    return text + f".{int((seconds - whole) * 100):02d}" if hundredths else text


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
    return f"{head} at {clock(seconds)}" if at else text


def points(contribution: float | None) -> str:
    """A part's contribution to the total in points of 100 (``0.035`` → ``3.5``); None → not judged."""
    return "not judged" if contribution is None else f"{contribution * 100:.1f}"


def weight(value: float) -> str:
    """A rubric criterion's weight; 0 means it is reported, not scored."""
    return f"{value:g}" if value else "not scored"


def _ratio(part: dict[str, int]) -> str:
    return f"{part['passed']}/{part['total']}" if part["total"] else "—"


def tests_cell(phase: dict[str, Any]) -> str:
    """``3/3``, ``3/3 (2 superseded)`` when later phases superseded some of its tests, or ``locked``."""
    if not phase["unlocked"]:
        return "locked"
    retired = phase.get("retired") or []
    note = f" ({len(retired)} superseded)" if retired else ""
    return f"{phase['passed']}/{phase['total']}{note}"


def rescore_line(report: dict[str, Any]) -> str | None:
    """The line that says a report is a re-score, or None for a report of a run."""
    rescore = report.get("rescore")
    if not rescore:
        return None
    original = rescore.get("original_score")
    was = (
        "the original run had no score" if original is None else f"the original score was {percent(original)}"
    )
    return f"Re-score of {rescore['run']} with {rescore['challenge']} — the agent did not run again; {was}"


def scope_line(report: dict[str, Any]) -> str | None:
    """``scope: …`` for a challenge that declares ``allowed_paths``, else None."""
    scope = report.get("scope")
    if scope is None:
        return None
    findings = scope["findings"]
    if not findings:
        return "scope: every change is inside allowed_paths"
    files = "file" if len(findings) == 1 else "files"
    listed = ", ".join(f"{f['path']} ({f['change']})" for f in findings)
    return f"scope: {len(findings)} {files} changed outside allowed_paths: {listed}"


def score_formula(report: dict[str, Any]) -> str:
    """The total's arithmetic in one line: ``79% = (25 * 100% + …) / 100: …``."""
    score = report["score"]
    scoring = report.get("scoring", {})
    parts = [p for p in scoring.get("parts", []) if p["score"] is not None]
    terms = " + ".join(f"{p['weight']:g} * {percent(p['score'])}" for p in parts)
    weights = sum(p["weight"] for p in parts)
    over = (
        "the weighted mean of the rubric's scored criteria (phase tests count through them)"
        if scoring.get("method") == "rubric"
        else "the weighted mean of the phases' scores"
    )
    return f"{percent(score['total'])} = ({terms}) / {weights:g}: {over}"


def tests_in_verdict(report: dict[str, Any]) -> int:
    """How many tests the verdict holds, over every phase."""
    return sum(int(p["total"]) for p in report["phases"])


def failing_checks(report: dict[str, Any]) -> tuple[list[str], str]:
    """The checks that fell short (failing tests, then criteria short of full marks), and what
    to say when there are none: a run with no test verdict never reads as all passing."""
    if report["run"]["status"] == "invalid":
        return [], "Not graded: the run is invalid, so no verdict says anything about the agent."
    items = [
        f"{test['id']} ({test['outcome']})"
        + (f": {_first_line(test['detail'], 200)}" if test["detail"] else "")
        for phase in report["phases"]
        for test in phase["failing"]
    ]
    for criterion in report.get("rubric") or []:
        if criterion["score"] is None or criterion["score"] < 1:
            evidence = f": {criterion['findings'][0]}" if criterion["findings"] else ""
            items.append(
                f"criterion {criterion['id']} ({percent(criterion['score'], 'not judged')}, "
                f"weight {weight(criterion['weight'])}){evidence}"
            )
    if tests_in_verdict(report) == 0:
        none = "No test verdict: no hidden test ran on an unlocked phase, so nothing passed."
        return items, none
    rubric = " and every rubric criterion has full marks" if report.get("rubric") else ""
    return items, f"None: every test of every unlocked phase passes{rubric}."


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


def ran(run: dict[str, Any]) -> str:
    """How long the run took, as far as its log tells."""
    if run["status"] in ("interrupted", "crashed") and run["end_reason"] is None:
        return f"{duration(run['elapsed'])} until its last record (it may have run on unrecorded)"
    return duration(run["elapsed"])


def report_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown."""
    run = report["run"]
    score = report["score"]
    challenge = run["challenge"]
    rescore = rescore_line(report)
    out = [f"# {challenge['title'] or challenge['id']}", ""]
    if rescore:
        out += [f"> **{rescore}**", ""]
    out += [
        f"**{_headline(report)}**",
        "",
        f"- challenge: `{challenge['id']}`" + (f" ({challenge['pattern']})" if challenge["pattern"] else ""),
        f"- agent: `{run['agent']}`",
        f"- started: {run['started_at']}; ran {ran(run)}",
        f"- ended: {run['end_reason'] or run['status']}"
        + (f" ({run['end_detail']})" if run["end_detail"] else ""),
    ]
    if run["status"] == "invalid":
        out.append(f"- invalid because: {_first_line(run['detail'], 300)}")
    else:
        out += [
            f"- changed requirement (latest phase): {_ratio(score['changed'])} tests pass; "
            f"preserved behaviour (earlier phases): {_ratio(score['preserved'])}",
            f"- graded on the {score['graded_on']}"
            + (
                f" — grading {score['grading_status']}: {score['grading_detail']}"
                if score["grading_status"] not in ("ok", "missing")
                else ""
            ),
        ]
    out += [f"- **{problem}**" for problem in agent_failures(report)]
    if run["detail"] and "\n" in run["detail"].strip():  # a traceback, in full
        out += ["", "```", run["detail"], "```"]
    if score["total"] is not None:
        out += _score_markdown(report)
    out += [
        "",
        "## Phases",
        "",
        "| phase | weight | unlocked | by | first passed | tests | score |",
        "|---|---|---|---|---|---|---|",
    ]
    for phase in report["phases"]:
        name = phase["id"] + (f" — {phase['title']}" if phase["title"] else "")
        out.append(
            f"| {name} | {phase['weight']:g} | {clock(phase['unlocked_at'])} | {phase['unlocked_by'] or '—'} "
            f"| {clock(phase['first_passed_at'])} | {tests_cell(phase)} | {phase['score'] * 100:.0f}% |"
        )
    if any(phase.get("retired") for phase in report["phases"]):
        out += [
            "",
            "(N superseded): tests of the phase that a later phase replaced; "
            "they no longer run and are not counted.",
        ]
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
        because = cause(trigger["cause"])
        out.append(f"| {trigger['id']} | {trigger['kind']} | {condition} | {when} | {because} |")
    out += _messages_markdown(report)
    items, none = failing_checks(report)
    out += ["", "## Failing checks", ""]
    out += [f"- {item}" for item in items] if items else [none]
    scope = scope_line(report)
    if scope is not None:
        out += ["", "## Scope", "", f"{scope[0].upper()}{scope[1:]}."]
        out.append(f"Allowed paths: {', '.join(f'`{glob}`' for glob in report['scope']['allowed_paths'])}.")
    superseded = [(p["id"], s) for p in report["phases"] for s in p["superseded"]]
    if superseded:
        out += ["", "## Superseded tests", ""]
        out += [f"- `{test}` (replaced by {phase_id})" for phase_id, test in superseded]
    out += _turns_markdown(report)
    activity = report["activity"]
    out += [
        "",
        f"_{activity['test_runs']} test runs, {activity['agent_turns']} agent turns, "
        f"{activity['commits']} commits. Times are mm:ss since the session started._",
        "",
    ]
    return "\n".join(out)


def _score_markdown(report: dict[str, Any]) -> list[str]:
    score = report["score"]
    out = ["", "## How the score is computed", "", f"{score_formula(report)}.", ""]
    out += ["| part | weight | score | points (of 100) |", "|---|---|---|---|"]
    for part in report.get("scoring", {}).get("parts", []):
        share = points(part["contribution"])
        name = f"{part['kind']} {part['id']}"
        out.append(f"| {name} | {part['weight']:g} | {percent(part['score'], '—')} | {share} |")
    out.append(f"| **total** | | | **{percent(score['total'])}** |")
    return out


def _messages_markdown(report: dict[str, Any]) -> list[str]:
    messages = report.get("messages") or []
    if not messages:
        return []
    out = ["", "## Messages to the agent"]
    for message in messages:
        delivered = clock(message["delivered_at"]) if message["delivered_at"] is not None else "never"
        out += [
            "",
            f"**{message['number']}. {message['trigger']}** ({message['kind']}): "
            f"queued {clock(message['queued_at'])}, delivered {delivered}",
            "",
        ]
        out += [f"> {line}".rstrip() for line in message["text"].rstrip().splitlines()]
    return out


MISSING = "missing"


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
    return "; ".join([*parts, f"{usage['turns']} turns, {duration(usage['seconds'])} working"])


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
        time = duration(row["seconds"]) + (f" ({row['end']})" if row["end"] else "")
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
        out.append(f"| {name} | {weight(criterion['weight'])} | {score} | {findings.replace('|', '/')} |")
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
    rescore = rescore_line(report)
    if rescore:
        console.print(f"[bold]{escape(rescore)}[/]", highlight=False)
    if report["run"]["status"] == "invalid":  # nothing of the agent was measured: no tables
        console.print(f"[bold yellow]{_headline(report)}[/]")
        reason = _first_line(report["run"]["detail"], 300)
        console.print(f"  invalid because: {escape(reason)}", highlight=False)
        return
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
            tests_cell(phase),
            f"{phase['score'] * 100:.0f}%",
            style=style,
        )
    console.print(table)
    for phase in report["phases"]:
        if phase.get("retired"):
            by = ", ".join(sorted({r["by"] for r in phase["retired"]}))
            console.print(
                f"  {phase['id']}: {len(phase['retired'])} superseded test(s) no longer run since {by} "
                "(a test count taken before then included them)",
                highlight=False,
            )
    if report.get("rubric"):
        rubric = Table(title="rubric", title_justify="left")
        for column in ("criterion", "weight", "score"):
            rubric.add_column(column, justify="left" if column == "criterion" else "right")
        for criterion in report["rubric"]:
            score = percent(criterion["score"], "not judged")
            style = "green" if criterion["score"] == 1 else "red"
            if criterion["critical_failure"]:
                score, style = f"CRITICAL ({score})", "bold red"
            rubric.add_row(criterion["id"], weight(criterion["weight"]), score, style=style)
        console.print(rubric)
    for trigger in report["triggers"]:
        mark = "[green]fired[/]" if trigger["fired"] else "[dim]not fired[/]"
        console.print(f"  trigger [bold]{trigger['id']}[/] {mark}: {escape(cause(trigger['cause']))}")
    print_outcome(report, console)


def print_outcome(report: dict[str, Any], console: Console) -> None:
    """What a run came to: failing checks, usage, scope, how the total is made, the headline."""
    items, _ = failing_checks(report)
    for item in items:
        console.print(f"  [red]✗[/] {escape(item)}", highlight=False)
    usage = report.get("usage") or {}
    if usage.get("turns_reporting"):
        console.print(f"  agent usage: {usage_line(usage)}", highlight=False)
    scope = scope_line(report)
    if scope is not None:
        console.print(f"  {escape(scope)}", highlight=False)
    if report["score"]["total"] is not None:
        console.print(f"  score: {escape(score_formula(report))}", highlight=False)
    style = "bold green" if report["score"]["full_success"] else "bold yellow"
    console.print(f"[{style}]{_headline(report)}[/]")

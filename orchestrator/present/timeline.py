"""A recorded session as a timeline of lines a person reads: ``changeup show`` and playback."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from orchestrator.present.phrases import cause, clock, duration, percent, scope_line
from orchestrator.scoring.report import abort_detail

__all__ = ["describe", "lines", "play"]

#: Shown only with --all (session.scope: `show` ends with the scope line of the report anyway).
_QUIET = {
    "clock.tick",
    "tests.requested",
    "tests.started",
    "agent.output",
    "workspace.created",
    "session.scope",
}
#: Where a record's text starts after its time stamp (``00:06.39  ``): continuation lines line up.
_INDENT = " " * 10


def _first_line(text: str, width: int = 90) -> str:
    """The first line of ``text``; a cut (a longer line, or more lines) is marked with ``…``."""
    rows = text.strip().splitlines()
    line = rows[0] if rows else ""
    if len(line) > width:
        return line[: width - 1] + "…"
    return line + (" …" if len(rows) > 1 else "")


def _text(text: str, *, full: bool) -> str:
    """``text`` in full (continuation lines indented under the first), or its first line."""
    if not full:
        return _first_line(text)
    return ("\n" + _INDENT).join(text.strip().splitlines())


def _tests(record: dict[str, Any]) -> str:
    """Each phase's ``passed/total``, and whether the verdicts were reused or do not count."""
    parts = [f"{p['phase']} {p['passed']}/{p['passed'] + p['failed']}" for p in record["phases"]]
    extra = " (unchanged workspace, verdicts reused)" if record.get("cached") else ""
    status = (
        ""
        if record.get("status", "ok") == "ok"
        else f" [{record['status']}: {_first_line(record.get('detail', ''))}]"
    )
    return ", ".join(parts) + extra + status


def describe(
    record: dict[str, Any], *, verbose: bool = False, number: int | None = None
) -> tuple[str, str] | None:
    """(style, text) for one record, or None for bookkeeping a person does not need.

    ``number`` is the record's place among the shown records of its kind (test runs,
    messages). ``verbose`` shows texts in full.
    """
    kind = record["kind"]
    if kind in _QUIET and not verbose:
        return None
    if kind == "session.started":
        return "bold", f"session started with {len(record.get('files', []))} starter file(s)"
    if kind == "phase.unlocked":
        return "bold cyan", f"▶ {record['phase']} unlocked" + (
            f" by {record['trigger']}" if record["trigger"] else ""
        )
    if kind == "message.queued":
        name = f"#{number} " if number is not None else ""
        text = _text(record["text"], full=verbose)
        return "magenta", f"✉ {name}{record['trigger']} ({record['message_kind']}) queued: {text}"
    if kind == "message.delivered":
        return "magenta", f"✉ {record['trigger']} delivered to the agent"
    if kind == "trigger.pending":
        return "yellow", f"… trigger {record['trigger']} pending"
    if kind == "trigger.cleared":
        return "yellow", f"… trigger {record['trigger']} cleared: its condition stopped holding"
    if kind == "trigger.fired":
        return "bold yellow", f"⚡ trigger {record['trigger']} fired: {cause(record['cause'])}"
    if kind == "tests.result":
        name = f"tests #{number}" if number is not None else "tests"
        good = all(p["failed"] == 0 and p["passed"] > 0 for p in record["phases"])
        return ("green" if good else "red"), f"{'✓' if good else '✗'} {name}: {_tests(record)}"
    if kind == "fs.changed":
        paths = [c["path"] for c in record["changes"]]
        more = f" and {len(paths) - 3} more" if len(paths) > 3 else ""
        return "dim", f"✎ {len(paths)} file(s) changed: {', '.join(paths[:3])}{more}"
    if kind == "git.commit":
        return "blue", f"● commit {record['sha'][:10]} {record.get('message', '')}"
    if kind == "agent.started":
        return "dim", "agent started"
    if kind == "agent.turn_ended":
        why = f", {record['reason']}" if record.get("reason") else ""
        return "dim", f"agent turn ended (exit {record.get('exit_code')}{why})"
    if kind == "agent.exited":
        return "dim", f"agent exited ({record.get('exit_code')})"
    if kind == "turn.summary":
        figures = [duration(record["seconds"]) if record.get("seconds") is not None else ""]
        if record.get("output_tokens") is not None:
            figures.append(f"{record.get('input_tokens') or 0:,} in / {record['output_tokens']:,} out tokens")
        if record.get("cost_usd") is not None:
            figures.append(f"${record['cost_usd']:.4f}")
        said = f" — {_text(record['final_message'], full=verbose)}" if record.get("final_message") else ""
        return "dim", f"turn {record['turn']}: {', '.join(f for f in figures if f) or 'no figures'}{said}"
    if kind == "phase.sealed":
        return (
            None
            if not verbose
            else ("dim", f"{record['phase']} sealed ({len(record['files'])} hidden files)")
        )
    if kind == "agent.output":
        stream = "" if record.get("stream", "stdout") == "stdout" else f" ({record['stream']})"
        return "dim", f"agent{stream}: {_text(record['text'], full=verbose)}"
    if kind == "session.ended":
        detail = f" ({record['detail']})" if record.get("detail") else ""
        return "bold", f"■ session ended: {record['reason']}{detail}"
    if kind == "session.graded":
        return "bold", f"graded the final workspace: {_tests(record)}"
    if kind == "session.scored":
        scores = ", ".join(f"{c['id']} {percent(c['score'])}" for c in record["criteria"])
        return "bold", f"rubric: {scores}"
    if kind == "clock.skipped":
        return "yellow", (
            f"⏩ the agent is idle and only time can fire a trigger: the clock skips "
            f"{duration(record['skipped'])} to {clock(record['until'])}"
        )
    if kind == "session.scope":
        return "bold", scope_line({"scope": record}) or ""
    if kind == "session.aborted":
        detail = abort_detail(record["status"], record.get("detail", ""))
        return "bold red", f"run {record['status']}: {_text(detail, full=verbose)}"
    return "dim", f"{kind}"


def _joined(records: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The records, with each run of ``agent.output`` of one stream joined into one record.

    Adapters write output per read, so one traceback can be dozens of records; a person
    reads it whole. The log keeps the reads; only the display joins them.
    """
    pending: dict[str, Any] | None = None
    for record in records:
        if pending is not None:
            if record["kind"] == "agent.output" and record.get("stream") == pending.get("stream"):
                pending = {**pending, "text": pending["text"] + record["text"]}
                continue
            yield pending
            pending = None
        if record["kind"] == "agent.output":
            pending = record
        else:
            yield record
    if pending is not None:
        yield pending


def lines(
    records: Iterable[dict[str, Any]], *, verbose: bool = False, counted: dict[str, int] | None = None
) -> Iterator[tuple[float, str, str]]:
    """(t, style, text) for each record worth showing; test runs and messages numbered 1, 2, …

    ``counted`` carries the numbering on from records shown before (``show --follow``).
    """
    numbers = counted if counted is not None else {}
    for record in _joined(records):
        number = None
        # A result reused from the cache is no test run: it is shown without a number.
        if record["kind"] == "message.queued" or (
            record["kind"] == "tests.result" and not record.get("cached")
        ):
            number = numbers[record["kind"]] = numbers.get(record["kind"], 0) + 1
        shown = describe(record, verbose=verbose, number=number)
        if shown is not None:
            yield record["t"], shown[0], f"{clock(record['t'], hundredths=True)}  {shown[1]}"


def play(
    records: list[dict[str, Any]],
    speed: float,
    emit: Callable[[str, str], None],
    sleep: Callable[[float], None],
    *,
    verbose: bool = False,
) -> None:
    """Re-enact the timeline: each line appears after its recorded gap divided by ``speed``."""
    previous = 0.0
    for t, style, text in lines(records, verbose=verbose):
        gap = (t - previous) / speed
        if gap > 0:
            sleep(gap)
        previous = t
        emit(style, text)

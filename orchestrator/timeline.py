"""A recorded session as a timeline of lines a person reads: ``changeup show`` and playback."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from orchestrator.render import percent

__all__ = ["describe", "lines", "play", "stamp"]

_QUIET = {"clock.tick", "tests.requested", "tests.started", "agent.output", "workspace.created"}


def stamp(seconds: float) -> str:
    """``75.25`` → ``01:15.25``: session time to the hundredth of a second."""
    minutes, rest = divmod(seconds, 60)
    hours, minutes = divmod(int(minutes), 60)
    return (f"{hours}:" if hours else "") + f"{minutes:02d}:{rest:05.2f}"


def _first_line(text: str, width: int = 90) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"


def _tests(record: dict[str, Any]) -> str:
    parts = [f"{p['phase']} {p['passed']}/{p['passed'] + p['failed']}" for p in record["phases"]]
    extra = " (unchanged workspace, verdicts reused)" if record.get("cached") else ""
    status = (
        ""
        if record.get("status", "ok") == "ok"
        else f" [{record['status']}: {_first_line(record.get('detail', ''))}]"
    )
    return ", ".join(parts) + extra + status


def describe(record: dict[str, Any], *, verbose: bool = False) -> tuple[str, str] | None:
    """(style, text) for one record, or None for bookkeeping a person does not need."""
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
        return (
            "magenta",
            f"✉ {record['trigger']} ({record['message_kind']}) queued: {_first_line(record['text'])}",
        )
    if kind == "message.delivered":
        return "magenta", f"✉ {record['trigger']} delivered to the agent"
    if kind == "trigger.pending":
        return "yellow", f"… trigger {record['trigger']} pending"
    if kind == "trigger.cleared":
        return "yellow", f"… trigger {record['trigger']} cleared: its condition stopped holding"
    if kind == "trigger.fired":
        return "bold yellow", f"⚡ trigger {record['trigger']} fired: {record['cause']}"
    if kind == "tests.result":
        good = all(p["failed"] == 0 and p["passed"] > 0 for p in record["phases"])
        return (
            "green" if good else "red"
        ), f"{'✓' if good else '✗'} tests #{record['request']}: {_tests(record)}"
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
        figures = [f"{record['seconds']:.0f}s" if record.get("seconds") is not None else ""]
        if record.get("output_tokens") is not None:
            figures.append(f"{record.get('input_tokens') or 0:,} in / {record['output_tokens']:,} out tokens")
        if record.get("cost_usd") is not None:
            figures.append(f"${record['cost_usd']:.4f}")
        said = f" — {_first_line(record['final_message'])}" if record.get("final_message") else ""
        return "dim", f"turn {record['turn']}: {', '.join(f for f in figures if f) or 'no figures'}{said}"
    if kind == "phase.sealed":
        return (
            None
            if not verbose
            else ("dim", f"{record['phase']} sealed ({len(record['files'])} hidden files)")
        )
    if kind == "agent.output":
        return "dim", f"  agent: {_first_line(record['text'])}"
    if kind == "session.ended":
        detail = f" ({record['detail']})" if record.get("detail") else ""
        return "bold", f"■ session ended: {record['reason']}{detail}"
    if kind == "session.graded":
        return "bold", f"graded the final workspace: {_tests(record)}"
    if kind == "session.scored":
        scores = ", ".join(f"{c['id']} {percent(c['score'])}" for c in record["criteria"])
        return "bold", f"rubric: {scores}"
    if kind == "session.aborted":
        return "bold red", f"run {record['status']}: {_first_line(record.get('detail', ''))}"
    return "dim", f"{kind}"


def lines(records: Iterable[dict[str, Any]], *, verbose: bool = False) -> Iterator[tuple[float, str, str]]:
    """(t, style, text) for each record worth showing."""
    for record in records:
        shown = describe(record, verbose=verbose)
        if shown is not None:
            yield record["t"], shown[0], f"{stamp(record['t'])}  {shown[1]}"


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

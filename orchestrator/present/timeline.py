"""A recorded session as a timeline of lines a person reads: ``changeup show`` and playback."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

from orchestrator.present.phrases import cause, clock, duration, effects_line, percent, scope_line
from orchestrator.scoring.report import abort_detail
from orchestrator.session.records import (
    AgentFrozen,
    AgentOverLimits,
    ClockSkipped,
    Entry,
    PhaseSealed,
    Record,
    SessionAborted,
    SessionEffects,
    SessionGraded,
    SessionScope,
    SessionScored,
    TestsEffects,
    TestsStarted,
    WorkspaceCreated,
)
from triggers import (
    AgentExited,
    AgentOutput,
    AgentStarted,
    AgentTurnEnded,
    ClockTick,
    CommitMade,
    EndSession,
    FilesChanged,
    MessageDelivered,
    MessageQueued,
    PhaseResult,
    PhaseUnlocked,
    RunTests,
    SessionStarted,
    TestsResult,
    TriggerCleared,
    TriggerFired,
    TriggerPending,
)
from triggers.records import TurnSummary

__all__ = ["describe", "lines", "play"]

#: Shown only with --all (session.scope: `show` ends with the scope line of the report anyway).
_QUIET = (ClockTick, RunTests, TestsStarted, AgentOutput, WorkspaceCreated, SessionScope)
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


def _tests(record: TestsResult | SessionGraded) -> str:
    """Each phase's ``passed/total`` (and its groups'), and whether the verdicts were reused or do
    not count."""
    parts = [f"{p.phase} {p.passed}/{p.total}{_groups(p)}" for p in record.phases]
    extra = " (unchanged workspace, verdicts reused)" if record.cached else ""
    status = "" if record.status == "ok" else f" [{record.status}: {_first_line(record.detail)}]"
    return ", ".join(parts) + extra + status


def _groups(result: PhaseResult) -> str:
    """`` (core 3/3 ✓, error 0/1)`` for a phase result with groups, else ``""``."""
    if not result.groups:
        return ""
    said = (f"{g.name} {g.passed}/{g.passed + g.failed}{' ✓' if g.all_pass else ''}" for g in result.groups)
    return f" ({', '.join(said)})"


def describe(record: Record, *, verbose: bool = False, number: int | None = None) -> tuple[str, str] | None:
    """(style, text) for one record, or None for bookkeeping a person does not need.

    ``number`` is the record's place among the shown records of its kind (test runs,
    messages). ``verbose`` shows texts in full.
    """
    if isinstance(record, _QUIET) and not verbose:
        return None
    match record:
        case SessionStarted():
            at = f" at {record.start}" if record.start else ""
            return "bold", f"session started{at} with {len(record.files)} starter file(s)"
        case PhaseUnlocked():
            return "bold cyan", f"▶ {record.phase} unlocked" + (
                f" by {record.trigger}" if record.trigger else ""
            )
        case MessageQueued():
            name = f"#{number} " if number is not None else ""
            text = _text(record.text, full=verbose)
            return "magenta", f"✉ {name}{record.trigger} ({record.message_kind}) queued: {text}"
        case MessageDelivered():
            return "magenta", f"✉ {record.trigger} delivered to the agent"
        case TriggerPending():
            return "yellow", f"… trigger {record.trigger} pending"
        case TriggerCleared():
            return "yellow", f"… trigger {record.trigger} cleared: its condition stopped holding"
        case TriggerFired():
            return "bold yellow", f"⚡ trigger {record.trigger} fired: {cause(record.cause)}"
        case TestsResult():
            name = f"tests #{number}" if number is not None else "tests"
            good = all(p.all_pass for p in record.phases)
            return ("green" if good else "red"), f"{'✓' if good else '✗'} {name}: {_tests(record)}"
        case FilesChanged():
            paths = [c.path for c in record.changes]
            more = f" and {len(paths) - 3} more" if len(paths) > 3 else ""
            return "dim", f"✎ {len(paths)} file(s) changed: {', '.join(paths[:3])}{more}"
        case CommitMade():
            return "blue", f"● commit {record.sha[:10]} {record.message}"
        case AgentStarted():
            return "dim", "agent started"
        case AgentTurnEnded():
            why = f", {record.reason}" if record.reason else ""
            return "dim", f"agent turn ended (exit {record.exit_code}{why})"
        case AgentExited():
            return "dim", f"agent exited ({record.exit_code})"
        case TurnSummary():
            return "dim", _summary(record, verbose=verbose)
        case PhaseSealed():
            return (
                None if not verbose else ("dim", f"{record.phase} sealed ({len(record.files)} hidden files)")
            )
        case AgentOutput():
            stream = "" if record.stream == "stdout" else f" ({record.stream})"
            return "dim", f"agent{stream}: {_text(record.text, full=verbose)}"
        case EndSession():
            detail = f" ({record.detail})" if record.detail else ""
            return "bold", f"■ session ended: {record.reason}{detail}"
        case SessionGraded():
            return "bold", f"graded the final workspace: {_tests(record)}"
        case SessionScored():
            scores = ", ".join(f"{c['id']} {percent(c['score'])}" for c in record.criteria)
            return "bold", f"rubric: {scores}"
        case ClockSkipped():
            return "yellow", (
                f"⏩ the agent is idle and only time can fire a trigger: the clock skips "
                f"{duration(record.skipped)} to {clock(record.until)}"
            )
        case SessionScope():
            return "bold", scope_line({"scope": record.to_record()}) or ""
        case TestsEffects():
            if not record.effects:
                return ("dim", f"tests #{record.request}: no prohibited effect") if verbose else None
            seen = "; ".join(
                f"{e.effect}: {e.detail}" + (f" (in {e.test})" if e.test else "") for e in record.effects
            )
            return "red", f"⚠ tests #{record.request} attempted prohibited effects: {seen}"
        case SessionEffects():
            return "bold", effects_line({"effects": record.to_record()}) or ""
        case AgentOverLimits():
            then = f"; {record.action}" if record.action else ""
            return "red", f"⚠ the agent went over its {record.resource} limit: {record.detail}{then}"
        case AgentFrozen():
            if not verbose:
                return None
            killed = " (it would not freeze: killed)" if record.killed else ""
            return "dim", f"agent frozen {duration(record.seconds)} while tests #{record.request} ran{killed}"
        case SessionAborted():
            detail = abort_detail(record.status, record.detail)
            return "bold red", f"run {record.status}: {_text(detail, full=verbose)}"
    return "dim", f"{record.kind}"


def _summary(record: TurnSummary, *, verbose: bool) -> str:
    figures = [duration(record.seconds) if record.seconds is not None else ""]
    if record.output_tokens is not None:
        figures.append(f"{record.input_tokens or 0:,} in / {record.output_tokens:,} out tokens")
    if record.cost_usd is not None:
        figures.append(f"${record.cost_usd:.4f}")
    said = f" — {_text(record.final_message, full=verbose)}" if record.final_message else ""
    return f"turn {record.turn}: {', '.join(f for f in figures if f) or 'no figures'}{said}"


def _joined(entries: Iterable[Entry]) -> Iterator[Entry]:
    """The entries, with each run of ``agent.output`` of one stream joined into one entry.

    Adapters write output per read, so one traceback can be dozens of records; a person
    reads it whole. The log keeps the reads; only the display joins them.
    """
    pending: Entry | None = None
    for entry in entries:
        record = entry.record
        if pending is not None:
            held = pending.record
            assert isinstance(held, AgentOutput)
            if isinstance(record, AgentOutput) and record.stream == held.stream:
                pending = replace(pending, record=replace(held, text=held.text + record.text))
                continue
            yield pending
            pending = None
        if isinstance(record, AgentOutput):
            pending = entry
        else:
            yield entry
    if pending is not None:
        yield pending


def lines(
    entries: Iterable[Entry], *, verbose: bool = False, counted: dict[str, int] | None = None
) -> Iterator[tuple[float, str, str]]:
    """(t, style, text) for each entry worth showing; test runs and messages numbered 1, 2, …

    ``counted`` carries the numbering on from entries shown before (``show --follow``).
    """
    numbers = counted if counted is not None else {}
    for entry in _joined(entries):
        record = entry.record
        number = None
        # A result reused from the cache is no test run: it is shown without a number.
        if isinstance(record, MessageQueued) or (isinstance(record, TestsResult) and not record.cached):
            number = numbers[record.kind] = numbers.get(record.kind, 0) + 1
        shown = describe(record, verbose=verbose, number=number)
        if shown is not None:
            yield entry.t, shown[0], f"{clock(entry.t, hundredths=True)}  {shown[1]}"


def play(
    entries: Iterable[Entry],
    speed: float,
    emit: Callable[[str, str], None],
    sleep: Callable[[float], None],
    *,
    verbose: bool = False,
) -> None:
    """Re-enact the timeline: each line appears after its recorded gap divided by ``speed``."""
    previous = 0.0
    for t, style, text in lines(entries, verbose=verbose):
        gap = (t - previous) / speed
        if gap > 0:
            sleep(gap)
        previous = t
        emit(style, text)

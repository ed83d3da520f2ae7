"""A recorded session as a timeline of lines a person reads: ``changeup show`` and playback.

Every value a line takes from a record is shown through :func:`~orchestrator.render.inert.visible`
(one line each; a multi-line text's lines are indented under the first), so no agent text can
act on the terminal or pass for a line of the timeline.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from orchestrator.log.records import (
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
    abort_detail,
)
from orchestrator.log.report import Effects, Scope
from orchestrator.render.inert import visible
from orchestrator.render.phrases import cause, duration, effects_line, percent, scope_line
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
from triggers.durations import clock
from triggers.records import TurnSummary

__all__ = ["describe", "lines", "play"]

#: Shown only with --all (session.scope: `show` ends with the scope line of the report anyway).
_QUIET = (ClockTick, RunTests, TestsStarted, AgentOutput, WorkspaceCreated, SessionScope)
#: A lone surrogate: a byte of a file name that is not UTF-8 (U+DC80-U+DCFF for 0x80-0xFF).
_SURROGATE = re.compile("[\ud800-\udfff]")
#: Where a record's text starts after its time stamp (``00:06.39  ``): continuation lines line up.
_INDENT = " " * 10


def _first_line(text: str, width: int = 90) -> str:
    """The first line of ``text``, shown inert; a cut (a longer line, or more lines) is marked with ``…``."""
    rows = text.strip().splitlines()
    line = visible(rows[0]) if rows else ""
    if len(line) > width:
        return line[: width - 1] + "…"
    return line + (" …" if len(rows) > 1 else "")


def _name(path: str) -> str:
    """A file name as people read it: bytes that are not UTF-8 (:func:`os.fsdecode`'s lone
    surrogates, as the event log keeps them) shown as ``\\xff``."""
    return _SURROGATE.sub(lambda m: f"\\x{ord(m.group()) & 0xFF:02x}", path)


def _text(text: str, *, full: bool) -> str:
    """``text`` in full (continuation lines indented under the first), or its first line; inert."""
    if not full:
        return _first_line(text)
    return ("\n" + _INDENT).join(map(visible, text.strip().splitlines()))


def _v(value: object) -> str:
    """A value of a record, on one line, inert."""
    return visible(str(value))


def _tests(record: TestsResult | SessionGraded) -> str:
    """Each phase's ``passed/total`` (and its groups'), and whether the verdicts were reused or do
    not count."""
    parts = [f"{_v(p.phase)} {p.passed}/{p.total}{_groups(p)}" for p in record.phases]
    extra = " (unchanged workspace, verdicts reused)" if record.cached else ""
    status = "" if record.status == "ok" else f" [{_v(record.status)}: {_first_line(record.detail)}]"
    return ", ".join(parts) + extra + status


def _groups(result: PhaseResult) -> str:
    """`` (core 3/3 ✓, error 0/1)`` for a phase result with groups, else ``""``."""
    if not result.groups:
        return ""
    said = (
        f"{_v(g.name)} {g.passed}/{g.passed + g.failed}{' ✓' if g.all_pass else ''}" for g in result.groups
    )
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
            at = f" at {_v(record.start)}" if record.start else ""
            return "bold", f"session started{at} with {len(record.files)} starter file(s)"
        case PhaseUnlocked():
            return "bold cyan", f"▶ {_v(record.phase)} unlocked" + (
                f" by {_v(record.trigger)}" if record.trigger else ""
            )
        case MessageQueued():
            name = f"#{number} " if number is not None else ""
            text = _text(record.text, full=verbose)
            return "magenta", f"✉ {name}{_v(record.trigger)} ({_v(record.message_kind)}) queued: {text}"
        case MessageDelivered():
            return "magenta", f"✉ {_v(record.trigger)} delivered to the agent"
        case TriggerPending():
            return "yellow", f"… trigger {_v(record.trigger)} pending"
        case TriggerCleared():
            return "yellow", f"… trigger {_v(record.trigger)} cleared: its condition stopped holding"
        case TriggerFired():
            return "bold yellow", f"⚡ trigger {_v(record.trigger)} fired: {_v(cause(record.cause))}"
        case TestsResult():
            name = f"tests #{number}" if number is not None else "tests"
            # a phase run with no test (all superseded) failed nothing: it does not make the run red
            good = any(p.total for p in record.phases) and all(p.all_pass for p in record.phases if p.total)
            return ("green" if good else "red"), f"{'✓' if good else '✗'} {name}: {_tests(record)}"
        case FilesChanged():
            paths = [_name(c.path) if verbose else _first_line(_name(c.path), 60) for c in record.changes[:3]]
            count = len(record.changes) + record.omitted
            more = f" and {count - 3:,} more" if count > 3 else ""
            return "dim", f"✎ {count:,} file(s) changed: {', '.join(map(_v, paths))}{more}"
        case CommitMade():
            older = f" (and {record.omitted:,} older commits not recorded)" if record.omitted else ""
            said = _v(record.message) if verbose else _first_line(record.message)
            return "blue", f"● commit {_v(record.sha[:10])} {said}{older}"
        case AgentStarted():
            return "dim", "agent started"
        case AgentTurnEnded():
            why = f", {_v(record.reason)}" if record.reason else ""
            return "dim", f"agent turn ended (exit {record.exit_code}{why})"
        case AgentExited():
            return "dim", f"agent exited ({record.exit_code})"
        case TurnSummary():
            return "dim", _summary(record, verbose=verbose)
        case PhaseSealed():
            return (
                None
                if not verbose
                else ("dim", f"{_v(record.phase)} sealed ({len(record.files)} hidden files)")
            )
        case AgentOutput():
            return _output(record.stream, record.text, verbose=verbose)
        case EndSession():
            detail = f" ({_v(record.detail)})" if record.detail else ""
            return "bold", f"■ session ended: {_v(record.reason)}{detail}"
        case SessionGraded():
            return "bold", f"graded the final workspace: {_tests(record)}"
        case SessionScored():
            scores = ", ".join(f"{_v(c['id'])} {percent(c['score'])}" for c in record.criteria)
            return "bold", f"rubric: {scores}"
        case ClockSkipped():
            return "yellow", (
                f"⏩ the agent is idle and only time can fire a trigger: the clock skips "
                f"{duration(record.skipped)} to {clock(record.until)}"
            )
        case SessionScope():
            return "bold", _v(scope_line(Scope.of(record)) or "")
        case TestsEffects():
            if not record.effects:
                return ("dim", f"tests #{record.request}: no prohibited effect") if verbose else None
            seen = "; ".join(
                f"{_v(e.effect)}: {_v(e.detail)}" + (f" (in {_v(e.test)})" if e.test else "")
                for e in record.effects
            )
            return "red", f"⚠ tests #{record.request} attempted prohibited effects: {seen}"
        case SessionEffects():
            return "bold", _v(effects_line(Effects.of(record)) or "")
        case AgentOverLimits():
            then = f"; {_v(record.action)}" if record.action else ""
            return "red", f"⚠ the agent went over its {_v(record.resource)} limit: {_v(record.detail)}{then}"
        case AgentFrozen():
            if not verbose:
                return None
            killed = " (it would not freeze: killed)" if record.killed else ""
            return "dim", f"agent frozen {duration(record.seconds)} while tests #{record.request} ran{killed}"
        case SessionAborted():
            detail = abort_detail(record.status, record.detail)
            return "bold red", f"run {record.status}: {_text(detail, full=verbose)}"
    return "dim", _v(record.kind)


def _output(stream: str, text: str, *, verbose: bool) -> tuple[str, str] | None:
    """What the agent printed on ``stream``: shown only with ``verbose`` (``--all``)."""
    if not verbose:
        return None
    said = "" if stream == "stdout" else f" ({_v(stream)})"
    return "dim", f"agent{said}: {_text(text, full=True)}"


def _summary(record: TurnSummary, *, verbose: bool) -> str:
    figures = [duration(record.seconds) if record.seconds is not None else ""]
    if record.output_tokens is not None:
        figures.append(f"{record.input_tokens or 0:,} in / {record.output_tokens:,} out tokens")
    if record.cost_usd is not None:
        figures.append(f"${record.cost_usd:.4f}")
    said = f" — {_text(record.final_message, full=verbose)}" if record.final_message else ""
    return f"turn {record.turn}: {', '.join(f for f in figures if f) or 'no figures'}{said}"


def _joined(entries: Iterable[Entry]) -> Iterator[tuple[Entry, str]]:
    """The entries, each with the text it shows if it is output: a run of ``agent.output`` of one
    stream is one entry (its first), holding the run's text.

    Adapters write output per read, so one traceback can be dozens of records; a person
    reads it whole. The log keeps the reads (each within its cap); only the display joins them.
    """
    pending: Entry | None = None
    texts: list[str] = []
    for entry in entries:
        record = entry.record
        if pending is not None:
            held = pending.record
            assert isinstance(held, AgentOutput)
            if isinstance(record, AgentOutput) and record.stream == held.stream:
                texts.append(record.text)
                continue
            yield pending, "".join(texts)
            pending = None
        if isinstance(record, AgentOutput):
            pending, texts = entry, [record.text]
        else:
            yield entry, ""
    if pending is not None:
        yield pending, "".join(texts)


def _turns_closed(joined: Iterable[tuple[Entry, str]]) -> Iterator[tuple[Entry, str]]:
    """The joined entries with each ``agent turn ended`` moved after the file changes and commits
    recorded right after it: the watcher sees a turn's last writes (and the agent's own commit)
    only after the turn ended, but a person reads them as that turn's work."""
    held: tuple[Entry, str] | None = None
    for item in joined:
        record = item[0].record
        if held is not None and not isinstance(record, FilesChanged | CommitMade | RunTests | TestsStarted):
            yield held
            held = None
        if isinstance(record, AgentTurnEnded) and held is None:
            held = item
        else:
            yield item
    if held is not None:
        yield held


def lines(
    entries: Iterable[Entry], *, verbose: bool = False, counted: dict[str, int] | None = None
) -> Iterator[tuple[float, str, str]]:
    """(t, style, text) for each entry worth showing; test runs and messages numbered 1, 2, …

    ``counted`` carries the numbering on from entries shown before (``show --follow``).
    """
    numbers = counted if counted is not None else {}
    for entry, output in _turns_closed(_joined(entries)):
        record = entry.record
        number = None
        # A result reused from the cache is no test run: it is shown without a number.
        if isinstance(record, MessageQueued) or (isinstance(record, TestsResult) and not record.cached):
            number = numbers[record.kind] = numbers.get(record.kind, 0) + 1
        if isinstance(record, AgentOutput):
            shown = _output(record.stream, output, verbose=verbose)
        else:
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

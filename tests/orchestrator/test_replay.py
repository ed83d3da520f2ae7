"""Replay of recorded decisions, on logs made in memory; and the CLI's replay of long logs."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestrator.challenge.loader import load_challenge
from orchestrator.log.eventlog import EventLog
from orchestrator.session.replay import _same, replay_records
from tests.cli import REPO, changeup
from triggers import (
    Action,
    AgentOutput,
    AgentTurnEnded,
    ClockTick,
    EndSession,
    Engine,
    Event,
    MessageDelivered,
    MessageQueued,
    PhaseResult,
    PhaseUnlocked,
    RecordError,
    RunTests,
    SessionStarted,
    Spec,
    TestsResult,
    TriggerCleared,
    TriggerFired,
    TriggerPending,
    build_spec,
)


def spec() -> Spec:
    """A pivot and a deadline over two phases."""
    return build_spec(
        ("phase1", "phase2"),
        [
            {"id": "pivot", "condition": "phase1_tests_pass", "unlocks": "phase2", "message": "Pivot."},
            {"id": "late", "condition": "time_elapsed > 1h and phase1_tests_not_pass", "unlocks": "phase2"},
        ],
        briefing="Go.",
    )


def recorded() -> list[dict[str, Any]]:
    """A session as its log would hold it: events, each followed by the engine's decisions."""
    engine = Engine(spec())
    events: list[Event] = [
        SessionStarted(0.0),
        MessageDelivered(0.1, "briefing"),
        TestsResult(5.0, 1, "a", (PhaseResult("phase1", 0, 2),)),
        ClockTick(6.0),
        TestsResult(9.0, 1, "b", (PhaseResult("phase1", 2, 0),)),
        MessageDelivered(9.5, "pivot"),
        AgentTurnEnded(12.0, 0),
        TestsResult(13.0, 4, "c", (PhaseResult("phase1", 2, 0), PhaseResult("phase2", 1, 0))),
    ]
    records: list[dict[str, Any]] = []
    for event in events:
        records.append({"seq": len(records) + 1, **event.to_record()})
        for action in engine.step(event):
            records.append({"seq": len(records) + 1, "t": event.t, **action.to_record()})
        if isinstance(event, TestsResult):
            records.append({"seq": len(records) + 1, "t": event.t, "kind": "tests.started"})  # a note
    return records


def test_a_faithful_log_agrees() -> None:
    """Every event's decisions match; notes are skipped."""
    result = replay_records(spec(), recorded())
    assert result.divergence is None
    assert result.events == 8
    assert result.decisions == sum(
        r["kind"] in ("phase.unlocked", "message.queued", "tests.requested", "trigger.fired", "session.ended")
        for r in recorded()
    )


def test_a_changed_verdict_diverges_at_that_event() -> None:
    """Making the passing run fail removes the pivot: divergence at that tests.result."""
    records = recorded()
    passing = next(r for r in records if r["kind"] == "tests.result" and r["snapshot"] == "b")
    passing["phases"][0].update(passed=1, failed=1)
    divergence = replay_records(spec(), records).divergence
    assert divergence is not None
    assert divergence.seq == passing["seq"]
    assert divergence.got == []
    assert divergence.reason == "the log has 4 decision(s) the engine no longer makes"


def test_a_changed_decision_names_the_field() -> None:
    """A decision edited in the log is reported with the field that differs."""
    records = recorded()
    fired = next(r for r in records if r["kind"] == "phase.unlocked" and r["trigger"] == "pivot")
    fired["trigger"] = "late"
    divergence = replay_records(spec(), records).divergence
    assert divergence is not None
    assert divergence.reason == "decision 2 differs in trigger"


def test_a_decision_at_another_time_diverges() -> None:
    """A decision logged at a time other than its event's is a divergence."""
    records = recorded()
    fired = next(r for r in records if r["kind"] == "trigger.fired")
    fired["t"] += 1
    divergence = replay_records(spec(), records).divergence
    assert divergence is not None
    assert divergence.reason == "decisions were recorded at a different time than their event"


def test_an_extra_decision_the_engine_makes() -> None:
    """A decision missing from the middle of a log is a divergence even if the log is torn."""
    records = recorded()
    records = [r for r in records if r["kind"] != "trigger.fired"]
    divergence = replay_records(spec(), records, torn=True).divergence
    assert divergence is not None
    assert divergence.reason == "decision 1 differs in cause, count, kind, phase"
    assert divergence.got[0]["kind"] == "trigger.fired"


def test_torn_tail_may_lose_the_last_decisions() -> None:
    """Only with a torn last line may the final event's decisions be a prefix of the engine's."""
    records = recorded()
    while records[-1]["kind"] != "session.ended":
        records.pop()
    cut = records[:-1]  # the session.ended line was the torn one
    assert replay_records(spec(), cut, torn=lambda: True).divergence is None
    assert replay_records(spec(), cut, torn=False).divergence is not None


def test_unreadable_event_is_a_divergence() -> None:
    """An event record that does not decode stops replay there."""
    records = copy.deepcopy(recorded())
    bad = next(r for r in records if r["kind"] == "message.delivered")
    del bad["trigger"]
    divergence = replay_records(spec(), records).divergence
    assert divergence is not None
    assert divergence.seq == bad["seq"]
    assert "malformed message.delivered" in divergence.reason


def test_decision_before_any_event_is_refused() -> None:
    """A log that starts with a decision is not a session log."""
    with pytest.raises(RecordError, match="before any event"):
        replay_records(spec(), [{"seq": 1, "t": 0.0, "kind": "trigger.fired", "trigger": "x", "cause": ""}])


# --- memory: replay streams ----------------------------------------------------------------------

#: ``changeup`` under tracemalloc: prints the peak of the memory Python allocated, at exit.
TRACED = """import atexit, runpy, sys, tracemalloc
tracemalloc.start()
atexit.register(lambda: print("peak", tracemalloc.get_traced_memory()[1], file=sys.stderr))
sys.argv[0] = "changeup"
runpy.run_module("orchestrator", run_name="__main__")"""


def long_run(folder: Path, chunks: int) -> Path:
    """A run folder of export-time whose log holds ``chunks`` agent output chunks of 1 kB (read
    and checked by replay, never stepped) among the events of a session and their decisions."""
    challenge = load_challenge(REPO / "challenges" / "export-time")
    engine = Engine(challenge.spec)
    header = {
        "challenge": challenge.id,
        "challenge_path": str(challenge.root),
        "challenge_sha256": challenge.digest,
    }
    folder.mkdir()
    log = EventLog.create(folder / "events.jsonl", header)

    def step(event: Event) -> None:
        log.append(event, event.t)
        for action in engine.step(event):
            log.append(action, event.t)

    step(SessionStarted(0.0))
    step(MessageDelivered(0.1, "briefing"))
    for n in range(chunks):
        t = 1.0 + n / 100
        log.append(AgentOutput(t, f"{n:>8} " + "o" * 1000), t)
        if n % 100 == 99:
            step(ClockTick(t))
    step(AgentTurnEnded(2.0 + chunks / 100, 0))
    log.close()
    return folder


def replay_peak(run: Path) -> int:
    """``changeup replay RUN`` in a process of its own: the peak of its Python allocations (bytes)."""
    done = subprocess.run(
        [sys.executable, "-c", TRACED, "replay", str(run)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "agrees" in done.stdout
    return int(done.stderr.split("peak ")[-1])


@pytest.mark.slow
def test_replay_memory_does_not_grow_with_the_log(tmp_path: Path) -> None:
    """Ten times the records (20 MB more of log) leave replay's peak allocation where it was: it
    streams the log rather than holding it (it held every record: 25 MB more here)."""
    short = replay_peak(long_run(tmp_path / "short", 2_000))
    long = replay_peak(long_run(tmp_path / "long", 20_000))
    assert long - short < 1_000_000, f"peak {short:,} bytes for 2,000 chunks, {long:,} for 20,000"


@pytest.mark.slow
def test_a_log_that_starts_with_a_decision_is_refused_by_the_cli(tmp_path: Path) -> None:
    """A decision before any event: the CLI names the log and the record; exit 1, no traceback."""
    run = long_run(tmp_path / "run", 0)
    log = run / "events.jsonl"
    header, *records = log.read_text().splitlines(keepends=True)
    decision = '{"seq":1,"t":0.0,"kind":"trigger.fired","trigger":"revision","cause":""}\n'
    log.write_text(header + decision + "".join(records))
    done = changeup("replay", str(run))
    assert done.returncode == 1
    assert f"{log}: seq 1: a trigger.fired decision before any event" in done.stderr
    assert "Traceback" not in done.stderr


ACTIONS = st.one_of(
    st.builds(TriggerPending, st.text(max_size=8), st.floats(0, 1e6)),
    st.builds(TriggerCleared, st.text(max_size=8)),
    st.builds(TriggerFired, st.text(max_size=8), st.text(max_size=20), st.integers(1, 9)),
    st.builds(PhaseUnlocked, st.text(max_size=8), st.text(max_size=8)),
    st.builds(MessageQueued, st.text(max_size=8), st.text(max_size=8), st.text(max_size=20), st.booleans()),
    st.builds(RunTests, st.integers(1, 99), st.lists(st.text(max_size=6), max_size=3).map(tuple), st.text()),
    st.builds(EndSession, st.text(max_size=12), st.text(max_size=12)),
)


@given(ACTIONS, ACTIONS)
def test_a_decision_matches_exactly_the_record_to_record_writes(action: Action, other: Action) -> None:
    """The compiled comparison agrees with comparing whole records: equal when the record is
    the action's own, unequal when a field, the kind, or the set of keys differs."""
    record = {"seq": 7, "t": 1.5, **action.to_record()}
    assert _same(action, record, 1.5)
    assert not _same(action, record, 2.5)
    assert _same(action, {"seq": 7, "t": 1.5, **other.to_record()}, 1.5) == (action == other)
    assert not _same(action, {**record, "extra": 1}, 1.5)
    for field in action.to_record():
        missing = {k: v for k, v in record.items() if k != field}
        assert not _same(action, missing, 1.5)

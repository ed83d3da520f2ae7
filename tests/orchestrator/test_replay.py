"""Replay of recorded decisions, on logs made in memory."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from orchestrator.replay import replay_records
from triggers import (
    AgentTurnEnded,
    ClockTick,
    Engine,
    MessageDelivered,
    PhaseResult,
    RecordError,
    SessionStarted,
    Spec,
    TestsResult,
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
    events = [
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

"""Properties of the engine over random challenges and random event streams."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from triggers import (
    AgentTurnEnded,
    ClockTick,
    CommitMade,
    EndSession,
    Engine,
    FileChange,
    FilesChanged,
    MessageDelivered,
    PhaseResult,
    PhaseUnlocked,
    SessionStarted,
    Spec,
    TestOutcome,
    TestsResult,
    TriggerFired,
    build_spec,
    decode,
    records,
)
from triggers.records import Event

PHASES = ("phase1", "phase2", "phase3")
ATOMS = [
    "phase1_tests_pass",
    "phase2_tests_not_pass",
    "tests_pass(phase3)",
    "time_elapsed > 10s",
    "time_elapsed <= 40s",
    "phase_elapsed >= 5s",
    "idle > 3s",
    "idle < 4s",
    "phase_elapsed < 20s",
    "idle >= phase_elapsed",
    "commits >= 1",
    "first_commit",
    "turns > 1",
    'file_exists("*.md")',
    'file_changed("src/**")',
    "tests_passed(phase1) >= 2",
    "always",
]


@st.composite
def conditions(draw: st.DrawFn, ids: list[str]) -> str:
    """A random valid condition, possibly naming other triggers."""
    atoms = ATOMS + [f"fired({i})" for i in ids] + [f"delivered({i})" for i in ids]
    parts = draw(st.lists(st.sampled_from(atoms), min_size=1, max_size=3))
    negate = draw(st.lists(st.booleans(), min_size=len(parts), max_size=len(parts)))
    words = [f"not {p}" if n else p for p, n in zip(parts, negate, strict=True)]
    joiner = draw(st.sampled_from([" and ", " or "]))
    return joiner.join(words)


@st.composite
def specs(draw: st.DrawFn) -> Spec:
    """A random spec of up to six triggers over three phases."""
    count = draw(st.integers(1, 6))
    ids = [f"t{i}" for i in range(count)]
    triggers: list[dict[str, Any]] = []
    for trigger_id in ids:
        unlocks = draw(st.sampled_from([None, "phase2", "phase3"]))
        triggers.append(
            {
                "id": trigger_id,
                "condition": draw(conditions(ids)),
                "hold": draw(st.sampled_from([0.0, 0.0, 2.0, 7.5])),
                "once": True if unlocks else draw(st.booleans()),
                "unlocks": unlocks,
                "message": f"message of {trigger_id}",
                "priority": draw(st.integers(0, 2)),
            }
        )
    limit = draw(st.sampled_from([None, 60.0]))
    return build_spec(PHASES, triggers, briefing="Go.", time_limit=limit)


@st.composite
def streams(draw: st.DrawFn) -> list[Event]:
    """A session.started followed by random events at non-decreasing times."""
    events: list[Event] = [SessionStarted(0.0, ("README.md", "src/app.py"))]
    t = 0.0
    for request in range(2, draw(st.integers(1, 40)) + 2):
        t += draw(st.sampled_from([0.0, 0.5, 1.0, 3.0, 10.0]))
        kind = draw(st.sampled_from(["files", "commit", "result", "tick", "delivered", "turn"]))
        if kind == "files":
            path = draw(st.sampled_from(["README.md", "NOTES.md", "src/app.py", "src/new.py"]))
            change = draw(st.sampled_from(["added", "modified", "deleted"]))
            events.append(FilesChanged(t, (FileChange(path, change),)))
        elif kind == "commit":
            events.append(CommitMade(t, f"sha{request}"))
        elif kind == "result":
            phases = tuple(PhaseResult(p, draw(st.integers(0, 3)), draw(st.integers(0, 2))) for p in PHASES)
            events.append(TestsResult(t, request, f"tree{request}", phases))
        elif kind == "tick":
            events.append(ClockTick(t))
        elif kind == "delivered":
            events.append(MessageDelivered(t, draw(st.sampled_from(["briefing", "t0", "t1"]))))
        else:
            events.append(AgentTurnEnded(t, 0))
    return events


def run(spec: Spec, events: list[Event], engine_type: type[Engine] = Engine) -> list[dict[str, Any]]:
    """Every action of a fresh engine over ``events``, as records, with wake-ups honoured."""
    engine = engine_type(spec)
    out: list[dict[str, Any]] = []
    for event in events:
        while (wake := engine.next_wakeup) is not None and wake < event.t:
            out += [a.to_record() for a in engine.step(ClockTick(wake))]
        out += [a.to_record() for a in engine.step(event)]
    return out


@settings(max_examples=150, deadline=None)
@given(specs(), streams())
def test_engine_is_deterministic(spec: Spec, events: list[Event]) -> None:
    """The same events give the same actions, byte for byte."""
    assert json.dumps(run(spec, events)) == json.dumps(run(spec, events))


class EveryReaderEngine(Engine):
    """The engine as if it visited every condition reading a changed fact, false or not."""

    def _dirty_from(self, facets: Iterable[str], dirty: set[int]) -> None:
        for facet in facets:
            dirty.update(self._readers.get(facet, ()))
            dirty.update(self._falsified.get(facet, ()))


@settings(max_examples=300, deadline=None)
@given(specs(), streams())
def test_skipping_conditions_an_anchor_keeps_false_decides_the_same(spec: Spec, events: list[Event]) -> None:
    """Skipping false conditions that a later anchor can only keep false makes exactly the
    decisions of visiting every condition that reads the anchor."""
    assert run(spec, events) == run(spec, events, EveryReaderEngine)


@settings(max_examples=150, deadline=None)
@given(specs(), streams())
def test_triggers_fire_at_most_once_unless_told(spec: Spec, events: list[Event]) -> None:
    """A ``once`` trigger fires at most once; counts of repeating triggers go up by one."""
    actions = run(spec, events)
    fires = Counter(a["trigger"] for a in actions if a["kind"] == "trigger.fired")
    for trigger in spec.triggers:
        if trigger.once:
            assert fires[trigger.id] <= 1
    counts = [a["count"] for a in actions if a["kind"] == "trigger.fired"]
    seen: Counter[str] = Counter()
    for action in actions:
        if action["kind"] == "trigger.fired":
            seen[action["trigger"]] += 1
            assert action["count"] == seen[action["trigger"]]
    assert len(counts) == sum(fires.values())


@settings(max_examples=150, deadline=None)
@given(specs(), streams())
def test_phases_never_relock_and_unlock_once(spec: Spec, events: list[Event]) -> None:
    """Each phase unlocks at most once, the unlocked set only grows, in any order of events."""
    engine = Engine(spec)
    unlocked: tuple[str, ...] = ()
    phases_unlocked: list[str] = []
    for event in events:
        for action in engine.step(event):
            if isinstance(action, PhaseUnlocked):
                phases_unlocked.append(action.phase)
        assert set(unlocked) <= set(engine.unlocked)
        unlocked = engine.unlocked
    assert len(phases_unlocked) == len(set(phases_unlocked))
    assert set(phases_unlocked) == set(engine.unlocked)


@settings(max_examples=100, deadline=None)
@given(specs(), streams())
def test_records_round_trip_through_json(spec: Spec, events: list[Event]) -> None:
    """Every event and action decodes from its JSON record to an equal object."""
    engine = Engine(spec)
    for event in events:
        assert decode(json.loads(json.dumps(event.to_record()))) == event
        for action in engine.step(event):
            assert decode(json.loads(json.dumps(action.to_record()))) == action


def test_nested_records_round_trip() -> None:
    """Test outcomes nested in a result survive encoding."""
    event = TestsResult(
        1.0,
        3,
        "abc",
        (
            PhaseResult(
                "phase1",
                1,
                1,
                (TestOutcome("a::b", "passed"), TestOutcome("a::c", "failed", "boom")),
            ),
        ),
        "ok",
    )
    assert decode(json.loads(json.dumps(event.to_record()))) == event
    assert event.phases[0].total == 2


def test_fired_cause_names_the_condition() -> None:
    """A fired record explains itself in the words of the challenge."""
    engine = Engine(build_spec(PHASES[:2], [{"id": "go", "condition": "ALWAYS", "message": "m"}]))
    fire = next(a for a in engine.step(SessionStarted(0.0)) if isinstance(a, TriggerFired))
    assert fire.cause == "ALWAYS held on session.started at 0s"


def test_outcomes_without_detail_decode() -> None:
    """A hand-written result may leave out an outcome's empty detail."""
    record = {
        "kind": "tests.result",
        "t": 1.0,
        "request": 1,
        "snapshot": "abc",
        "phases": [
            {"phase": "phase1", "passed": 1, "failed": 0, "tests": [{"id": "a::b", "outcome": "passed"}]}
        ],
    }
    result = decode(record)
    assert isinstance(result, TestsResult)
    assert result.phases[0].tests == (TestOutcome("a::b", "passed", ""),)


def test_optional_fields_may_be_left_out() -> None:
    """A hand-written record may leave out fields that have a default."""
    assert decode({"kind": "session.ended", "reason": "agent_done"}) == EndSession("agent_done")


def test_equal_outcomes_decode_to_one_object(monkeypatch: pytest.MonkeyPatch) -> None:
    """Outcomes are shared by value, and the table of them stays bounded."""
    monkeypatch.setattr(records, "_OUTCOMES", {})
    monkeypatch.setattr(records, "_OUTCOMES_HELD", 2)
    tests = [{"id": f"t::{i % 2}", "outcome": "passed", "detail": ""} for i in range(4)]
    record = {"kind": "tests.phase", "phase": "phase1", "passed": 4, "failed": 0, "tests": tests}
    first = PhaseResult.from_fields(record)
    assert first.tests[0] is first.tests[2]
    assert [o.id for o in first.tests] == ["t::0", "t::1", "t::0", "t::1"]
    third = PhaseResult.from_fields({**record, "tests": [{"id": "t::2", "outcome": "failed", "detail": "x"}]})
    assert third.tests == (TestOutcome("t::2", "failed", "x"),)
    assert len(records._OUTCOMES) == 1

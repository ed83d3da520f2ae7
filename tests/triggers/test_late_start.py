"""A session started at a later phase (``session.started`` with ``start``): what the engine decides."""

from __future__ import annotations

from typing import Any

import pytest

from triggers import (
    Engine,
    EngineError,
    MessageQueued,
    PhaseResult,
    PhaseUnlocked,
    RunTests,
    SessionStarted,
    SpecError,
    TestsResult,
    TriggerFired,
    build_spec,
    decode,
)

PHASES = ("phase1", "phase2", "phase3")
VALIDATION = {
    "id": "validation",
    "condition": "phase1_tests_pass",
    "unlocks": "phase2",
    "message": "Validate.",
}
DEADLINE = {
    "id": "deadline",
    "condition": "time_elapsed > 30min AND phase1_tests_not_pass",
    "unlocks": "phase2",
    "message": "Time is up.",
    "message_kind": "deadline",
}
PAGINATION = {
    "id": "pagination",
    "condition": "phase2_tests_pass",
    "unlocks": "phase3",
    "message": "Paginate.",
}
NOTICE = {"id": "notice", "condition": "fired(validation)", "message": "Thanks for validating."}


def engine(*triggers: dict[str, Any]) -> Engine:
    """An engine over three phases with ``triggers``."""
    return Engine(build_spec(PHASES, list(triggers), briefing="Build phase 1."))


def result(t: float, request: int, **phases: tuple[int, int]) -> TestsResult:
    """A test result: ``phase1=(passed, failed)``."""
    return TestsResult(t, request, "tree", tuple(PhaseResult(p, ok, bad) for p, (ok, bad) in phases.items()))


def test_a_late_start_opens_every_phase_up_to_it_and_briefs_with_its_message() -> None:
    """Starting at phase2: phases 1 and 2 unlock at once, the validation message is the
    briefing, and the first test run covers both phases."""
    e = engine(VALIDATION, DEADLINE, PAGINATION)
    actions = e.step(SessionStarted(0.0, ("app.py",), start="phase2"))
    assert actions == (
        PhaseUnlocked("phase1"),
        PhaseUnlocked("phase2"),
        MessageQueued("briefing", "briefing", "Validate."),
        RunTests(1, ("phase1", "phase2"), "session started"),
    )
    assert e.unlocked == ("phase1", "phase2")


def test_the_triggers_that_unlock_the_opened_phases_never_fire() -> None:
    """Phase 1 passing fires nothing (its unlockers and the deadline are retired), while the
    trigger to the phase after the start fires as written."""
    e = engine(VALIDATION, DEADLINE, PAGINATION)
    e.step(SessionStarted(0.0, start="phase2"))
    assert e.trigger_state("validation") == "done"
    assert e.trigger_state("deadline") == "done"
    quiet = e.step(result(1.0, 1, phase1=(3, 0), phase2=(0, 2)))
    assert not [a for a in quiet if isinstance(a, TriggerFired)]
    later = e.step(result(2.0, 1, phase1=(3, 0), phase2=(2, 0)))
    assert [a.trigger for a in later if isinstance(a, TriggerFired)] == ["pagination"]
    assert PhaseUnlocked("phase3", "pagination") in later
    assert e.unlocked == PHASES


def test_a_trigger_that_waits_on_a_skipped_one_never_fires() -> None:
    """``fired(validation)`` stays false: the skipped trigger did not fire, it was never needed."""
    e = engine(VALIDATION, NOTICE, PAGINATION)
    e.step(SessionStarted(0.0, start="phase2"))
    actions = e.step(result(1.0, 1, phase1=(3, 0), phase2=(2, 0)))
    assert [a.trigger for a in actions if isinstance(a, TriggerFired)] == ["pagination"]
    assert e.trigger_state("notice") == "inactive"


def test_the_deadline_is_never_the_briefing_even_first_in_the_file() -> None:
    """With the deadline listed first, the validation message still opens phase 2."""
    spec = build_spec(PHASES, [DEADLINE, VALIDATION, PAGINATION], briefing="Build phase 1.")
    assert spec.opening("phase2").id == "validation"
    higher = build_spec(
        PHASES, [VALIDATION, {**VALIDATION, "id": "urgent", "priority": 5, "message": "Now."}]
    )
    assert higher.opening("phase2").id == "urgent"  # as the engine lets the higher priority win


def test_starting_at_the_first_phase_is_starting_as_written() -> None:
    """``start`` naming the first phase decides exactly what no ``start`` decides."""
    plain = engine(VALIDATION, PAGINATION).step(SessionStarted(0.0, ("a.py",)))
    first = engine(VALIDATION, PAGINATION).step(SessionStarted(0.0, ("a.py",), start="phase1"))
    assert first == plain


def test_a_start_the_spec_cannot_open_is_refused() -> None:
    """An unknown phase, or one no trigger with a message unlocks, is an engine error (and a
    spec error, for those who check before the session starts)."""
    silent = {"id": "silent", "condition": "phase2_tests_pass", "unlocks": "phase3"}
    e = engine(VALIDATION, silent)
    with pytest.raises(EngineError, match="no phase 'phase9'"):
        e.step(SessionStarted(0.0, start="phase9"))
    with pytest.raises(SpecError, match="no trigger that unlocks phase3 has a message"):
        e.spec.opening("phase3")
    with pytest.raises(SpecError, match="first phase"):
        e.spec.opening("phase1")


def test_the_start_round_trips_through_the_log() -> None:
    """``session.started`` keeps its start when written and read back; an old record has none."""
    event = SessionStarted(0.0, ("a.py",), start="phase3")
    assert decode(event.to_record()) == event
    assert decode({"kind": "session.started", "t": 0.0, "files": []}) == SessionStarted(0.0)

"""The trigger engine: state machines, unlocking, delivery bookkeeping and session end."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from triggers import (
    AgentExited,
    AgentStarted,
    AgentTurnEnded,
    ClockTick,
    CommitMade,
    EndSession,
    Engine,
    EngineError,
    FileChange,
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
    build_spec,
)
from triggers.compile import GlobTable, compile_condition
from triggers.records import Action


def engine(*triggers: dict[str, Any], phases: tuple[str, ...] = ("phase1", "phase2"), **kw: Any) -> Engine:
    """An engine over ``phases`` with ``triggers`` given as dicts."""
    return Engine(build_spec(phases, list(triggers), **kw))


def result(t: float, request: int = 1, **phases: tuple[int, int]) -> TestsResult:
    """A test result: ``phase1=(passed, failed)``."""
    return TestsResult(t, request, "tree", tuple(PhaseResult(p, ok, bad) for p, (ok, bad) in phases.items()))


def kinds(actions: tuple[Action, ...]) -> list[str]:
    """The kinds of ``actions`` in order."""
    return [a.kind for a in actions]


def fired(actions: tuple[Action, ...]) -> list[str]:
    """Trigger ids fired by ``actions``."""
    return [a.trigger for a in actions if isinstance(a, TriggerFired)]


PIVOT = {"id": "pivot", "condition": "phase1_tests_pass", "unlocks": "phase2", "message": "Pivot!"}
DEADLINE = {
    "id": "deadline",
    "condition": "time_elapsed > 30min AND phase1_tests_not_pass",
    "unlocks": "phase2",
    "message": "Deadline.",
    "message_kind": "deadline",
}


def test_start_unlocks_first_phase_queues_briefing_and_runs_tests() -> None:
    """session.started unlocks phase 1, queues the briefing and asks for a baseline run."""
    e = engine(PIVOT, briefing="Build it.")
    actions = e.step(SessionStarted(0.0, ("app.py",)))
    assert actions == (
        PhaseUnlocked("phase1"),
        MessageQueued("briefing", "briefing", "Build it."),
        RunTests(1, ("phase1",), "session started"),
    )
    assert e.unlocked == ("phase1",)


def test_test_pass_trigger_fires_unlocks_and_queues_message() -> None:
    """When phase 1's tests pass the pivot fires, phase 2 unlocks and its tests are run."""
    e = engine(PIVOT)
    e.step(SessionStarted(0.0))
    assert e.step(result(5.0, phase1=(2, 1))) == ()
    actions = e.step(result(9.0, request=2, phase1=(3, 0)))
    assert kinds(actions) == [
        "trigger.fired",
        "phase.unlocked",
        "message.queued",
        "tests.requested",
    ]
    assert actions[1] == PhaseUnlocked("phase2", "pivot")
    assert actions[2] == MessageQueued("pivot", "notice", "Pivot!")
    assert actions[3] == RunTests(2, ("phase1", "phase2"), "phase2 unlocked")
    fire = actions[0]
    assert isinstance(fire, TriggerFired)
    assert "phase1_tests_pass held on tests.result at 9s" in fire.cause
    assert e.trigger_state("pivot") == "done"


def test_zero_tests_is_not_a_pass() -> None:
    """A phase whose run found no tests has not passed."""
    e = engine(PIVOT)
    e.step(SessionStarted(0.0))
    assert fired(e.step(result(1.0, phase1=(0, 0)))) == []


def test_deadline_never_fires_after_pivot_unlocked_the_phase() -> None:
    """A trigger that unlocks a phase fires only while that phase is locked."""
    e = engine(PIVOT, DEADLINE)
    e.step(SessionStarted(0.0))
    e.step(result(10.0, phase1=(3, 0)))
    e.step(result(20.0, request=2, phase1=(0, 3)))  # phase 1 regresses
    assert fired(e.step(ClockTick(4000.0))) == []
    assert e.trigger_state("deadline") == "done"


def test_pivot_never_fires_after_deadline() -> None:
    """The deadline moving on first rules the pivot out."""
    e = engine(PIVOT, DEADLINE)
    e.step(SessionStarted(0.0))
    e.step(result(1.0, phase1=(0, 3)))
    assert fired(e.step(ClockTick(1801.0))) == ["deadline"]
    assert fired(e.step(result(1900.0, request=2, phase1=(3, 0)))) == []
    assert e.trigger_state("pivot") == "done"


def test_for_hold_goes_pending_then_fires() -> None:
    """With ``for: 2m`` the condition must hold two minutes before firing."""
    e = engine({**PIVOT, "hold": 120.0})
    e.step(SessionStarted(0.0))
    actions = e.step(result(10.0, phase1=(1, 0)))
    assert actions == (TriggerPending("pivot", 10.0),)
    assert e.trigger_state("pivot") == "pending"
    assert e.next_wakeup == 130.0
    assert fired(e.step(ClockTick(129.0))) == []
    actions = e.step(ClockTick(130.0))
    assert fired(actions) == ["pivot"]
    first = actions[0]
    assert isinstance(first, TriggerFired)
    assert "for 2min since 10s" in first.cause


def test_for_hold_clears_when_condition_lapses() -> None:
    """A pending trigger whose condition stops holding goes back to inactive."""
    e = engine({**PIVOT, "hold": 120.0})
    e.step(SessionStarted(0.0))
    e.step(result(10.0, phase1=(1, 0)))
    assert e.step(result(60.0, request=2, phase1=(0, 1))) == (TriggerCleared("pivot"),)
    assert e.trigger_state("pivot") == "inactive"
    assert fired(e.step(ClockTick(200.0))) == []
    assert e.step(result(300.0, request=3, phase1=(1, 0))) == (TriggerPending("pivot", 300.0),)


def test_for_hold_on_a_verdict_waits_for_the_newest_request() -> None:
    """A hold on test verdicts that ends while a newer request is outstanding waits for it,
    then fires on that verdict if the condition still holds (even unchanged)."""
    e = engine({**PIVOT, "hold": 120.0})
    e.step(SessionStarted(0.0))
    e.step(result(10.0, phase1=(1, 0)))
    e.step(FilesChanged(100.0, (FileChange("a.py", "modified"),)))  # request 2
    assert e.step(ClockTick(130.0)) == ()
    assert e.trigger_state("pivot") == "pending"
    assert e.next_wakeup is None  # the verdict, not the clock, completes it
    actions = e.step(result(140.0, request=2, phase1=(1, 0)))
    assert fired(actions) == ["pivot"]
    fire = actions[0]
    assert isinstance(fire, TriggerFired)
    assert "held on tests.result at 140s for 2min since 10s" in fire.cause


def test_for_hold_on_a_verdict_clears_when_the_newest_verdict_fails() -> None:
    """A hold waiting for the newest verdict is cleared if that verdict breaks the condition."""
    e = engine({**PIVOT, "hold": 120.0})
    e.step(SessionStarted(0.0))
    e.step(result(10.0, phase1=(1, 0)))
    e.step(FilesChanged(100.0, (FileChange("a.py", "modified"),)))
    e.step(ClockTick(130.0))
    assert e.step(result(140.0, request=2, phase1=(0, 1))) == (TriggerCleared("pivot"),)


def test_for_hold_on_time_alone_ignores_test_requests() -> None:
    """A hold whose condition reads no verdict completes on time, requests or not."""
    e = engine({"id": "slow", "condition": "commits >= 1", "hold": 60.0, "message": "m"})
    e.step(SessionStarted(0.0))
    e.step(CommitMade(1.0, "a"))
    e.step(FilesChanged(2.0, (FileChange("a.py", "modified"),)))
    assert fired(e.step(ClockTick(61.0))) == ["slow"]


def test_pending_unlocker_is_cleared_when_another_trigger_unlocks_its_phase() -> None:
    """A pending trigger whose phase another trigger unlocks is cleared in that same step."""
    slow = {**PIVOT, "id": "slow", "hold": 60.0, "priority": 1}
    quick = {"id": "quick", "condition": "commits >= 1", "unlocks": "phase2"}
    e = engine(slow, quick)
    e.step(SessionStarted(0.0))
    assert kinds(e.step(result(1.0, phase1=(1, 0)))) == ["trigger.pending"]
    actions = e.step(CommitMade(2.0, "abc"))
    assert fired(actions) == ["quick"]
    assert TriggerCleared("slow") in actions
    assert e.trigger_state("slow") == "done"
    assert e.step(ClockTick(100.0)) == ()


def test_once_is_default() -> None:
    """A trigger without unlocks fires once even if its condition returns."""
    e = engine({"id": "nudge", "condition": "commits >= 1", "message": "Nice commit."})
    e.step(SessionStarted(0.0))
    assert fired(e.step(CommitMade(1.0, "a"))) == ["nudge"]
    assert fired(e.step(CommitMade(2.0, "b"))) == []


def test_repeating_trigger_fires_on_each_new_edge() -> None:
    """``once: false`` re-fires each time its condition becomes true anew, not while it stays so."""
    e = engine({"id": "red", "condition": "phase1_tests_not_pass", "message": "Red.", "once": False})
    assert fired(e.step(SessionStarted(0.0))) == []  # no verdict yet: not "not passing"
    assert fired(e.step(result(1.0, phase1=(0, 1)))) == ["red"]
    assert fired(e.step(result(1.5, phase1=(0, 2)))) == []
    assert e.trigger_state("red") == "fired"
    assert fired(e.step(result(2.0, request=2, phase1=(1, 0)))) == []
    assert e.trigger_state("red") == "inactive"
    again = e.step(result(3.0, request=3, phase1=(0, 1)))
    assert fired(again) == ["red"]
    assert [a.count for a in again if isinstance(a, TriggerFired)] == [2]


def test_priority_decides_between_simultaneous_unlockers() -> None:
    """Of two triggers ready at once to unlock a phase, the higher priority wins."""
    low = {"id": "low", "condition": "commits >= 1", "unlocks": "phase2", "message": "low"}
    high = {
        "id": "high",
        "condition": "first_commit",
        "unlocks": "phase2",
        "message": "high",
        "priority": 5,
    }
    e = engine(low, high)
    e.step(SessionStarted(0.0))
    assert fired(e.step(CommitMade(1.0, "a"))) == ["high"]
    assert e.trigger_state("low") == "done"


def test_priority_holds_for_an_unlocker_made_ready_by_a_cascade() -> None:
    """An unlocker that a notice's firing makes ready in the same step still wins on priority.

    ``low`` is ready on the commit itself; ``high`` only once ``notice`` has fired on that same
    commit. Both are ready at the same moment, so the higher priority unlocks the phase.
    """
    low = {"id": "low", "condition": "commits >= 1", "unlocks": "phase2", "message": "low"}
    notice = {"id": "notice", "condition": "first_commit", "message": "committed"}
    high = {"id": "high", "condition": "fired(notice)", "unlocks": "phase2", "message": "high", "priority": 5}
    e = engine(low, notice, high)
    e.step(SessionStarted(0.0))
    actions = e.step(CommitMade(1.0, "a"))
    assert fired(actions) == ["notice", "high"]
    assert PhaseUnlocked("phase2", "high") in actions
    assert e.trigger_state("low") == "done"


def test_unlocking_waits_for_the_triggers_that_unlock_nothing() -> None:
    """In one step, triggers that only send a message fire before a phase unlocks."""
    before = {"id": "before", "condition": "first_commit and not phase_unlocked(phase2)", "message": "m"}
    pivot = {"id": "pivot", "condition": "first_commit", "unlocks": "phase2", "priority": 5}
    e = engine(pivot, before)
    e.step(SessionStarted(0.0))
    assert fired(e.step(CommitMade(1.0, "a"))) == ["before", "pivot"]


def test_file_order_decides_equal_priority() -> None:
    """With equal priority the trigger written first wins."""
    a = {"id": "a", "condition": "commits >= 1", "unlocks": "phase2"}
    b = {"id": "b", "condition": "first_commit", "unlocks": "phase2"}
    e = engine(a, b)
    e.step(SessionStarted(0.0))
    assert fired(e.step(CommitMade(1.0, "x"))) == ["a"]


def test_fired_cascades_within_one_step() -> None:
    """A trigger conditioned on another's firing fires in the same step."""
    first = {"id": "first", "condition": "first_commit", "message": "one"}
    second = {"id": "second", "condition": "fired(first)", "message": "two"}
    e = engine(second, first)
    e.step(SessionStarted(0.0))
    assert fired(e.step(CommitMade(1.0, "x"))) == ["first", "second"]


@pytest.mark.parametrize(
    ("condition", "raises"),
    [
        ("idle > 30s", set()),
        ("idle >= 30s", set()),
        ("idle < 30s", {"anchor.idle"}),
        ("not idle > 30s", {"anchor.idle"}),
        ("not idle <= 30s", set()),
        ("30s < phase_elapsed", set()),
        ("idle == 30s", {"anchor.idle"}),
        ("idle > 30s or idle < 5s", {"anchor.idle"}),
        ("time_elapsed > idle", {"anchor.idle"}),
        ("idle > phase_elapsed", {"anchor.idle", "anchor.phase"}),
        ("idle > 30s and commits >= 1", {"commits"}),
    ],
)
def test_which_facts_can_make_a_condition_true(condition: str, raises: set[str]) -> None:
    """Anchors only move forward, so ``idle > 30s`` is only ever falsified by a file change:
    the engine skips it then while it is false. Every other fact may make it true."""
    spec = build_spec(("phase1",), [{"id": "x", "condition": condition}])
    compiled = compile_condition(spec.triggers[0].condition, GlobTable())
    assert compiled.raises == raises
    assert raises <= compiled.deps


def test_file_predicates() -> None:
    """file_exists follows creation and deletion; file_changed remembers any change."""
    exists = {"id": "exists", "condition": 'file_exists("*.md")', "message": "m", "once": False}
    changed = {"id": "changed", "condition": 'file_changed("src/")', "message": "m"}
    e = engine(exists, changed)
    assert fired(e.step(SessionStarted(0.0, ("README.md", "src/app.py")))) == ["exists"]
    assert fired(e.step(FilesChanged(1.0, (FileChange("README.md", "deleted"),)))) == []
    assert e.trigger_state("exists") == "inactive"
    actions = e.step(
        FilesChanged(2.0, (FileChange("NOTES.md", "added"), FileChange("src/app.py", "modified")))
    )
    assert fired(actions) == ["exists", "changed"]
    assert RunTests(3, ("phase1",), "files changed") in actions


def test_commits_turns_and_counts() -> None:
    """Counters compare against plain numbers."""
    t = {
        "id": "t",
        "condition": "commits >= 2 and turns >= 1 and tests_passed(phase1) > 1",
        "message": "m",
    }
    u = {"id": "u", "condition": "tests_failed(phase1) == 0 and 1 <= commits", "message": "m"}
    e = engine(t, u)
    e.step(SessionStarted(0.0))
    assert fired(e.step(CommitMade(1.0, "a"))) == ["u"]  # no run yet: nothing failed
    e.step(CommitMade(2.0, "b"))
    e.step(MessageDelivered(2.5, "whatever"))
    e.step(AgentTurnEnded(3.0, 0))
    assert fired(e.step(result(4.0, request=3, phase1=(2, 0)))) == ["t"]


def test_delivered_predicate() -> None:
    """delivered(x) becomes true when x's message reaches the agent."""
    follow = {"id": "follow", "condition": "delivered(pivot)", "message": "And also..."}
    e = engine(PIVOT, follow)
    e.step(SessionStarted(0.0))
    e.step(result(1.0, phase1=(1, 0)))
    assert fired(e.step(MessageDelivered(2.0, "pivot"))) == ["follow"]
    assert fired(e.step(MessageDelivered(3.0, "pivot"))) == []


def test_results_for_locked_phases_are_ignored() -> None:
    """A result naming a phase that is still locked changes nothing."""
    e = engine({"id": "p2", "condition": "tests_pass(phase2) or phase1_tests_pass", "message": "m"})
    e.step(SessionStarted(0.0))
    assert fired(e.step(result(1.0, phase2=(3, 0)))) == []


def test_agent_done_after_turn_and_settling_run() -> None:
    """After a turn ends and its test run fires nothing, the session ends: agent_done."""
    e = engine(PIVOT, briefing="Go.")
    e.step(SessionStarted(0.0))
    e.step(MessageDelivered(0.1, "briefing"))
    actions = e.step(AgentTurnEnded(10.0, 0))
    assert actions == (RunTests(2, ("phase1",), "turn ended"),)
    assert e.step(result(11.0, request=1, phase1=(0, 1))) == ()  # an older request does not settle
    assert e.step(result(12.0, request=2, phase1=(0, 1))) == (EndSession("agent_done"),)
    assert e.step(ClockTick(13.0)) == ()
    assert e.next_wakeup is None


def test_turn_end_that_fires_a_trigger_keeps_the_session_going() -> None:
    """A settling run that fires a trigger queues its message instead of ending."""
    e = engine(PIVOT, briefing="Go.")
    e.step(SessionStarted(0.0))
    e.step(MessageDelivered(0.1, "briefing"))
    e.step(AgentTurnEnded(10.0, 0))
    actions = e.step(result(12.0, request=2, phase1=(1, 0)))
    assert "session.ended" not in kinds(actions)
    e.step(MessageDelivered(12.5, "pivot"))
    e.step(AgentTurnEnded(20.0, 0))
    assert kinds(e.step(result(21.0, request=4, phase1=(1, 0), phase2=(1, 0)))) == ["session.ended"]


def test_pending_trigger_keeps_an_idle_session_alive() -> None:
    """An idle agent's session waits for a pending trigger, then ends when it clears."""
    e = engine({"id": "hold", "condition": "phase1_tests_not_pass", "hold": 60.0, "message": "m"})
    assert kinds(e.step(SessionStarted(0.0))) == ["phase.unlocked", "tests.requested"]
    assert kinds(e.step(result(0.5, phase1=(0, 1)))) == ["trigger.pending"]
    e.step(AgentTurnEnded(1.0))
    assert e.step(result(2.0, request=2, phase1=(1, 0))) == (
        TriggerCleared("hold"),
        EndSession("agent_done"),
    )


def test_agent_exit_ends_even_with_messages_pending() -> None:
    """An agent that is gone cannot take messages: the session ends once its run settles."""
    e = engine(PIVOT, briefing="Go.")
    e.step(SessionStarted(0.0))
    e.step(AgentStarted(0.0))
    e.step(AgentExited(1.0, 1))
    actions = e.step(result(2.0, request=2, phase1=(1, 0)))
    assert kinds(actions)[-1] == "session.ended"
    assert actions[-1] == EndSession("agent_exited")


def test_end_condition_and_time_limit() -> None:
    """The end condition and the time limit end the session with their reason."""
    e = engine(PIVOT, end="phase2_tests_pass", time_limit=3600.0)
    e.step(SessionStarted(0.0))
    e.step(result(1.0, phase1=(1, 0)))
    assert e.step(result(2.0, request=2, phase1=(1, 0), phase2=(1, 0)))[-1] == EndSession(
        "end_condition", "tests_pass(phase2)"
    )
    late = engine(PIVOT, time_limit=60.0)
    late.step(SessionStarted(0.0))
    assert late.next_wakeup == 60.0
    assert late.step(ClockTick(60.0)) == (EndSession("time_limit", "time_elapsed >= 1min"),)


def test_unconditional_trigger_fires_at_start() -> None:
    """``always`` fires on session.started."""
    e = engine({"id": "hello", "condition": "always", "message": "Welcome."})
    assert fired(e.step(SessionStarted(0.0))) == ["hello"]


def test_first_event_must_be_start() -> None:
    """Events before session.started are refused."""
    with pytest.raises(EngineError, match="first event"):
        engine(PIVOT).step(ClockTick(1.0))


def test_start_twice_is_refused() -> None:
    """A second session.started is an error."""
    e = engine(PIVOT)
    e.step(SessionStarted(0.0))
    with pytest.raises(EngineError, match="twice"):
        e.step(SessionStarted(1.0))


def test_time_going_backwards_is_refused() -> None:
    """Event times must not decrease."""
    e = engine(PIVOT)
    e.step(SessionStarted(5.0))
    with pytest.raises(EngineError, match="earlier"):
        e.step(ClockTick(4.0))


def test_results_out_of_order_are_refused() -> None:
    """A result for an older request than one already answered is an error, naming both."""
    e = engine(PIVOT)
    e.step(SessionStarted(0.0))
    e.step(FilesChanged(1.0, (FileChange("a.py", "modified"),)))
    e.step(result(2.0, request=2, phase1=(0, 1)))
    with pytest.raises(EngineError, match=r"request 1 at t=3.0 arrived after the result for request 2"):
        e.step(result(3.0, request=1, phase1=(1, 0)))
    assert e.trigger_state("pivot") == "inactive"


def test_agent_restart_after_exit() -> None:
    """An agent that starts again is no longer gone."""
    e = engine(PIVOT)
    e.step(SessionStarted(0.0))
    e.step(AgentExited(1.0))
    e.step(AgentStarted(1.5))
    e.step(MessageDelivered(1.6, "x"))
    assert e.step(result(2.0, request=2, phase1=(0, 1))) == ()


def test_no_verdict_is_neither_pass_nor_not_pass() -> None:
    """Before a phase's first verdict, ``_tests_pass`` and ``_tests_not_pass`` are both false,
    while ``not tests_pass`` holds; the first verdict decides."""
    e = engine(
        {"id": "red", "condition": "phase1_tests_not_pass", "message": "Red."},
        {"id": "green", "condition": "phase1_tests_pass", "message": "Green."},
        {"id": "unsure", "condition": "not phase1_tests_pass and not phase1_tests_not_pass", "message": "?"},
    )
    assert fired(e.step(SessionStarted(0.0))) == ["unsure"]
    assert fired(e.step(ClockTick(3600.0))) == []
    assert fired(e.step(result(3601.0, phase1=(2, 1)))) == ["red"]


@pytest.mark.parametrize("status", ["timeout", "tampered", "refused"])
def test_a_void_run_is_a_failing_verdict(status: Literal["timeout", "tampered", "refused"]) -> None:
    """A run voided for the agent's code (every test failed by the grading policy) is a verdict."""
    e = engine({"id": "red", "condition": "phase1_tests_not_pass", "message": "Red."})
    e.step(SessionStarted(0.0))
    voided = TestsResult(1.0, 1, "tree", (PhaseResult("phase1", 0, 3),), status=status)
    assert fired(e.step(voided)) == ["red"]


def test_an_invalid_run_gives_no_verdict() -> None:
    """An invalid run (the grader could not start) says nothing about the work: the phase keeps
    the verdict it had, here none, so neither verdict trigger fires."""
    e = engine(
        {"id": "red", "condition": "phase1_tests_not_pass", "message": "Red."},
        {"id": "few", "condition": "tests_failed(phase1) >= 1", "message": "Few."},
    )
    e.step(SessionStarted(0.0))
    invalid = TestsResult(1.0, 1, "tree", (PhaseResult("phase1", 0, 3),), status="invalid")
    assert fired(e.step(invalid)) == []
    assert fired(e.step(result(2.0, request=2, phase1=(0, 1)))) == ["red", "few"]

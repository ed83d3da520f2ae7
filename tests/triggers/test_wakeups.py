"""When the engine asks to be woken: clocks, holds, and durations measured from anchors that move.

The session sends a ``clock.tick`` at :attr:`Engine.next_wakeup` and at no other time, so a
wake-up missing from the engine's heap is a decision missed. The engine computes a watch's
wake-up again only when it can have come earlier (see ``Engine._schedule``); these tests pin
the cases where it does.
"""

from __future__ import annotations

import math

import pytest

from tests.triggers.test_engine import DEADLINE, PIVOT, engine, fired, result
from triggers import (
    ClockTick,
    CommitMade,
    FileChange,
    FilesChanged,
    SessionStarted,
    TriggerCleared,
    TriggerPending,
)


def test_deadline_fires_at_exactly_its_instant() -> None:
    """A time trigger wakes the session just after 30 minutes, and fires then."""
    e = engine(PIVOT, DEADLINE)
    e.step(SessionStarted(0.0))
    e.step(result(1.0, phase1=(0, 3)))
    wake = e.next_wakeup
    assert wake == math.nextafter(1800.0, math.inf)
    assert fired(e.step(ClockTick(1800.0))) == []
    assert fired(e.step(ClockTick(wake))) == ["deadline"]
    assert e.next_wakeup is None


def test_idle_wakes_relative_to_last_change() -> None:
    """``idle`` counts from the agent's last file change."""
    e = engine({"id": "nudge", "condition": "idle > 5m", "message": "Still there?"})
    e.step(SessionStarted(0.0))
    assert e.next_wakeup == math.nextafter(300.0, math.inf)
    e.step(FilesChanged(100.0, (FileChange("a.py", "modified"),)))
    e.step(FilesChanged(200.0, (FileChange("a.py", "modified"),)))
    assert fired(e.step(ClockTick(math.nextafter(300.0, math.inf)))) == []
    assert e.next_wakeup == math.nextafter(500.0, math.inf)
    assert fired(e.step(ClockTick(e.next_wakeup))) == ["nudge"]


def test_unlock_cascade_phase_elapsed_and_phase_unlocked() -> None:
    """phase_unlocked and phase_elapsed follow an unlock within the session."""
    follow = {
        "id": "follow",
        "condition": "phase_unlocked(phase2) and phase_elapsed >= 5m",
        "message": "m",
    }
    e = engine(PIVOT, follow)
    e.step(SessionStarted(0.0))
    e.step(result(100.0, phase1=(1, 0)))
    # The wake-up set at the start (300s) still comes first; visiting then is harmless.
    assert e.next_wakeup == 300.0
    assert fired(e.step(ClockTick(300.0))) == []
    assert e.next_wakeup == 400.0
    assert fired(e.step(ClockTick(399.0))) == []
    assert fired(e.step(ClockTick(400.0))) == ["follow"]


@pytest.mark.parametrize(
    ("condition", "before", "after"),
    [
        ("time_elapsed < 10s", True, False),
        ("time_elapsed <= 10s", True, False),
        ("time_elapsed >= 10s", False, True),
        ("time_elapsed == 10s", False, False),
        ("time_elapsed != 10s", True, True),
        ("10s > time_elapsed", True, False),
        ("idle > phase_elapsed", False, False),
        ("10s < 20s", True, True),
    ],
)
def test_time_comparisons(condition: str, before: bool, after: bool) -> None:
    """Each comparison operator on durations gives the right truth on either side of 10s."""
    e = engine({"id": "x", "condition": condition, "message": "m", "once": False})
    started = fired(e.step(SessionStarted(0.0))) == ["x"]
    assert started is before
    while (wake := e.next_wakeup) is not None and wake <= 11.0:
        e.step(ClockTick(wake))
    e.step(ClockTick(11.0))
    assert (e.trigger_state("x") == "fired") is after


def test_a_file_change_rearms_and_clears_idle_triggers() -> None:
    """A fired repeating idle nudge re-arms on the next change; a pending one is cleared."""
    e = engine(
        {"id": "nudge", "condition": "idle > 5s", "message": "m", "once": False},
        {"id": "held", "condition": "idle > 5s", "message": "m", "hold": 10.0},
    )
    e.step(SessionStarted(0.0))
    actions = e.step(ClockTick(math.nextafter(5.0, math.inf)))
    assert fired(actions) == ["nudge"]
    assert e.trigger_state("held") == "pending"
    assert TriggerCleared("held") in e.step(FilesChanged(8.0, (FileChange("a.py", "modified"),)))
    assert e.trigger_state("nudge") == "inactive"
    assert fired(e.step(ClockTick(math.nextafter(13.0, math.inf)))) == ["nudge"]


def test_equality_instant_is_visited() -> None:
    """``time_elapsed == 10s`` is true at exactly 10s, and the engine wakes then."""
    e = engine({"id": "x", "condition": "time_elapsed == 10s", "message": "m"})
    e.step(SessionStarted(0.0))
    assert e.next_wakeup == 10.0
    assert fired(e.step(ClockTick(10.0))) == ["x"]


def test_hold_inside_a_time_window() -> None:
    """A hold ending inside the condition's time window fires; the stale wake-up is dropped."""
    e = engine(
        {
            "id": "early",
            "condition": "commits >= 1 and time_elapsed < 100s",
            "hold": 10.0,
            "message": "m",
        }
    )
    e.step(SessionStarted(0.0))
    assert e.next_wakeup == 100.0
    assert e.step(CommitMade(5.0, "a")) == (TriggerPending("early", 5.0),)
    assert e.next_wakeup == 15.0
    assert fired(e.step(ClockTick(15.0))) == ["early"]
    assert e.step(ClockTick(200.0)) == ()
    assert e.next_wakeup is None


def test_a_clock_from_a_moving_anchor_wakes_earlier_once_the_anchor_moves() -> None:
    """An ``idle`` clock that had flipped flips again after a file change, before the other
    clock's wake-up: the engine computes the wake-up again, and fires then."""
    e = engine({"id": "nudge", "condition": "idle > 3s or time_elapsed > 10s", "once": False, "message": "m"})
    e.step(SessionStarted(0.0))
    assert fired(e.step(ClockTick(math.nextafter(3.0, math.inf)))) == ["nudge"]
    assert e.next_wakeup == math.nextafter(10.0, math.inf)  # idle has flipped: only time can
    e.step(FilesChanged(6.0, (FileChange("a.py", "modified"),)))
    assert e.trigger_state("nudge") == "inactive"
    assert e.next_wakeup == math.nextafter(9.0, math.inf)
    assert fired(e.step(ClockTick(math.nextafter(9.0, math.inf)))) == ["nudge"]


def test_a_hold_that_starts_again_wakes_at_its_own_end() -> None:
    """A hold that lapsed and starts again keeps the first hold's wake-up, which is earlier;
    at that one the engine asks for the new hold's end, and fires there."""
    e = engine({"id": "held", "condition": "tests_passed(phase1) >= 2", "hold": 5.0, "message": "m"})
    e.step(SessionStarted(0.0))
    assert e.step(result(1.0, phase1=(2, 0))) == (TriggerPending("held", 1.0),)
    assert e.step(result(2.0, request=1, phase1=(1, 1))) == (TriggerCleared("held"),)
    assert e.step(result(3.0, request=1, phase1=(3, 0))) == (TriggerPending("held", 3.0),)
    assert e.next_wakeup == 6.0  # the first hold's end: visiting then is harmless
    assert e.step(ClockTick(6.0)) == ()
    assert e.next_wakeup == 8.0
    assert fired(e.step(ClockTick(8.0))) == ["held"]

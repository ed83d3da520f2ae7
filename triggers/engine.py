"""The trigger engine: a pure, deterministic function of the event stream.

``Engine.step(event)`` is the only way its state changes. It reads no clock (time arrives
inside events) and does no I/O, so feeding a recorded log through a fresh engine reproduces
every decision. Each trigger is a state machine ``Inactive → Pending(since) → Fired`` with
Prometheus-style ``for:`` holds (the condition must hold continuously for the hold time).

Work per event is proportional to the triggers the event can affect, not to all triggers:
every compiled condition lists the facts it reads, and conditions involving time report
the instant their value may next flip, which the engine keeps in a heap of wake-ups and
exposes as :attr:`Engine.next_wakeup` so the session knows when to send a ``clock.tick``.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable

from triggers.compile import Compiled, GlobTable, compile_condition
from triggers.durations import format_duration
from triggers.facts import Facts
from triggers.globs import compile_glob
from triggers.records import (
    Action,
    AgentExited,
    AgentStarted,
    AgentTurnEnded,
    ClockTick,
    CommitMade,
    EndSession,
    Event,
    FilesChanged,
    MessageDelivered,
    MessageQueued,
    PhaseUnlocked,
    RunTests,
    SessionStarted,
    TestsResult,
    TriggerCleared,
    TriggerFired,
    TriggerPending,
)
from triggers.spec import BRIEFING, Spec, TriggerSpec

__all__ = ["Engine", "EngineError"]

_INACTIVE, _PENDING, _FIRED, _DONE = range(4)
#: How many instants a trigger's condition is looked ahead for one that time alone would make hold.
_LOOKAHEAD = 64
_STATE_NAMES = ("inactive", "pending", "fired", "done")


class EngineError(ValueError):
    """An event stream the engine cannot accept (out of order, or before the start)."""


class _Watch:
    """One condition under watch: a trigger, the end condition or the time limit."""

    __slots__ = (
        "cond",
        "count",
        "end_reason",
        "evaluate",
        "hold",
        "since",
        "spec",
        "state",
        "timed",
        "unlocks",
        "wake",
    )
    # wake: the earliest wake-up this watch has in the engine's heap (inf: none)

    def __init__(self, cond: Compiled, spec: TriggerSpec, end_reason: str = "") -> None:
        self.cond = cond
        self.spec = spec
        self.end_reason = end_reason
        # Copies of what every visit reads, kept here to spare attribute chains on a hot path.
        self.evaluate = cond.evaluate
        self.timed = bool(cond.clocks)
        self.unlocks = spec.unlocks
        self.hold = spec.hold
        self.state = _INACTIVE
        self.since = 0.0
        self.count = 0
        self.wake = math.inf


class Engine:
    """Decides, event by event, which triggers fire, which phases unlock and when to end."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        globs = GlobTable()
        # Priority first, then file order: the first of two triggers ready to unlock the
        # same phase in the same step wins, and the other can then never fire.
        ordered = sorted(spec.triggers, key=lambda t: -t.priority)
        self._watches = [_Watch(compile_condition(t.condition, globs), t) for t in ordered]
        for expr, reason in (
            (spec.end, "end_condition"),
            (spec.time_limit_condition(), "time_limit"),
        ):
            if expr is not None:
                ender = TriggerSpec(reason, expr)
                self._watches.append(_Watch(compile_condition(expr, globs), ender, reason))
        self._by_id = {w.spec.id: w for w in self._watches if not w.end_reason}
        # Who to visit when a fact changes: every reader whose condition it may make true,
        # and the readers it can only make false, while their condition is not known false.
        self._readers: dict[str, list[int]] = {}
        self._falsified: dict[str, list[int]] = {}
        for index, watch in enumerate(self._watches):
            deps = set(watch.cond.deps)
            if watch.spec.unlocks is not None:
                deps.add(f"phase:{watch.spec.unlocks}")  # to retire it once its phase unlocks
            only_falsify = watch.cond.deps - watch.cond.raises
            for dep in sorted(deps):
                table = self._falsified if dep in only_falsify else self._readers
                table.setdefault(dep, []).append(index)
        self._globs = [compile_glob(p) for p in globs.patterns]
        self._glob_hits: dict[str, tuple[int, ...]] = {}
        self.facts = Facts(len(self._globs))
        self._files: set[str] = set()
        self._wakes: list[tuple[float, int]] = []
        self._requests = 0
        self._answered = 0  # the latest test request a result has answered
        self._unlocked: tuple[str, ...] = ()
        self._undelivered = 0
        self._busy = False
        self._gone = False
        self._settle_request: int | None = None
        self._settled = False
        self._started = False
        self.ended: EndSession | None = None

    # --- queries ---------------------------------------------------------------------------

    @property
    def next_wakeup(self) -> float | None:
        """When time alone may change a decision; the session sends a ``clock.tick`` then."""
        while self._wakes:
            wake, index = self._wakes[0]
            if self._watches[index].wake == wake and self._watches[index].state != _DONE:
                return None if self.ended else wake
            heapq.heappop(self._wakes)
        return None

    @property
    def unlocked(self) -> tuple[str, ...]:
        """Unlocked phases in challenge order."""
        return self._unlocked

    def trigger_state(self, trigger: str) -> str:
        """``inactive``, ``pending``, ``fired`` or ``done`` (can never fire again)."""
        return _STATE_NAMES[self._by_id[trigger].state]

    # --- stepping --------------------------------------------------------------------------

    def step(self, event: Event) -> tuple[Action, ...]:
        """Take one event; return the actions it causes, in the order they apply."""
        if self.ended is not None:
            return ()
        facts = self.facts
        if not self._started and not isinstance(event, SessionStarted):
            raise EngineError(f"the first event must be session.started, not {event.kind}")
        if event.t < facts.t:
            raise EngineError(f"{event.kind} at t={event.t} is earlier than t={facts.t}")
        facts.t = event.t
        if type(event) is ClockTick and self._started and not (self._wakes and self._wakes[0][0] <= event.t):
            # Only time moved and nothing is due: no fact changed, so no decision can. (Had
            # the last step left the session settled and idle, it would have ended then.)
            return ()
        actions: list[Action] = []
        changed: list[str] = []
        if isinstance(event, SessionStarted):
            self._start(event, actions)
            dirty = set(range(len(self._watches)))
        else:
            self._apply(event, actions, changed)
            dirty = set()
        self._dirty_from(changed, dirty)
        self._due(event.t, dirty)
        self._evaluate(dirty, event, actions)
        if self.ended is None and self._settled and self._idle():
            self._end(EndSession("agent_exited" if self._gone else "agent_done"), actions)
        return tuple(actions)

    def _start(self, event: SessionStarted, actions: list[Action]) -> None:
        if self._started:
            raise EngineError("session.started arrived twice")
        self._started = True
        self._touch(((path, "added") for path in event.files), [], by_agent=False)
        first = self.spec.phases[0]
        self.facts.unlocked[first] = event.t
        self._unlocked = (first,)
        self.facts.phase_anchor = event.t
        self.facts.idle_anchor = event.t
        actions.append(PhaseUnlocked(first))
        if self.spec.briefing:
            actions.append(MessageQueued(BRIEFING, "briefing", self.spec.briefing))
            self._undelivered += 1
        actions.append(self._run_tests("session started"))

    def _apply(self, event: Event, actions: list[Action], changed: list[str]) -> None:
        facts = self.facts
        if isinstance(event, FilesChanged):
            facts.idle_anchor = event.t
            changed.append("anchor.idle")
            self._touch(((c.path, c.change) for c in event.changes), changed)
            actions.append(self._run_tests("files changed"))
        elif isinstance(event, TestsResult):
            self._record_result(event, changed)
        elif isinstance(event, CommitMade):
            facts.commits += 1
            changed.append("commits")
        elif isinstance(event, MessageDelivered):
            self._undelivered -= 1
            self._busy = True
            self._settled = False
            if event.trigger not in facts.delivered:
                facts.delivered.add(event.trigger)
                changed.append(f"delivered:{event.trigger}")
        elif isinstance(event, AgentTurnEnded | AgentExited):
            self._busy = False
            self._gone = self._gone or isinstance(event, AgentExited)
            facts.turns += 1
            changed.append("turns")
            request = self._run_tests("agent exited" if self._gone else "turn ended")
            self._settle_request = request.request
            self._settled = False
            actions.append(request)
        elif isinstance(event, AgentStarted):
            self._gone = False
        # clock.tick changes no fact; step() collects due wake-ups.

    def _touch(
        self, changes: Iterable[tuple[str, str]], changed: list[str], *, by_agent: bool = True
    ) -> None:
        facts = self.facts
        for path, change in changes:
            exists_before = path in self._files
            if change == "deleted":
                self._files.discard(path)
            else:
                self._files.add(path)
            exists_after = path in self._files
            hits = self._glob_hits.get(path)
            if hits is None:  # paths recur: match each against the globs once
                hits = self._glob_hits[path] = tuple(
                    i for i, pattern in enumerate(self._globs) if pattern.match(path) is not None
                )
            for index in hits:
                count = facts.glob_exists[index] + (exists_after - exists_before)
                newly_changed = by_agent and not facts.glob_changed[index]
                if (count > 0) != (facts.glob_exists[index] > 0) or newly_changed:
                    changed.append(f"glob:{index}")
                facts.glob_exists[index] = count
                facts.glob_changed[index] = facts.glob_changed[index] or by_agent

    def _record_result(self, event: TestsResult, changed: list[str]) -> None:
        facts = self.facts
        self._answered = max(self._answered, event.request)
        for result in event.phases:
            phase = result.phase
            if phase not in facts.unlocked:
                continue
            passing = result.all_pass
            if (
                facts.passing.get(phase) != passing
                or facts.passed.get(phase) != result.passed
                or facts.failed.get(phase) != result.failed
            ):
                facts.passing[phase] = passing
                facts.passed[phase] = result.passed
                facts.failed[phase] = result.failed
                changed.append(f"tests:{phase}")
        if self._settle_request is not None and event.request >= self._settle_request:
            self._settle_request = None
            self._settled = True

    def _run_tests(self, reason: str) -> RunTests:
        self._requests += 1
        return RunTests(self._requests, self.unlocked, reason)

    def _idle(self) -> bool:
        if self._gone:
            return True
        if self._busy or self._undelivered > 0 or self._answered < self._requests:
            return False  # a verdict still to come may fire a trigger
        return all(w.state != _PENDING for w in self._watches) and not self._time_may_fire()

    @property
    def waiting_for_time(self) -> bool:
        """The agent is idle, every test request answered, and only time can still fire a trigger.

        The session then need not wait: nothing but the clock can change a fact, so it may
        skip to :attr:`next_wakeup` (see ``docs/agents.md``, when the session ends).
        """
        if self.ended is not None or not self._settled or self._gone or self._busy:
            return False
        if self._undelivered > 0 or self._answered < self._requests:
            return False
        return any(w.state == _PENDING for w in self._watches) or self._time_may_fire()

    def _time_may_fire(self) -> bool:
        """Whether time alone, the facts as they are, would make a trigger hold before the end.

        Each live timed trigger's condition is evaluated, facts unchanged, at each instant its
        value may flip (up to ``_LOOKAHEAD`` of them), until the time limit: a deadline such
        as ``time_elapsed > 30min AND phase1_tests_not_pass`` holds at 30 minutes. Read-only:
        the engine stays a pure function of its events, so a replay re-decides the same.
        """
        facts, now = self.facts, self.facts.t
        limit = self.spec.time_limit if self.spec.time_limit is not None else math.inf
        try:
            for watch in self._watches:
                if watch.end_reason or not watch.timed or watch.state == _DONE:
                    continue
                if watch.unlocks is not None and watch.unlocks in facts.unlocked:
                    continue
                facts.t = now
                armed = watch.state != _FIRED or not watch.evaluate(facts)  # a repeat re-arms on a lapse
                for _ in range(_LOOKAHEAD):
                    facts.t = watch.cond.next_change(facts)
                    if facts.t >= limit:
                        break
                    holds = watch.evaluate(facts)
                    if holds and armed:
                        return True
                    armed = armed or not holds
        finally:
            facts.t = now
        return False

    # --- evaluation ------------------------------------------------------------------------

    def _dirty_from(self, facets: Iterable[str], dirty: set[int]) -> None:
        readers, falsified, watches = self._readers, self._falsified, self._watches
        for facet in facets:
            indexes = readers.get(facet)
            if indexes:
                dirty.update(indexes)
            indexes = falsified.get(facet)
            if indexes:
                # An inactive watch's condition was false at its last visit, and time alone
                # cannot have turned it since (a wake-up would be due): it stays false.
                dirty.update(i for i in indexes if watches[i].state != _INACTIVE)

    def _due(self, t: float, dirty: set[int]) -> None:
        wakes = self._wakes
        while wakes and wakes[0][0] <= t:
            wake, index = heapq.heappop(wakes)
            watch = self._watches[index]
            if watch.wake == wake:
                watch.wake = math.inf
                dirty.add(index)

    def _evaluate(self, dirty: set[int], event: Event, actions: list[Action]) -> None:
        watches = self._watches
        while dirty:
            changed: list[str] = []
            for index in sorted(dirty):
                watch = watches[index]
                if watch.state != _DONE:
                    self._visit(index, watch, event, actions, changed)
                    if self.ended is not None:
                        return
            dirty = set()
            self._dirty_from(changed, dirty)

    def _visit(
        self, index: int, watch: _Watch, event: Event, actions: list[Action], changed: list[str]
    ) -> None:
        facts = self.facts
        unlocks = watch.unlocks
        if unlocks is not None and unlocks in facts.unlocked:
            # A trigger that unlocks a phase fires only while that phase is locked.
            if watch.state == _PENDING:
                actions.append(TriggerCleared(watch.spec.id))
            watch.state = _DONE
            return
        hold = watch.hold
        if watch.evaluate(facts):
            if watch.state == _INACTIVE and hold > 0:
                watch.state = _PENDING
                watch.since = facts.t
                actions.append(TriggerPending(watch.spec.id, facts.t))
            if watch.state == _INACTIVE or (watch.state == _PENDING and facts.t >= watch.since + hold):
                self._fire(watch, event, actions, changed)
                if watch.state == _DONE or self.ended is not None:
                    return
        elif watch.state == _PENDING:
            watch.state = _INACTIVE
            actions.append(TriggerCleared(watch.spec.id))
        elif watch.state == _FIRED:
            watch.state = _INACTIVE  # a repeating trigger re-arms once its condition lapses
        if watch.state == _PENDING:
            wake = min(watch.cond.next_change(facts), watch.since + hold)
        elif watch.timed:
            wake = watch.cond.next_change(facts)
        else:
            return
        # Only an earlier wake-up is pushed: a later one is found when the scheduled one
        # comes due and the visit then re-evaluates (a visit with nothing changed is a no-op).
        if wake < watch.wake:
            watch.wake = wake
            heapq.heappush(self._wakes, (wake, index))

    def _fire(self, watch: _Watch, event: Event, actions: list[Action], changed: list[str]) -> None:
        spec = watch.spec
        facts = self.facts
        if watch.end_reason:
            self._end(EndSession(watch.end_reason, watch.cond.text), actions)
            return
        watch.count += 1
        cause = f"{spec.text or watch.cond.text} held on {event.kind} at {_when(facts.t)}"
        if spec.hold > 0:
            cause += f" for {format_duration(spec.hold)} since {_when(watch.since)}"
        actions.append(TriggerFired(spec.id, cause, watch.count))
        if spec.id not in facts.fired:
            changed.append(f"fired:{spec.id}")
        facts.fired[spec.id] = watch.count
        watch.state = _DONE if spec.once else _FIRED
        if spec.unlocks is not None:
            facts.unlocked[spec.unlocks] = facts.t
            self._unlocked = tuple(p for p in self.spec.phases if p in facts.unlocked)
            facts.phase_anchor = facts.t
            changed += (f"phase:{spec.unlocks}", "anchor.phase")
            actions.append(PhaseUnlocked(spec.unlocks, spec.id))
        if spec.message:
            actions.append(MessageQueued(spec.id, spec.message_kind, spec.message, spec.interrupt))
            self._undelivered += 1
        if spec.unlocks is not None:
            actions.append(self._run_tests(f"{spec.unlocks} unlocked"))

    def _end(self, end: EndSession, actions: list[Action]) -> None:
        self.ended = end
        actions.append(end)


def _when(seconds: float) -> str:
    """A moment for messages: exact units where they fit, else seconds to the millisecond."""
    rounded = round(seconds, 3)
    return format_duration(rounded) if rounded > 0 else "0s"

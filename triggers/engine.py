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
from heapq import heappop, heappush

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
        "decisive",
        "end_reason",
        "evaluate",
        "facets",
        "hold",
        "reads_tests",
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
        # Unlocking a phase or ending the session waits until the step's other firings are done.
        self.decisive = spec.unlocks is not None or bool(end_reason)
        # A hold on a verdict completes only once no newer test request is outstanding.
        self.reads_tests = cond.reads_verdicts
        self.facets: tuple[str, ...] = ()  # the facts whose change visits it (set by the engine)
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
            watch.facets = tuple(sorted(deps))
            for dep in watch.facets:
                table = self._falsified if dep in only_falsify else self._readers
                table.setdefault(dep, []).append(index)
        self._globs = [compile_glob(p) for p in globs.patterns]
        self._glob_hits: dict[str, tuple[int, ...]] = {}
        # Facet names, formatted once: they are looked up on every change.
        self._glob_facets = [f"glob:{index}" for index in range(len(self._globs))]
        self._test_facets = {phase: f"tests:{phase}" for phase in spec.phases}
        self._count_facets = {phase: f"counts:{phase}" for phase in spec.phases}
        self.facts = Facts(len(self._globs))
        self._files: set[str] = set()
        self._wakes: list[tuple[float, int]] = []
        self._requests = 0
        self._answered = 0  # the latest test request a result has answered
        # Pending watches whose hold is over but whose condition reads a verdict that a newer
        # test request will replace: they fire, if they still hold, once it is answered.
        self._overdue: set[int] = set()
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
        kind = type(event)
        if not self._started and kind is not SessionStarted:
            raise EngineError(f"the first event must be session.started, not {event.kind}")
        if event.t < facts.t:
            raise EngineError(f"{event.kind} at t={event.t} is earlier than t={facts.t}")
        if isinstance(event, TestsResult) and event.request < self._answered:
            # One runner answers requests in the order they were made; a log that says
            # otherwise was reordered or edited, and its verdicts cannot be trusted.
            raise EngineError(
                f"tests.result for request {event.request} at t={event.t} arrived after the "
                f"result for request {self._answered}; results must answer requests in order"
            )
        facts.t = event.t
        wakes = self._wakes
        due = bool(wakes) and wakes[0][0] <= event.t
        if kind is ClockTick and not due:
            # Only time moved and nothing is due: no fact changed, so no decision can. (Had
            # the last step left the session settled and idle, it would have ended then.)
            return ()
        actions: list[Action] = []
        if isinstance(event, SessionStarted):
            self._start(event, actions)
            dirty = set(range(len(self._watches)))
        else:
            changed: list[str] = []
            self._apply(event, actions, changed)
            dirty = self._dirty_from(changed)
            if self._overdue and self._answered >= self._requests:
                # The verdict the overdue holds waited for has come: they may fire now.
                dirty.update(self._overdue)
                self._overdue.clear()
        if due:
            self._due(event.t, dirty)
        if dirty:
            self._evaluate(dirty, event, actions)
        if self._settled and self.ended is None and self._idle():
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
                    changed.append(self._glob_facets[index])
                facts.glob_exists[index] = count
                facts.glob_changed[index] = facts.glob_changed[index] or by_agent

    def _record_result(self, event: TestsResult, changed: list[str]) -> None:
        facts = self.facts
        self._answered = event.request
        for result in event.phases:
            phase = result.phase
            if phase not in facts.unlocked:
                continue
            passing = result.all_pass
            if facts.passing.get(phase) != passing:
                facts.passing[phase] = passing
                changed.append(self._test_facets[phase])
            if facts.passed.get(phase) != result.passed or facts.failed.get(phase) != result.failed:
                facts.passed[phase] = result.passed
                facts.failed[phase] = result.failed
                changed.append(self._count_facets[phase])
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

    def _dirty_from(self, facets: Iterable[str]) -> set[int]:
        """The watches that a change of ``facets`` may affect."""
        readers, falsified, watches = self._readers, self._falsified, self._watches
        dirty: set[int] = set()
        for facet in facets:
            indexes = readers.get(facet)
            if indexes:
                dirty.update(indexes)
            indexes = falsified.get(facet)
            if indexes:
                # An inactive watch's condition was false at its last visit, and time alone
                # cannot have turned it since (a wake-up would be due): it stays false.
                dirty.update(i for i in indexes if watches[i].state != _INACTIVE)
        return dirty

    def _due(self, t: float, dirty: set[int]) -> None:
        wakes = self._wakes
        while wakes and wakes[0][0] <= t:
            wake, index = heapq.heappop(wakes)
            watch = self._watches[index]
            if watch.wake == wake:
                watch.wake = math.inf
                dirty.add(index)

    def _evaluate(self, dirty: set[int], event: Event, actions: list[Action]) -> None:
        """Visit the dirty watches, highest priority first, until the step settles.

        A trigger that unlocks nothing fires as soon as it is found ready, and the watches its
        firing may change are visited in turn, again highest priority first. A trigger that
        unlocks a phase, and the end condition and time limit, only wait in ``ready`` until
        nothing else is left to visit; then the first of them (by priority, then file order)
        fires if it is still ready, and the cascade goes on. So priority decides between
        unlockers even when one of them became ready through another trigger's firing.
        """
        watches, visit = self._watches, self._visit
        queue = sorted(dirty)  # a sorted list is a heap
        ready: set[int] = set()
        while True:
            while queue:
                index = heappop(queue)
                if queue and queue[0] == index:
                    continue  # queued twice: the later visit is the one that counts
                watch = watches[index]
                if watch.state != _DONE and visit(index, watch, actions):
                    if watch.decisive:
                        ready.add(index)
                    else:
                        for other in self._dirty_from(self._fire(index, watch, event, actions)):
                            heappush(queue, other)
                elif ready:
                    ready.discard(index)
            if not ready:
                return
            index = min(ready)
            ready.discard(index)
            watch = watches[index]
            # Visited again: a fact it reads only to be falsified may have moved since.
            if watch.state != _DONE and visit(index, watch, actions):
                changed = self._fire(index, watch, event, actions)
                if self.ended is not None:
                    return
                for other in self._dirty_from(changed):
                    heappush(queue, other)

    def _visit(self, index: int, watch: _Watch, actions: list[Action]) -> bool:
        """Bring a watch's state up to date with the facts; True if it is ready to fire."""
        facts = self.facts
        unlocks = watch.unlocks
        if unlocks is not None and unlocks in facts.unlocked:
            # A trigger that unlocks a phase fires only while that phase is locked.
            if watch.state == _PENDING:
                actions.append(TriggerCleared(watch.spec.id))
            self._retire(index, watch)
            return False
        state = watch.state
        if watch.evaluate(facts):
            if state == _INACTIVE:
                if not watch.hold:
                    return True
                watch.state = _PENDING
                watch.since = facts.t
                actions.append(TriggerPending(watch.spec.id, facts.t))
            elif state == _PENDING and facts.t >= watch.since + watch.hold:
                if not (watch.reads_tests and self._answered < self._requests):
                    return True
                self._overdue.add(index)  # the hold is over, but a newer verdict is coming
        elif state == _PENDING:
            watch.state = _INACTIVE
            actions.append(TriggerCleared(watch.spec.id))
        elif state == _FIRED:
            watch.state = _INACTIVE  # a repeating trigger re-arms once its condition lapses
        if watch.timed or watch.state == _PENDING:
            self._schedule(index, watch)
        return False

    def _schedule(self, index: int, watch: _Watch) -> None:
        """Ask to be woken when time alone may change this watch."""
        if watch.state == _PENDING:
            wake = watch.cond.next_change(self.facts)
            due = watch.since + watch.hold
            if due > self.facts.t:  # else overdue: the verdict it waits for wakes it
                wake = min(wake, due)
        elif watch.state != _DONE:  # timed
            wake = watch.cond.next_change(self.facts)
        else:
            return
        # Only an earlier wake-up is pushed: a later one is found when the scheduled one
        # comes due and the visit then re-evaluates (a visit with nothing changed is a no-op).
        if wake < watch.wake:
            watch.wake = wake
            heapq.heappush(self._wakes, (wake, index))

    def _fire(self, index: int, watch: _Watch, event: Event, actions: list[Action]) -> list[str]:
        """Fire a ready watch; return the facets its firing changed."""
        spec = watch.spec
        facts = self.facts
        changed: list[str] = []
        if watch.end_reason:
            self._end(EndSession(watch.end_reason, watch.cond.text), actions)
            return changed
        watch.count += 1
        cause = f"{spec.text or watch.cond.text} held on {event.kind} at {_when(facts.t)}"
        if spec.hold > 0:
            cause += f" for {format_duration(spec.hold)} since {_when(watch.since)}"
        actions.append(TriggerFired(spec.id, cause, watch.count))
        if spec.id not in facts.fired:
            changed.append(f"fired:{spec.id}")
        facts.fired[spec.id] = watch.count
        if spec.once:
            self._retire(index, watch)
        else:
            watch.state = _FIRED
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
        if watch.timed or watch.state == _PENDING:
            self._schedule(index, watch)
        return changed

    def _retire(self, index: int, watch: _Watch) -> None:
        """The watch can never fire again: no fact need ever visit it."""
        watch.state = _DONE
        for table in (self._readers, self._falsified):
            for facet in watch.facets:
                readers = table.get(facet)
                if readers and index in readers:
                    readers.remove(index)

    def _end(self, end: EndSession, actions: list[Action]) -> None:
        self.ended = end
        actions.append(end)


def _when(seconds: float) -> str:
    """A moment for messages: exact units where they fit, else seconds to the millisecond."""
    rounded = round(seconds, 3)
    return format_duration(rounded) if rounded > 0 else "0s"

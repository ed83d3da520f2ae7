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

import math
from bisect import insort
from collections.abc import Callable, Iterable
from heapq import heappop, heappush
from typing import Any

from triggers.compile import Compiled, GlobTable, compile_condition
from triggers.durations import format_duration, format_moment
from triggers.facts import Facts
from triggers.globs import compile_glob
from triggers.records import (
    Action,
    AgentExited,
    AgentStarted,
    AgentTurnEnded,
    BudgetExhausted,
    ClockTick,
    CommitMade,
    EndSession,
    Event,
    FileChange,
    FilesChanged,
    GroupResult,
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
from triggers.spec import BRIEFING, Spec, SpecError, TriggerSpec

__all__ = ["Engine", "EngineError"]

_INACTIVE, _PENDING, _FIRED, _DONE = range(4)
_NEVER = math.inf  # a watch's wake-up when it has none in the heap
#: How many instants a trigger's condition is looked ahead for one that time alone would make hold.
_LOOKAHEAD = 64
_STATE_NAMES = ("inactive", "pending", "fired", "done")


class EngineError(ValueError):
    """An event stream the engine cannot accept (out of order, or before the start)."""


class _Fact:
    """A fact some condition reads, and whom to visit when it changes."""

    __slots__ = ("falsified", "readers")

    def __init__(self) -> None:
        #: the watches whose condition a change of the fact may make true
        self.readers: set[int] = set()
        #: the watches it can only make false (an anchor moving on): visited while they hold
        self.falsified: set[int] = set()


class _Watch:
    """One condition under watch: a trigger, the end condition or the time limit.

    It keeps copies of what every visit reads, and the actions that never change (its
    clearing, its message), so that the hot path follows no attribute chains and builds no
    record it can reuse: actions are frozen values.
    """

    __slots__ = (
        "cleared",
        "cond",
        "count",
        "decisive",
        "drifts",
        "end_reason",
        "evaluate",
        "facts",
        "fired_fact",
        "hold",
        "id",
        "label",
        "next_change",
        "once",
        "queued",
        "reads_tests",
        "since",
        "state",
        "timed",
        "turn_bound",
        "unlocks",
        "wake",
    )

    def __init__(self, cond: Compiled, spec: TriggerSpec, end_reason: str = "") -> None:
        self.id = spec.id
        self.cond = cond
        self.end_reason = end_reason
        self.label = spec.text or cond.text  # how a cause names the condition
        self.evaluate = cond.evaluate
        self.next_change = cond.next_change
        self.timed = bool(cond.clocks)
        # Whether the instant time alone may change its value can come earlier than it was
        # (an anchor moved on); if not, a wake-up it has stays the earliest it needs.
        self.drifts = cond.reads_anchors
        self.unlocks = spec.unlocks
        self.hold = spec.hold
        self.once = spec.once
        # Unlocking a phase or ending the session waits until the step's other firings are done.
        self.decisive = spec.unlocks is not None or bool(end_reason)
        # A hold on a verdict completes only once no newer test request is outstanding.
        self.reads_tests = cond.reads_verdicts
        # A condition on a turn and a verdict is decided on the verdict of the turn's own run.
        self.turn_bound = cond.reads_turn_verdicts
        self.facts: tuple[_Fact, ...] = ()  # whose change visits it (set by the engine)
        self.fired_fact = _Fact()  # the fact that it fired (set by the engine)
        self.cleared = TriggerCleared(spec.id)
        self.queued = (
            MessageQueued(spec.id, spec.message_kind, spec.message, spec.interrupt) if spec.message else None
        )
        self.state = _INACTIVE
        self.since = 0.0
        self.count = 0
        #: the earliest wake-up this watch has in the engine's heap (inf: none)
        self.wake = _NEVER


class _Groups:
    """A phase's test groups as the engine keeps them: their facts, its policy, the last results."""

    __slots__ = ("facts", "policy", "seen")

    def __init__(self, facts: tuple[tuple[str, _Fact, _Fact], ...], policy: tuple[str, ...]) -> None:
        #: per declared group, in order: its name, and the facts of its verdict and its counts
        self.facts = facts
        #: the groups that must pass for the phase to pass (empty: every test of the phase)
        self.policy = policy
        #: the group results of the phase's latest verdict
        self.seen: tuple[GroupResult, ...] | None = None


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
        self._by_id = {w.id: w for w in self._watches if not w.end_reason}
        # Who to visit when a fact changes, by the fact's name (as compiled conditions list
        # them); the engine holds on to the facts it changes, so a change looks nothing up.
        self._facts: dict[str, _Fact] = {}
        for index, watch in enumerate(self._watches):
            self._watch(index, watch)
        #: the watches pending or fired: those a falsifying change may still concern
        self._armed: set[int] = set()
        self._globs = [compile_glob(p) for p in globs.patterns]
        self._glob_hits: dict[str, tuple[int, ...]] = {}
        self._glob_facts = [self._fact(f"glob:{index}") for index in range(len(self._globs))]
        # Every phase that may unlock: the spec's, and any a trigger unlocks.
        phases = {*spec.phases, *(t.unlocks for t in spec.triggers if t.unlocks is not None)}
        self._verdict_facts = {p: (self._fact(f"tests:{p}"), self._fact(f"counts:{p}")) for p in phases}
        # The phases with test groups: each group's verdict and counts are facts, and the
        # phase's verdict follows its policy (the groups that must pass) if it has one.
        self._grouped = {
            phase: _Groups(
                tuple(
                    (group, self._fact(f"tests:{phase}:{group}"), self._fact(f"counts:{phase}:{group}"))
                    for group in groups
                ),
                spec.policies.get(phase, ()),
            )
            for phase, groups in spec.groups.items()
        }
        self._unlock_facts = {phase: self._fact(f"phase:{phase}") for phase in phases}
        self._idle_fact = self._fact("anchor.idle")
        self._phase_fact = self._fact("anchor.phase")
        self._commits_fact = self._fact("commits")
        self._turns_fact = self._fact("turns")
        self.facts = Facts(len(self._globs))
        self._files: set[str] = set()  # the files that match a glob some condition reads
        self._wakes: list[tuple[float, int]] = []
        self._requests = 0
        self._answered = 0  # the latest test request a result has answered
        self._turn_request = 0  # the test request the latest turn end made
        # Watches waiting for a verdict, each with the test request it waits for: a pending
        # watch whose hold is over but whose condition reads a verdict a newer request will
        # replace, and a turn-bound one (it reads turns and a verdict) while its turn's run is
        # out. Once that request is answered they are visited again, and fire if they hold.
        self._overdue: dict[int, int] = {}
        self._overdue_until = _NEVER  # the earliest request an overdue watch waits for
        self._unlocked: tuple[str, ...] = ()
        self._undelivered = 0
        self._busy = False
        self._gone = False
        self._settle_request: int | None = None
        self._settled = False
        self._started = False
        self.ended: EndSession | None = None
        # How each kind of event changes the facts: it returns the watches to visit.
        self._appliers: dict[type, Callable[[Any, list[Action]], set[int]]] = {
            SessionStarted: self._start,
            FilesChanged: self._files_changed,
            TestsResult: self._tests_result,
            CommitMade: self._commit,
            MessageDelivered: self._delivered,
            AgentTurnEnded: self._turn_ended,
            AgentExited: self._turn_ended,
            AgentStarted: self._agent_started,
            ClockTick: self._tick,
            BudgetExhausted: self._budget_exhausted,
        }

    def _fact(self, name: str) -> _Fact:
        """The fact named ``name`` (``tests:phase1``, ``anchor.idle``...), made on first use."""
        fact = self._facts.get(name)
        if fact is None:
            fact = self._facts[name] = _Fact()
        return fact

    def _watch(self, index: int, watch: _Watch) -> None:
        """Make the facts a watch's condition reads visit it (an unlocker also reads its
        phase, to retire once that phase unlocks)."""
        only_falsify = watch.cond.deps - watch.cond.raises
        names = set(watch.cond.deps)
        if watch.unlocks is not None:
            names.add(f"phase:{watch.unlocks}")
        watch.facts = tuple(self._fact(name) for name in sorted(names))
        for name, fact in zip(sorted(names), watch.facts, strict=True):
            # Only an anchor can only falsify (triggers.compile): a change of any other fact
            # concerns its readers alone, which is all _tests_result looks at.
            assert name not in only_falsify or name.startswith("anchor."), name
            (fact.falsified if name in only_falsify else fact.readers).add(index)
        watch.fired_fact = self._fact(f"fired:{watch.id}")

    # --- queries ---------------------------------------------------------------------------

    @property
    def next_wakeup(self) -> float | None:
        """When time alone may change a decision; the session sends a ``clock.tick`` then."""
        while self._wakes:
            wake, index = self._wakes[0]
            if self._watches[index].wake == wake and self._watches[index].state != _DONE:
                return None if self.ended else wake
            heappop(self._wakes)
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
        apply = self._appliers.get(kind)
        if apply is None:
            raise EngineError(f"{kind.__name__} is not an engine event")
        if not self._started and kind is not SessionStarted:
            raise EngineError(f"the first event must be session.started, not {event.kind}")
        t = event.t
        if t < facts.t:
            raise EngineError(f"{event.kind} at t={t} is earlier than t={facts.t}")
        facts.t = t
        wakes = self._wakes
        due = wakes[0][0] <= t if wakes else False
        if kind is ClockTick and not due:
            # Only time moved and nothing is due: no fact changed, so no decision can. (Had
            # the last step left the session settled and idle, it would have ended then.)
            return ()
        actions: list[Action] = []
        dirty = apply(event, actions)
        if self.ended is not None:  # the event itself ended the session (budget.exhausted)
            return tuple(actions)
        if self._answered >= self._overdue_until:
            # The verdict some overdue watches waited for has come: they may fire now.
            self._release(dirty)
        if due:
            self._due(t, dirty)
        if dirty:
            self._evaluate(dirty, event, actions)
        if self._settled and self.ended is None and self._idle():
            self._end(
                EndSession("agent_exited", self._unfired()) if self._gone else EndSession("agent_done"),
                actions,
            )
        return tuple(actions)

    # --- how each event changes the facts (each returns the watches it may affect) ----------

    def _start(self, event: SessionStarted, actions: list[Action]) -> set[int]:
        if self._started:
            raise EngineError("session.started arrived twice")
        self._started = True
        self._touch([FileChange(path, "added") for path in event.files], [], by_agent=False)
        phases, briefing = self.spec.phases, self.spec.briefing
        opened = phases[:1]
        if event.start is not None and event.start != phases[0]:
            # A late start: every phase up to ``start`` is open from the first step, so the
            # triggers that unlock them retire unfired when visited below, and the message of
            # the one that would have opened ``start`` is the briefing.
            try:
                briefing = self.spec.opening(event.start).message
            except SpecError as error:
                raise EngineError(f"session.started at {event.start!r}: {error}") from None
            opened = phases[: phases.index(event.start) + 1]
        for phase in opened:
            self.facts.unlocked[phase] = event.t
            actions.append(PhaseUnlocked(phase))
        self._unlocked = opened
        self.facts.phase_anchor = event.t
        self.facts.idle_anchor = event.t
        if briefing:
            actions.append(MessageQueued(BRIEFING, "briefing", briefing))
            self._undelivered += 1
        actions.append(self._run_tests("session started"))
        return set(range(len(self._watches)))

    def _files_changed(self, event: FilesChanged, actions: list[Action]) -> set[int]:
        self.facts.idle_anchor = event.t
        changed = [self._idle_fact]
        self._touch(event.changes, changed)
        actions.append(self._run_tests("files changed"))
        return self._dirty_from(changed)

    def _tests_result(self, event: TestsResult, actions: list[Action]) -> set[int]:
        if event.request < self._answered:
            # One runner answers requests in the order they were made; a log that says
            # otherwise was reordered or edited, and its verdicts cannot be trusted.
            raise EngineError(
                f"tests.result for request {event.request} at t={event.t} arrived after the "
                f"result for request {self._answered}; results must answer requests in order"
            )
        facts = self.facts
        unlocked, passing, passed, failed = facts.unlocked, facts.passing, facts.passed, facts.failed
        verdict_facts, grouped = self._verdict_facts, self._grouped
        # A verdict is no anchor: whom its change may concern are its readers (see _watch).
        dirty: set[int] = set()
        self._answered = event.request
        # An invalid run (the grader could not run) says nothing about the work: no verdict.
        for result in event.phases if event.status != "invalid" else ():
            phase = result.phase
            count_passed, count_failed = result.passed, result.failed
            if phase not in unlocked or (
                passed.get(phase) == count_passed
                and failed.get(phase) == count_failed
                and (phase not in grouped or grouped[phase].seen == result.groups)
            ):
                continue  # the pass is a function of the counts (and groups): unchanged too
            passed[phase] = count_passed
            failed[phase] = count_failed
            verdict_fact, counts_fact = verdict_facts[phase]
            dirty |= counts_fact.readers
            groups = grouped.get(phase)
            if groups is None:
                verdict = count_failed == 0 and count_passed > 0  # result.all_pass, without a call
            else:
                verdict = self._group_results(phase, groups, result, dirty)
            if passing.get(phase) != verdict:
                passing[phase] = verdict
                dirty |= verdict_fact.readers
        if self._settle_request is not None and event.request >= self._settle_request:
            self._settle_request = None
            self._settled = True
        return dirty

    def _group_results(self, phase: str, groups: _Groups, result: PhaseResult, dirty: set[int]) -> bool:
        """Take a grouped phase's group results (a group the result lacks ran no test); return
        the phase's verdict: every group of its policy passed, or without one every test."""
        facts = self.facts
        groups.seen = result.groups
        counts = {group.name: (group.passed, group.failed) for group in result.groups}
        for name, verdict_fact, counts_fact in groups.facts:
            key = (phase, name)
            passed, failed = counts.get(name, (0, 0))
            if facts.group_passed.get(key) == passed and facts.group_failed.get(key) == failed:
                continue
            facts.group_passed[key] = passed
            facts.group_failed[key] = failed
            dirty |= counts_fact.readers
            verdict = failed == 0 and passed > 0
            if facts.group_passing.get(key) != verdict:
                facts.group_passing[key] = verdict
                dirty |= verdict_fact.readers
        if groups.policy:
            return all(facts.group_passing[(phase, name)] for name in groups.policy)
        return result.failed == 0 and result.passed > 0

    def _commit(self, event: CommitMade, actions: list[Action]) -> set[int]:
        self.facts.commits += 1
        return self._dirty_from((self._commits_fact,))

    def _delivered(self, event: MessageDelivered, actions: list[Action]) -> set[int]:
        self._undelivered -= 1
        self._busy = True
        self._settled = False
        if event.trigger in self.facts.delivered:
            return set()
        self.facts.delivered.add(event.trigger)
        return self._dirty_from((self._fact(f"delivered:{event.trigger}"),))

    def _turn_ended(self, event: AgentTurnEnded | AgentExited, actions: list[Action]) -> set[int]:
        self._busy = False
        self._gone = self._gone or isinstance(event, AgentExited)
        self.facts.turns += 1
        request = self._run_tests("agent exited" if self._gone else "turn ended")
        self._settle_request = self._turn_request = request.request
        self._settled = False
        actions.append(request)
        return self._dirty_from((self._turns_fact,))

    def _agent_started(self, event: AgentStarted, actions: list[Action]) -> set[int]:
        self._gone = False
        return set()

    def _budget_exhausted(self, event: BudgetExhausted, actions: list[Action]) -> set[int]:
        self._end(EndSession("budget_exhausted", event.detail), actions)
        return set()

    def _tick(self, event: ClockTick, actions: list[Action]) -> set[int]:
        return set()  # a tick changes no fact; step() collects the wake-ups due

    def _touch(self, changes: Iterable[FileChange], changed: list[_Fact], *, by_agent: bool = True) -> None:
        facts = self.facts
        files, exists, touched, hits_of = self._files, facts.glob_exists, facts.glob_changed, self._glob_hits
        for change in changes:
            path = change.path
            hits = hits_of.get(path)
            if hits is None:  # paths recur: match each against the globs once
                hits = hits_of[path] = tuple(
                    i for i, pattern in enumerate(self._globs) if pattern.match(path) is not None
                )
            if not hits:
                continue  # no condition can tell whether it exists: nothing to keep of it
            existed = path in files
            now = change.change != "deleted"
            if now:
                files.add(path)
            else:
                files.discard(path)
            for index in hits:
                count = exists[index]
                exists[index] = count + now - existed
                if (count > 0) != (exists[index] > 0) or (by_agent and not touched[index]):
                    changed.append(self._glob_facts[index])
                if by_agent:
                    touched[index] = True

    def _run_tests(self, reason: str) -> RunTests:
        self._requests += 1
        return RunTests(self._requests, self._unlocked, reason)

    # --- when the session may end ----------------------------------------------------------

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
        """Whether time alone, the facts as they are, would make a trigger hold before the end."""
        return bool(self._timed_to_fire(every=False))

    def _unfired(self) -> str:
        """For an agent that is gone: the triggers it leaves pending or that time alone would
        still have fired (``""``: none), which no agent can now receive."""
        pending = [w.id for w in self._watches if w.state == _PENDING and not w.end_reason]
        waiting = [*pending, *(i for i in self._timed_to_fire(every=True) if i not in pending)]
        return f"never fired: {', '.join(waiting)}" if waiting else ""

    def _timed_to_fire(self, *, every: bool) -> list[str]:
        """The triggers that time alone, the facts as they are, would make hold before the end
        (``every``: all of them; else the first found).

        Each live timed trigger's condition is evaluated, facts unchanged, at each instant its
        value may flip (up to ``_LOOKAHEAD`` of them), until the time limit: a deadline such
        as ``time_elapsed > 30min AND phase1_tests_not_pass`` holds at 30 minutes. Read-only:
        the engine stays a pure function of its events, so a replay re-decides the same.
        """
        facts, now = self.facts, self.facts.t
        limit = self.spec.time_limit if self.spec.time_limit is not None else math.inf
        found: list[str] = []
        for watch in self._watches:
            if watch.end_reason or not watch.timed or watch.state == _DONE:
                continue
            if watch.unlocks is not None and watch.unlocks in facts.unlocked:
                continue
            fires = False
            try:
                armed = watch.state != _FIRED or not watch.evaluate(facts)  # a repeat re-arms on a lapse
                for _ in range(_LOOKAHEAD):
                    facts.t = watch.next_change(facts)
                    if facts.t >= limit:
                        break
                    holds = watch.evaluate(facts)
                    if holds and armed:
                        fires = True
                        break
                    armed = armed or not holds
            finally:
                facts.t = now
            if fires:
                found.append(watch.id)
                if not every:
                    break
        return found

    # --- evaluation ------------------------------------------------------------------------

    def _dirty_from(self, changed: Iterable[_Fact]) -> set[int]:
        """The watches that a change of these facts may affect."""
        dirty: set[int] = set()
        armed = self._armed
        for fact in changed:
            dirty |= fact.readers
            falsified = fact.falsified
            if falsified and not falsified.isdisjoint(armed):
                # An inactive watch's condition was false at its last visit, and time alone
                # cannot have turned it since (a wake-up would be due): it stays false.
                dirty |= falsified & armed
        return dirty

    def _due(self, t: float, dirty: set[int]) -> None:
        wakes, watches = self._wakes, self._watches
        while wakes and wakes[0][0] <= t:
            wake, index = heappop(wakes)
            watch = watches[index]
            if watch.wake == wake:
                watch.wake = _NEVER
                dirty.add(index)

    def _evaluate(self, dirty: set[int], event: Event, actions: list[Action]) -> None:
        """Visit the dirty watches, highest priority first, until the step settles.

        A visit brings a watch's state up to date with the facts, and finds it ready to fire
        or not. A trigger that unlocks nothing fires as soon as it is found ready, and the
        watches its firing may change are visited in turn, again highest priority first. A
        trigger that unlocks a phase, and the end condition and time limit, only wait in
        ``ready`` until nothing else is left to visit; then the first of them (by priority,
        then file order) is visited once more (a fact it reads only to be falsified may have
        moved since) and fires if it is still ready, and the cascade goes on. So priority
        decides between unlockers even when one of them became ready through another
        trigger's firing. (The visit is written out here, not called: this loop runs on most
        events, and a call per visit was a measurable share of a step. The queue is a sorted
        list walked in place, not a heap: a firing that changes a fact is rare, and inserts
        the watches it concerns into the part not yet visited, in order.)
        """
        watches, facts, armed, unlocked = self._watches, self.facts, self._armed, self.facts.unlocked
        never = _NEVER
        # The latest turn's verdict is still to come: a turn-bound watch waits for it (the test
        # requests made and answered do not change while the step's watches are visited).
        frozen = self._answered < self._turn_request
        queue = sorted(dirty)  # visited in order; what follows ``pos`` is still to visit, sorted
        picking = False  # the queue's first watch was taken from ready: it fires if still ready
        ready: set[int] = set()
        while True:
            for pos, index in enumerate(queue):
                watch = watches[index]
                state = watch.state
                if state == _DONE:
                    ready.discard(index)
                    continue
                if watch.unlocks is not None and watch.unlocks in unlocked:
                    # A trigger that unlocks a phase fires only while that phase is locked.
                    if state == _PENDING:
                        actions.append(watch.cleared)
                    self._retire(index, watch)
                    ready.discard(index)
                    continue
                if frozen and watch.turn_bound:
                    # Its turn's verdict is still to come: the one in hand is an older snapshot's.
                    self._wait(index, self._turn_request)
                    continue
                ripe = False  # ready to fire
                if watch.evaluate(facts):
                    if state == _INACTIVE:
                        if watch.hold:
                            state = watch.state = _PENDING
                            armed.add(index)
                            watch.since = facts.t
                            actions.append(TriggerPending(watch.id, facts.t))
                            if watch.timed:  # its hold may end before its clocks next flip
                                self._schedule(index, watch)
                        else:
                            ripe = True
                    elif state == _PENDING and facts.t >= watch.since + watch.hold:
                        if watch.reads_tests and self._answered < self._requests:
                            self._wait(
                                index, self._requests
                            )  # the hold is over, but a newer verdict is coming
                        else:
                            ripe = True
                elif state == _PENDING:
                    state = watch.state = _INACTIVE
                    armed.discard(index)
                    actions.append(watch.cleared)
                elif state == _FIRED:
                    state = watch.state = _INACTIVE  # a repeating trigger re-arms once its condition lapses
                    armed.discard(index)
                if not ripe:
                    # A wake-up already in the heap is the earliest it needs unless an anchor it
                    # reads moved on (see _schedule): the common visit computes none.
                    if (watch.timed or state == _PENDING) and (watch.wake == never or watch.drifts):
                        self._schedule(index, watch)
                    if ready:
                        ready.discard(index)
                elif watch.decisive and not (picking and pos == 0):
                    ready.add(index)
                else:
                    changed = self._fire(index, watch, event, actions)
                    if self.ended is not None:
                        return
                    if changed:
                        rest = queue[pos + 1 :]
                        for other in self._dirty_from(changed):
                            if other not in rest:  # one already queued is visited once, in its turn
                                insort(queue, other, pos + 1)
            if not ready:
                return
            queue = [min(ready)]
            ready.discard(queue[0])
            picking = True

    def _wait(self, index: int, request: int) -> None:
        """Visit the watch again once test request ``request`` is answered."""
        self._overdue[index] = request
        self._overdue_until = min(self._overdue_until, request)

    def _release(self, dirty: set[int]) -> None:
        """Add the overdue watches whose awaited request is answered to ``dirty``."""
        answered = self._answered
        released = [index for index, request in self._overdue.items() if request <= answered]
        dirty.update(released)
        for index in released:
            del self._overdue[index]
        self._overdue_until = min(self._overdue.values(), default=_NEVER)

    def _schedule(self, index: int, watch: _Watch) -> None:
        """Ask to be woken when time alone may change this (live) watch.

        A wake-up pushed is the earlier of the instant its clocks next flip and, while it is
        pending, its hold's end. Unless the watch reads an anchor that moves (``drifts``),
        the instant its clocks next flip only comes later as time passes, and a hold's end
        is later for each new hold. So while a wake-up of such a watch is in the heap, only
        its going pending can call for an earlier one, and only if it has clocks (the hold
        may end before they flip): _evaluate computes none on the other visits.
        """
        facts = self.facts
        wake = watch.next_change(facts) if watch.timed else _NEVER
        if watch.state == _PENDING:
            due = watch.since + watch.hold
            if facts.t < due < wake:  # if due is past, the verdict it waits for wakes it
                wake = due
        # Only an earlier wake-up is pushed: a later one is found when the scheduled one
        # comes due and the visit then re-evaluates (a visit with nothing changed is a no-op).
        if wake < watch.wake:
            watch.wake = wake
            heappush(self._wakes, (wake, index))

    def _fire(self, index: int, watch: _Watch, event: Event, actions: list[Action]) -> list[_Fact]:
        """Fire a ready watch; return the facts its firing changed."""
        facts = self.facts
        if watch.end_reason:
            self._end(EndSession(watch.end_reason, watch.cond.text), actions)
            return []
        watch.count += 1
        cause = f"{watch.label} held on {event.kind} at {format_moment(facts.t)}"
        if watch.hold > 0:
            cause += f" for {format_duration(watch.hold)} since {format_moment(watch.since)}"
        actions.append(TriggerFired(watch.id, cause, watch.count))
        changed: list[_Fact] = [] if watch.id in facts.fired else [watch.fired_fact]
        facts.fired[watch.id] = watch.count
        if watch.once:
            self._retire(index, watch)
        else:
            watch.state = _FIRED
            self._armed.add(index)
        unlocks = watch.unlocks
        if unlocks is not None:
            facts.unlocked[unlocks] = facts.t
            self._unlocked = tuple(p for p in self.spec.phases if p in facts.unlocked)
            facts.phase_anchor = facts.t
            changed += (self._unlock_facts[unlocks], self._phase_fact)
            actions.append(PhaseUnlocked(unlocks, watch.id))
        if watch.queued is not None:
            actions.append(watch.queued)
            self._undelivered += 1
        if unlocks is not None:
            actions.append(self._run_tests(f"{unlocks} unlocked"))
        if watch.timed and watch.state == _FIRED:  # once retired, it needs no wake-up
            self._schedule(index, watch)
        return changed

    def _retire(self, index: int, watch: _Watch) -> None:
        """The watch can never fire again: no fact need ever visit it."""
        watch.state = _DONE
        self._armed.discard(index)
        for fact in watch.facts:
            fact.readers.discard(index)
            fact.falsified.discard(index)

    def _end(self, end: EndSession, actions: list[Action]) -> None:
        self.ended = end
        actions.append(end)

"""The session loop: sources → event log → ``Engine.step`` → effects, in one task group.

Four sources feed one channel: the agent adapter (``agent.*``, ``message.delivered``), the
watcher (``fs.changed``, ``git.commit``), the test scheduler (``tests.result``) and a timer
that sends ``clock.tick`` when the engine asked to be woken. The loop stamps each event
with the session time, appends it to the log, steps the engine, appends the engine's
actions, syncs the log, and carries the actions out. The agent is frozen while each hidden
test run is in progress (``agent.frozen``), and a watch of its limits notes what it went
over (``agent.over_limits``); over its disk limit, the agent is stopped and the session ends
as if it had exited. Time is the event loop's own
(``anyio.current_time``, ``anyio.sleep``), so the loop runs on trio's ``MockClock`` in tests.
The seams to the world outside are declared in :mod:`orchestrator.seams`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import traceback
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
import structlog

from orchestrator.agents import AgentUnavailable
from orchestrator.challenge.model import Challenge
from orchestrator.grading.agent_sandbox import AgentSandbox
from orchestrator.grading.policy import counts, void
from orchestrator.grading.seal import Seals
from orchestrator.grading.testrun import refused
from orchestrator.log.eventlog import EventLog
from orchestrator.log.records import (
    AgentFrozen,
    ClockSkipped,
    LogRecord,
    SessionAborted,
    SessionGraded,
    SessionRecord,
    TestsEffects,
    TestsStarted,
    WorkspaceOverLimits,
)
from orchestrator.log.verdicts import TestRun
from orchestrator.seams import Agent, AgentContext, Mailbox, Message, Repository, TestRunner, Watcher
from orchestrator.session.agent_limits import ENDS_SESSION, AgentLimitsWatch
from orchestrator.session.workspace import OverLimits
from orchestrator.system.venvs import Environment
from triggers import (
    BRIEFING,
    AgentExited,
    BudgetExhausted,
    ClockTick,
    CommitMade,
    EndSession,
    Engine,
    Event,
    FilesChanged,
    MessageQueued,
    Observation,
    PhaseUnlocked,
    RunTests,
    SessionStarted,
    TestsResult,
    TriggerFired,
)

__all__ = ["Outcome", "Parts", "Session", "SessionView"]

#: How long a turn that was just given a message runs before a hidden test run freezes it: its
#: first moments (a CLI starting, reading the message, asking its model) are when a freeze
#: delays it most; a run requested meanwhile starts that much later instead. Counted from the
#: message's queueing too: a trigger asks for its run as it queues the message, before delivery.
HEAD_START = 0.5

Status = Literal["completed", "invalid", "crashed"]


@dataclass(frozen=True, slots=True)
class Parts:
    """The session's seams to the outside world."""

    repo: Repository
    runner: TestRunner
    watcher: Watcher
    agent: Agent


@dataclass(slots=True)
class SessionView:
    """What the live status line shows."""

    elapsed: float = 0.0
    phase: str = ""
    #: The last test result; a session requests its first run as it starts, so one is going.
    tests: str = "running…"
    fired: list[str] = field(default_factory=list)
    agent: str = "starting"


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the session ended, and the final grading of its workspace."""

    status: Status
    end: EndSession | None
    detail: str
    final: TestsResult | None
    elapsed: float


class Session:
    """One run of one challenge with one agent."""

    def __init__(
        self,
        challenge: Challenge,
        parts: Parts,
        log: EventLog,
        agent_folder: Path,
        *,
        workspace: Path,
        on_change: Callable[[SessionView], None] | None = None,
        logger: Any = None,
        environment: Environment | None = None,
        seals: Seals | None = None,
        sandbox: AgentSandbox | None = None,
        start: str | None = None,
        limits: AgentLimitsWatch | None = None,
    ) -> None:
        self.challenge = challenge
        self.parts = parts
        self.log = log
        self.engine = Engine(challenge.spec)
        self.mailbox = Mailbox()
        self.view = SessionView()
        self._agent_folder = agent_folder
        self._workspace = workspace
        self._on_change = on_change
        self._logger = logger if logger is not None else structlog.get_logger()
        self._start = 0.0
        self._skipped = 0.0  # seconds the clock skipped while only time could change a fact
        self._last_t = 0.0
        self._send: Any = None
        self._rearm = anyio.Event()
        self._tests_wanted = anyio.Event()
        self._pending: RunTests | None = None
        self._cache: dict[tuple[str, tuple[str, ...]], TestRun] = {}
        self._messages = 0
        self._unlocks = {t.id: t.unlocks for t in challenge.spec.triggers}
        #: the agent's environment (first on its PATH); None: the agent's PATH as it is
        self.environment = environment
        self._seals = seals
        self._sandbox = sandbox
        #: the phase the session starts at (its ``session.started`` says so), None: the first
        self.start = start
        self._limits = limits
        self._agent_scope = anyio.CancelScope()
        self._agent_gone = False
        self._messaged_at = -math.inf  # when a message was last queued for or delivered to the agent

    # --- the loop ----------------------------------------------------------------------

    async def run(self) -> Outcome:
        """Run until the engine ends the session; then grade the final workspace."""
        self._start = anyio.current_time()
        send, receive = anyio.create_memory_object_stream[Event | Observation](max_buffer_size=math.inf)
        self._send = send
        status: Status = "completed"
        detail = ""
        try:
            with send, receive:
                await self._loop(receive)
        except* AgentUnavailable as group:
            status, detail = "invalid", "; ".join(str(e) for e in group.exceptions)
        except* Exception as group:
            status = "crashed"
            detail = "".join(traceback.format_exception(group.exceptions[0])).strip()
        if status != "completed":
            self._note(SessionAborted(status, detail))
            self._logger.error("session aborted", status=status, detail=(detail.splitlines() or [""])[-1])
        final = None if status == "invalid" else await self._grade()
        return Outcome(status, self.engine.ended, detail, final, self.elapsed())

    async def _loop(self, receive: Any) -> None:
        async with anyio.create_task_group() as group:
            self._dispatch(SessionStarted(0.0, tuple(self.parts.repo.files()), self.start))
            group.start_soon(self._agent)
            group.start_soon(self._watch)
            group.start_soon(self._test)
            group.start_soon(self._timer)
            group.start_soon(self._watch_limits)
            async for event in receive:
                self._dispatch(event)
                if self.engine.ended is not None:
                    break
            self.parts.watcher.stop()
            group.cancel_scope.cancel()
        for over in self._limits.unsaid() if self._limits is not None else ():
            self._note(over)

    def elapsed(self) -> float:
        """Seconds of session time since the start (a skipped wait counts as passed)."""
        return anyio.current_time() - self._start + self._skipped

    def _emit(self, event: Event | Observation) -> None:
        self._send.send_nowait(event)

    def budget_exhausted(self, detail: str) -> None:
        """The model gateway refused a request over the session's budget: the engine ends the
        session (``budget_exhausted``), which stops the agent. Once the session is over, nothing."""
        if self._send is not None and self.engine.ended is None:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                self._emit(BudgetExhausted(0.0, detail))

    def _dispatch(self, event: Event | Observation) -> None:
        t = max(self.elapsed(), self._last_t, event.t)
        self._last_t = t
        event = dataclasses.replace(event, t=t)
        if isinstance(event, Observation):  # an observation decides nothing
            self._record([event], t)
        else:
            self._agent_gone = self._agent_gone or isinstance(event, AgentExited)
            self._decide(event, t)
        self.view.elapsed = t
        if self._on_change is not None:
            self._on_change(self.view)

    def _decide(self, event: Event, t: float) -> None:
        """Step the engine; log the event with its decisions before carrying them out.

        One append and one fsync for both: a kill leaves the event with every decision it
        caused, or neither, never an event whose decisions a replay would call missing.
        """
        actions = self.engine.step(event)
        self._record([event, *actions], t, sync=bool(actions))
        self._observe(event)
        for action in actions:
            self._effect(action)
        self._rearm.set()

    def _note(self, record: SessionRecord) -> None:
        """Log a record that is not an engine input (an observation, for reports)."""
        t = max(self.elapsed(), self._last_t)
        self._last_t = t
        self._record([record], t, sync=True)

    def _record(self, records: list[LogRecord], t: float, *, sync: bool = False) -> None:
        """Append to the log in one write; once written, each record is acknowledged (with -v)."""
        first = self.log.append_all(records, t, sync=sync)
        for seq, record in enumerate(records, first):
            self._logger.debug("recorded", seq=seq, kind=record.kind)

    def _observe(self, event: Event) -> None:
        if isinstance(event, TestsResult):
            self.view.tests = ", ".join(f"{p.phase} {p.passed}/{p.total}" for p in event.phases)
            self._logger.info("tests", request=event.request, result=self.view.tests, cached=event.cached)
        elif isinstance(event, CommitMade):
            self._logger.info("commit", sha=event.sha[:10], message=event.message)
        elif event.kind.startswith(("agent.", "message.delivered")):
            if event.kind == "message.delivered":
                self._messaged_at = anyio.current_time()
            self.view.agent = {
                "agent.started": "started",
                "agent.turn_ended": "idle",
                "agent.exited": "exited",
                "message.delivered": "working",
            }[event.kind]

    def _effect(self, action: Any) -> None:
        if isinstance(action, MessageQueued):
            self._messages += 1
            self._messaged_at = anyio.current_time()
            phase = (
                self.start or self.challenge.phases[0].id
                if action.trigger == BRIEFING
                else self._unlocks.get(action.trigger)
            )
            self.mailbox.put(
                Message(
                    self._messages,
                    action.trigger,
                    action.message_kind,
                    action.text,
                    action.interrupt,
                    phase,
                )
            )
        elif isinstance(action, RunTests):
            self._pending = action
            self._tests_wanted.set()
        elif isinstance(action, PhaseUnlocked):
            self.view.phase = action.phase
            self._logger = self._logger.bind(phase=action.phase)
            self._logger.info("phase unlocked", by=action.trigger or "start")
        elif isinstance(action, TriggerFired):
            self.view.fired.append(action.trigger)
            self._logger.info("trigger fired", trigger=action.trigger, cause=action.cause)
        elif isinstance(action, EndSession):
            self._logger.info("session ended", reason=action.reason, detail=action.detail)

    # --- sources -----------------------------------------------------------------------

    async def _agent(self) -> None:
        ctx = AgentContext(
            workspace=self._workspace,
            folder=self._agent_folder,
            challenge=self.challenge,
            emit=self._emit,
            turn_limit=self.challenge.model.limits.agent_turn,
            log=self._logger,
            environment=self.environment,
            sandbox=self._sandbox,
        )
        with self._agent_scope:
            await self.parts.agent.run(ctx, self.mailbox)

    async def _watch_limits(self) -> None:
        """Note each over-use of the agent's; over its disk limit, stop it: its exit ends the session."""
        if self._limits is None:
            return
        async for over in self._limits.overuses():
            self._note(over)
            self._logger.warning("agent over its limits", resource=over.resource, detail=over.detail)
            if over.action == ENDS_SESSION:
                self._agent_scope.cancel()  # its adapter stops every process of the turn
                if self._sandbox is not None and self._sandbox.cgroup is not None:
                    await self._sandbox.cgroup.kill()  # and whatever it left behind
                if not self._agent_gone:
                    self._emit(AgentExited(0.0, None))
                return

    async def _watch(self) -> None:
        async for batch in self.parts.watcher.batches():
            if batch.changes:
                self._emit(FilesChanged(0.0, batch.changes))
            if batch.git:
                for commit in await self.parts.repo.new_commits():
                    self._emit(commit)

    async def _test(self) -> None:
        """At most one run at a time; requests made meanwhile coalesce into the next run."""
        while True:
            await self._tests_wanted.wait()
            await self._head_start()
            self._tests_wanted = anyio.Event()
            request, self._pending = self._pending, None
            assert request is not None
            self._emit(await self._tests_for(request))

    async def _tests_for(self, request: RunTests) -> TestsResult:
        try:
            tree = await self.parts.repo.snapshot()
        except OverLimits as over:
            # Never a silent slowdown: recorded, not tested, and every test fails.
            self._note(WorkspaceOverLimits(over.size.files, over.size.bytes, str(over)))
            self._logger.warning("workspace over its limits", detail=str(over))
            run = refused(self.challenge, request.phases, str(over))
            return TestsResult(0.0, request.request, "", run.phases, run.status, run.detail)
        key = (tree, request.phases)
        cached = self._cache.get(key)
        if cached is not None:
            phases, status, detail = cached.phases, cached.status, cached.detail
            return TestsResult(0.0, request.request, tree, phases, status, detail, 0.0, True)
        self._note(TestsStarted(request.request, tree, request.phases))
        async with self._agent_frozen(request.request):
            run = await self.parts.runner.run(tree, request.phases)
        if run.effects is not None:  # the run was watched for prohibited effects
            self._note(TestsEffects(request.request, tree, run.effects))
        if counts(run.status):  # a run that does not count is never reused: the tree is tested again
            self._cache[key] = run
        return TestsResult(
            0.0, request.request, tree, run.phases, run.status, run.detail, round(run.seconds, 3)
        )

    async def _head_start(self) -> None:
        """Where runs freeze the agent, let a turn just given a message run ``HEAD_START`` first."""
        group = self._sandbox.cgroup if self._sandbox is not None else None
        if group is not None and group.can_freeze:
            await anyio.sleep_until(self._messaged_at + HEAD_START)

    @contextlib.asynccontextmanager
    async def _agent_frozen(self, request: int) -> AsyncIterator[None]:
        """The agent held still for the block (no channel from a running test to it), then noted."""
        if self._sandbox is None:
            yield
            return
        async with self._sandbox.frozen() as span:
            yield
        if span.held:
            self._note(AgentFrozen(request, round(span.seconds, 3), span.killed))

    async def _timer(self) -> None:
        """Send ``clock.tick`` at the engine's next wake-up; re-plan after every event."""
        while True:
            rearm = self._rearm = anyio.Event()
            wake = self.engine.next_wakeup
            if wake is None:
                await rearm.wait()
                continue
            delay = wake - self.elapsed()
            if delay > 0 and self.engine.waiting_for_time:
                # The agent is idle and only the clock can change a fact: waiting would change
                # nothing but the wall time, so the session's clock skips to the wake-up.
                self._note(ClockSkipped(wake, round(delay, 3)))
                self._skipped += delay
                delay = 0
            if delay > 0:
                with anyio.move_on_after(delay):
                    await rearm.wait()
                if rearm.is_set():
                    continue
            self._emit(ClockTick(wake))
            await rearm.wait()

    # --- the end -----------------------------------------------------------------------

    async def _grade(self) -> TestsResult | None:
        """Test the final workspace on every unlocked phase; logged as ``session.graded``."""
        phases = self.engine.unlocked
        try:
            with anyio.CancelScope(shield=True):
                result = await self._tests_for(RunTests(0, phases, "final grading"))
        except Exception as error:  # grading must not lose the log
            self._note(SessionGraded(status="invalid", detail=f"the final grading failed: {error}"))
            return None
        broken = self._seals.broken(self.challenge) if self._seals is not None else []
        if broken:
            verdicts = void(result.phases, "tampered") if counts(result.status) else result.phases
            detail = "; ".join([*broken, result.detail] if result.detail else broken)
            result = dataclasses.replace(result, phases=verdicts, status="tampered", detail=detail)
        self._note(SessionGraded.of(result))
        return result

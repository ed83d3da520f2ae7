"""What every agent adapter shares: messages, the mailbox, and the turn loop.

An adapter turns "deliver this message" into whatever its agent understands and reports
``agent.*`` and ``message.delivered`` events. Messages wait in the :class:`Mailbox` until
the agent's current turn ends; a message marked ``interrupt`` cancels the turn instead. A
turn's time limit does not count the time the agent spends frozen while hidden tests run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from orchestrator.challenge.model import Challenge
from orchestrator.grading.agent_sandbox import AgentSandbox
from orchestrator.grading.venvs import Environment
from triggers import AgentStarted, AgentTurnEnded, Event, MessageDelivered, Observation

__all__ = ["AgentContext", "AgentUnavailable", "Mailbox", "Message", "TurnAgent"]


class AgentUnavailable(RuntimeError):
    """The agent could not be started at all: an environment failure, not an agent failure.

    Raised by :meth:`Agent.preflight` before a run folder exists (the run is refused), or
    when the agent starts (the run is invalid)."""


@dataclass(frozen=True, slots=True)
class Message:
    """A message for the agent; ``phase`` is the phase its trigger unlocked, if any."""

    number: int
    trigger: str
    kind: str
    text: str
    interrupt: bool = False
    phase: str | None = None


@dataclass(frozen=True, slots=True)
class AgentContext:
    """Where the agent works and how it reports back. ``emit`` stamps times on receipt."""

    workspace: Path
    folder: Path  # the run's agent/ folder, for message files and transcripts
    challenge: Challenge
    emit: Callable[[Event | Observation], None]
    turn_limit: float | None = None
    log: Any = None
    #: the agent's own environment, first on its PATH (None: the PATH as it is)
    environment: Environment | None = None
    #: the run's agent sandbox (None: commands run as they are, as in tests of the loop)
    sandbox: AgentSandbox | None = None

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` as the agent's sandbox runs it."""
        return self.sandbox.command(argv) if self.sandbox is not None else list(argv)

    def env(self, env: dict[str, str]) -> dict[str, str]:
        """``env`` as the agent's sandbox gives it (its private HOME and temporary folder)."""
        return self.sandbox.env(env) if self.sandbox is not None else env

    def excluding_frozen(self, clock: anyio.CancelScope) -> contextlib.AbstractContextManager[None]:
        """For the block, ``clock``'s deadline does not count the time the agent is frozen."""
        return self.sandbox.excluding_frozen(clock) if self.sandbox is not None else contextlib.nullcontext()


class Mailbox:
    """Messages waiting for the agent; the session puts, the adapter takes."""

    def __init__(self) -> None:
        self._waiting: list[Message] = []
        self._arrived = anyio.Event()
        self._interrupt: Callable[[], None] | None = None

    def put(self, message: Message) -> None:
        """Queue ``message``; if it interrupts, cancel the turn under way."""
        self._waiting.append(message)
        self._arrived.set()
        if message.interrupt and self._interrupt is not None:
            self._interrupt()

    async def take_all(self) -> list[Message]:
        """Wait for at least one message; return every message waiting."""
        while not self._waiting:
            await self._arrived.wait()
            self._arrived = anyio.Event()
        taken, self._waiting = self._waiting, []
        return taken

    def pending(self) -> int:
        """How many messages wait."""
        return len(self._waiting)

    def on_interrupt(self, callback: Callable[[], None] | None) -> None:
        """Set what an interrupting message does to the turn under way."""
        self._interrupt = callback


class TurnAgent:
    """An agent that handles messages in turns: take what waits, work, report the turn's end."""

    name = "agent"
    home_files: tuple[str, ...] = ()

    def programs(self) -> list[str]:
        """None by default (an agent that runs no program of its own)."""
        return []

    def preflight(self, challenge: Challenge) -> None:
        """Nothing to check by default."""

    async def start(self, ctx: AgentContext) -> None:
        """Prepare before the first message (default: nothing)."""

    async def turn(self, ctx: AgentContext, messages: list[Message]) -> int | None:
        """Work on ``messages``; return an exit code if there is one."""
        raise NotImplementedError

    async def run(self, ctx: AgentContext, mailbox: Mailbox) -> None:
        """The turn loop; interrupts and the turn time limit end a turn early."""
        await self.start(ctx)
        ctx.emit(AgentStarted(0.0))
        while True:
            messages = await mailbox.take_all()
            for message in messages:
                ctx.emit(MessageDelivered(0.0, message.trigger))
            code: int | None = None
            with anyio.CancelScope() as turn:
                mailbox.on_interrupt(turn.cancel)
                limit = ctx.turn_limit if ctx.turn_limit is not None else float("inf")
                with anyio.move_on_after(limit) as clock, ctx.excluding_frozen(clock):
                    code = await self.turn(ctx, messages)
            mailbox.on_interrupt(None)
            reason = "interrupted" if turn.cancelled_caught else ("timeout" if clock.cancelled_caught else "")
            ctx.emit(AgentTurnEnded(0.0, code, reason))


def message_text(messages: list[Message]) -> str:
    """Several messages delivered in one turn, as one text."""
    if len(messages) == 1:
        return messages[0].text
    return "\n\n---\n\n".join(m.text.rstrip() for m in messages) + "\n"

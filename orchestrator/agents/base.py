"""What every agent adapter shares: the turn loop, and the error of an agent that cannot start.

An adapter turns "deliver this message" into whatever its agent understands and reports
``agent.*`` and ``message.delivered`` events. Messages wait in the mailbox
(:class:`~orchestrator.seams.Mailbox`, with the message and context types of the agent seam) until
the agent's current turn ends; a message marked ``interrupt`` cancels the turn instead. A
turn's time limit does not count the time the agent spends frozen while hidden tests run.
"""

from __future__ import annotations

import anyio

from orchestrator.challenge.model import Challenge
from orchestrator.seams import AgentContext, Mailbox, Message
from triggers import AgentStarted, AgentTurnEnded, MessageDelivered

__all__ = ["AgentUnavailable", "TurnAgent"]


class AgentUnavailable(RuntimeError):
    """The agent could not be started at all: an environment failure, not an agent failure.

    Raised by :meth:`Agent.preflight` before a run folder exists (the run is refused), or
    when the agent starts (the run is invalid)."""


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

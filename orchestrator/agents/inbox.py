"""The inbox agent: messages dropped as files for an agent or a person working outside.

Each message is written to ``.changeup/inbox/NNN.md`` in the workspace (``.changeup/`` is
never part of a snapshot). Whoever works on it ends the turn by creating
``.changeup/inbox/NNN.done``; until then the session keeps watching and testing.
"""

from __future__ import annotations

import anyio

from orchestrator.agents.base import AgentContext, Message, TurnAgent, message_text

__all__ = ["InboxAgent"]

POLL_SECONDS = 0.5


class InboxAgent(TurnAgent):
    """Writes each turn's messages to the inbox and waits for its ``.done`` file."""

    name = "inbox"

    def __init__(self) -> None:
        self._turns = 0

    async def turn(self, ctx: AgentContext, messages: list[Message]) -> int | None:
        """Drop the messages in the inbox; the turn ends when NNN.done appears."""
        self._turns += 1
        inbox = ctx.workspace / ".changeup" / "inbox"
        inbox.mkdir(parents=True, exist_ok=True)
        stem = f"{self._turns:03d}"
        (inbox / f"{stem}.md").write_text(message_text(messages), encoding="utf-8")
        done = inbox / f"{stem}.done"
        while not done.exists():
            await anyio.sleep(POLL_SECONDS)
        return None

"""The inbox agent: messages dropped as files for an agent or a person working outside.

Each message is written to ``.changeup/inbox/NNN.md`` in the workspace (``.changeup/`` is
never part of a snapshot, and is listed in the workspace's ``.git/info/exclude``, so a
``git add -A`` leaves it out without a tracked ``.gitignore`` the agent would see change).
Whoever works on it ends the turn by creating ``.changeup/inbox/NNN.done``; until then the
session keeps watching and testing.
"""

from __future__ import annotations

from pathlib import Path

import anyio

from orchestrator.agents.base import AgentContext, Message, TurnAgent, message_text

__all__ = ["InboxAgent", "exclude_inbox", "post"]

POLL_SECONDS = 0.5
#: The line of ``.git/info/exclude`` that keeps the inbox out of git.
INBOX_EXCLUDE = "/.changeup/"


class InboxAgent(TurnAgent):
    """Writes each turn's messages to the inbox and waits for its ``.done`` file."""

    name = "inbox"

    def __init__(self) -> None:
        self._turns = 0

    async def start(self, ctx: AgentContext) -> None:
        """Keep the inbox out of the workspace's commits."""
        exclude_inbox(ctx.workspace)

    async def turn(self, ctx: AgentContext, messages: list[Message]) -> int | None:
        """Drop the messages in the inbox; the turn ends when NNN.done appears."""
        self._turns += 1
        done = post(ctx.workspace, self._turns, message_text(messages))
        while not done.exists():
            await anyio.sleep(POLL_SECONDS)
        return None


def post(workspace: Path, turn: int, text: str) -> Path:
    """Put turn ``turn``'s message in the inbox as ``NNN.md``; returns the ``NNN.done`` to wait for.

    Written under another name and renamed into place, so whoever watches the inbox never
    reads a message half written.
    """
    inbox = workspace / ".changeup" / "inbox"
    inbox.mkdir(parents=True, exist_ok=True)
    stem = f"{turn:03d}"
    partial = inbox / f".{stem}.md.partial"
    partial.write_text(text, encoding="utf-8")
    partial.replace(inbox / f"{stem}.md")
    return inbox / f"{stem}.done"


def exclude_inbox(workspace: Path) -> None:
    """List ``.changeup/`` in the workspace's ``.git/info/exclude`` (once)."""
    exclude = workspace / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    text = exclude.read_text(encoding="utf-8") if exclude.is_file() else ""
    if INBOX_EXCLUDE not in text.splitlines():
        separator = "\n" if text and not text.endswith("\n") else ""
        exclude.write_text(f"{text}{separator}{INBOX_EXCLUDE}\n", encoding="utf-8")

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

from orchestrator.agents.base import TurnAgent, message_text
from orchestrator.seams import AgentContext, Message
from orchestrator.system.agentfiles import AgentFileError, AgentFolder, Content

__all__ = ["InboxAgent", "arrived", "exclude_inbox", "keep_inbox_out", "post"]

POLL_SECONDS = 0.5
#: The line of ``.git/info/exclude`` that keeps the inbox out of git.
INBOX_EXCLUDE = "/.changeup/"
#: The inbox, relative to the workspace.
INBOX = ".changeup/inbox"
#: The most of an agent's ``.git/info/exclude`` that is read to add the inbox to it.
EXCLUDE_BYTES = 1 << 20


class InboxAgent(TurnAgent):
    """Writes each turn's messages to the inbox and waits for its ``.done`` file."""

    name = "inbox"

    def __init__(self) -> None:
        self._turns = 0

    async def start(self, ctx: AgentContext) -> None:
        """Keep the inbox out of the workspace's commits."""
        await keep_inbox_out(ctx)

    async def turn(self, ctx: AgentContext, messages: list[Message]) -> int | None:
        """Drop the messages in the inbox; the turn ends when NNN.done appears."""
        self._turns += 1
        folder = AgentFolder(ctx.workspace)
        turn, text = self._turns, message_text(messages)
        done = await folder.run(lambda: post(ctx.workspace, turn, text))
        while not await arrived(folder, done):
            await anyio.sleep(POLL_SECONDS)
        return None


def post(workspace: Path, turn: int, text: str) -> Path:
    """Put turn ``turn``'s message in the inbox as ``NNN.md``; returns the ``NNN.done`` to wait for.

    Written as a new file renamed into place (:meth:`AgentFolder.write`), so whoever watches the
    inbox never reads a message half written, and whatever stood at its name (a link to a host
    file, say) is replaced, never written through. Blocking: call it off the event loop."""
    folder = AgentFolder(workspace)
    stem = f"{INBOX}/{turn:03d}"
    folder.write(f"{stem}.md", text.encode("utf-8"))
    return workspace / f"{stem}.done"


async def arrived(folder: AgentFolder, done: Path) -> bool:
    """Whether anything stands at ``done`` (a file of the inbox in ``folder``)."""
    relative = done.relative_to(folder.path).as_posix()
    return await folder.run(lambda: folder.stat(relative)) is not None


def exclude_inbox(workspace: Path) -> None:
    """List ``.changeup/`` in the workspace's ``.git/info/exclude`` (once), written anew: a link
    or anything else that is not a regular file there is replaced, never followed; an exclude
    file longer than :data:`EXCLUDE_BYTES` is left as it is. Blocking: call it off the event loop."""
    folder = AgentFolder(workspace)
    try:
        content = folder.read(".git/info/exclude", limit=EXCLUDE_BYTES)
    except (FileNotFoundError, AgentFileError):  # nothing, or not a file (a link): replaced
        content = Content(b"", False, 0)
    text = content.text()
    if content.capped or INBOX_EXCLUDE in text.splitlines():
        return
    separator = "\n" if text and not text.endswith("\n") else ""
    folder.write(".git/info/exclude", f"{text}{separator}{INBOX_EXCLUDE}\n".encode())


async def keep_inbox_out(ctx: AgentContext) -> None:
    """:func:`exclude_inbox` off the event loop; a workspace where it cannot be done (a link or a
    FIFO at ``.git/info/exclude``, say) is logged and left as it is: the inbox then shows in git."""
    try:
        await AgentFolder(ctx.workspace).run(lambda: exclude_inbox(ctx.workspace))
    except OSError as error:
        if ctx.log is not None:
            ctx.log.warning("inbox not excluded from git", error=str(error))

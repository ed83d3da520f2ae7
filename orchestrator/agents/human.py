"""A person as the agent: each message shown in the terminal and dropped in the inbox.

Like the inbox agent, each turn's messages are written to ``.changeup/inbox/NNN.md``; they
are also printed on changeup's standard error. The person works in the workspace meanwhile
(changeup keeps watching and testing) and declares the turn done by pressing Enter — a line
typed before Enter is kept as their note — or by creating ``.changeup/inbox/NNN.done`` (its
contents are the note). The turn's ``turn.summary`` records how long it took and the note as
the final message; an ``agent.output`` line says how the turn was declared done.
"""

from __future__ import annotations

import os
import select
import sys
from functools import partial
from typing import TextIO

import anyio

from orchestrator.agents.base import TurnAgent, message_text
from orchestrator.agents.inbox import arrived, keep_inbox_out, post
from orchestrator.seams import AgentContext, Message
from orchestrator.system.agentfiles import AgentFolder
from triggers.records import AgentOutput, TurnSummary

__all__ = ["HumanAgent"]

POLL_SECONDS = 0.2
#: The most of a ``.done`` file kept as the turn's note.
NOTE_BYTES = 64 * 1024


class HumanAgent(TurnAgent):
    """Shows messages to a person at the terminal; Enter or ``NNN.done`` ends a turn."""

    name = "human"

    def __init__(self, *, terminal: TextIO | None = None, keyboard: int | None = None) -> None:
        self._terminal = terminal  # None: changeup's standard error at the time of writing
        self._keyboard = keyboard  # a file descriptor; None: standard input
        self._keyboard_open = True
        self._typed = b""
        self._turns = 0

    def describe(self) -> dict[str, object]:
        """What the manifest records."""
        return {"preset": "human", "message_via": "terminal and .changeup/inbox/NNN.md"}

    async def start(self, ctx: AgentContext) -> None:
        """Keep the inbox out of the workspace's commits."""
        await keep_inbox_out(ctx)

    async def turn(self, ctx: AgentContext, messages: list[Message]) -> int | None:
        """Show the messages; wait until the person says the turn is done."""
        self._turns += 1
        began = anyio.current_time()
        self._drain()  # what was typed before this message does not answer it
        folder = AgentFolder(ctx.workspace)
        turn, text = self._turns, message_text(messages)
        done = await folder.run(lambda: post(ctx.workspace, turn, text))
        relative = done.relative_to(ctx.workspace).as_posix()
        self._show(ctx, messages, done)
        note: str | None = None
        how = ""
        try:
            while True:
                line = self._typed_line()
                if line is not None:
                    note, how = line, "Enter"
                    data = (line + "\n" if line else "").encode("utf-8")
                    await folder.run(partial(folder.write, relative, data))
                    break
                if await arrived(folder, done):
                    note, how = await _note(folder, relative), done.name
                    break
                await anyio.sleep(POLL_SECONDS)
        finally:
            if how:
                ctx.emit(AgentOutput(0.0, f"[turn {self._turns} declared done by {how}]\n"))
            ctx.emit(
                TurnSummary(
                    0.0,
                    self._turns,
                    seconds=round(anyio.current_time() - began, 3),
                    final_message=note or None,
                )
            )
        return None

    def _show(self, ctx: AgentContext, messages: list[Message], done: object) -> None:
        out = self._terminal or sys.stderr
        rule = "─" * 72
        for message in messages:
            out.write(
                f"\n{rule}\nchangeup — message {message.number} ({message.kind}, from {message.trigger})\n"
            )
            out.write(f"{rule}\n{message.text.rstrip()}\n")
        out.write(
            f"{rule}\nWork in {ctx.workspace}\n"
            "When this turn is done, press Enter (type a note first if you like), "
            f"or create {done}.\n{rule}\n"
        )
        out.flush()

    def _drain(self) -> None:
        while self._typed_line() is not None:
            pass
        self._typed = b""

    def _typed_line(self) -> str | None:
        """A line the person typed, without waiting; None if there is none (yet)."""
        if not self._keyboard_open:
            return None
        fd = self._keyboard if self._keyboard is not None else _stdin_fd()
        if fd is None:
            self._keyboard_open = False
            return None
        while b"\n" not in self._typed:
            try:
                ready, _, _ = select.select([fd], [], [], 0)
            except (OSError, ValueError):
                self._keyboard_open = False
                return None
            if not ready:
                return None
            chunk = os.read(fd, 4096)
            if not chunk:  # end of input: only the .done file can end turns now
                self._keyboard_open = False
                return None
            self._typed += chunk
        line, _, self._typed = self._typed.partition(b"\n")
        return line.decode("utf-8", "replace").strip()


async def _note(folder: AgentFolder, relative: str) -> str:
    """What the ``.done`` file says (at most :data:`NOTE_BYTES`); nothing, if it is not a file."""
    try:
        content = await folder.run(lambda: folder.read(relative, limit=NOTE_BYTES))
    except OSError:
        return ""
    return content.text().strip()


def _stdin_fd() -> int | None:
    try:
        return sys.stdin.fileno() if sys.stdin is not None else None
    except (OSError, ValueError):
        return None

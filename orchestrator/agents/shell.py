"""Agents driven through a shell command: ``command:CMD`` and ``process:CMD``.

``command:CMD`` runs ``sh -c CMD`` in the workspace once per turn: the turn's messages are on
its standard input and in the file named by ``$CHANGEUP_MESSAGE_FILE``; the turn ends when the
command exits. This is how one-shot CLIs are driven (``claude -p``, ``codex exec``,
``aider --message``). A program given as a relative path (``./my-agent.sh``) is found from the
folder changeup was started in, not from the workspace the command runs in.

A :class:`CommandAgent` may also be given an argument list, run without a shell; its hooks
(``prompt_for``, ``command_for``, ``stdin_for``, ``env_for``, ``begin_turn``, ``end_turn``) let
a subclass choose what each turn runs and read what it printed (see ``orchestrator.agents.presets``).

``process:CMD`` starts ``sh -c CMD`` once and writes each message to its standard input,
followed by a line holding only ``END_MARKER``. The process ends its turn by printing a
line holding only ``TURN_DONE``; if it exits, the agent is gone.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import shlex
import subprocess
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import anyio
from anyio.abc import Process

from orchestrator.agents.base import AgentUnavailable, TurnAgent, message_text
from orchestrator.agents.redaction import RedactedStream, Redactor
from orchestrator.agents.transcript import InlineBudget
from orchestrator.challenge.model import Challenge
from orchestrator.seams import AgentContext, Mailbox, Message
from orchestrator.system.agentfiles import AgentFolder
from orchestrator.system.processes import run_process_group, stop
from triggers import AgentExited, AgentOutput, AgentStarted, AgentTurnEnded, MessageDelivered

__all__ = ["END_MARKER", "TURN_DONE", "CommandAgent", "ProcessAgent"]

END_MARKER = "<<<END OF MESSAGE>>>"
TURN_DONE = "<<<TURN DONE>>>"
_NOT_FOUND = 127  # what sh exits with when the command does not exist
_DONE_LINE = 4096  # the longest line still read as TURN_DONE (spaces around it allowed)


def agent_env(ctx: AgentContext, message_file: str = "") -> dict[str, str]:
    """The agent's environment: changeup's, plus where it is and what it was told, its own
    Python environment first on PATH, and its sandbox's private HOME and temporary folder."""
    env = {
        **os.environ,
        "CHANGEUP_WORKSPACE": str(ctx.workspace),
        "CHANGEUP_CHALLENGE": ctx.challenge.id,
    }
    if message_file:
        env["CHANGEUP_MESSAGE_FILE"] = message_file
    if ctx.environment is not None:
        env = ctx.environment.path_env(env)
    return ctx.env(env)


def command_programs(command: str) -> list[str]:
    """What a shell command line runs, for its sandbox to show: the program it starts with, and
    every file it names by path (``python3 /opt/agents/agent.py``: the script too)."""
    try:
        words = [w for w in shlex.split(command) if "=" not in w.split("/", 1)[0]]  # not FOO=bar
    except ValueError:
        return []
    while words and words[0] in ("exec", "env", "command", "nice", "timeout"):
        words = words[1:]
    files = [os.path.abspath(w) for w in words[1:] if "/" in w and os.path.isfile(w)]
    return [*words[:1], *files]


def anchored(command: str, here: Path) -> str:
    """``command`` with its program, if written as a relative path to a file that exists from
    ``here`` (the folder changeup was started in), made absolute: the command runs in the
    workspace, where ``./my-agent.sh`` would not be found. Anything else stays as written."""
    program = _program(command)
    stripped = command.lstrip()
    if program is None or os.path.isabs(program) or not stripped.startswith(program):
        return command  # no path, or a quoted one: left as written
    if not (here / program).is_file():
        return command
    return shlex.quote(str((here / program).resolve())) + stripped[len(program) :]


def check_program(command: str, challenge: Challenge) -> None:
    """Refuse a command whose program is a path to no runnable file, saying what to do."""
    program = _program(command)
    if program is None:
        return
    path = Path(program)
    if not path.is_absolute() and (challenge.workspace / path).is_file():
        return  # a program of the challenge's own workspace, which the command runs in
    if not path.is_file():
        raise AgentUnavailable(
            f"no such file {program!r}: a relative path is looked up from {Path.cwd()} (where "
            "changeup was started), and the command runs in the run's workspace; "
            "give the program's path from here, or an absolute one"
        )
    if not os.access(path, os.X_OK):
        raise AgentUnavailable(
            f"{program} is not executable: `chmod +x {program}`, or name its interpreter "
            f"(command:sh {program}, command:python3 {program})"
        )


def _program(command: str) -> str | None:
    """The program of a shell command line when it is given as a path (None: a name, or none)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    return words[0] if words and "/" in words[0] else None


async def write_message(ctx: AgentContext, name: str, text: str) -> None:
    """Write a turn's message file in the agent folder as a new file (never through whatever the
    agent left at its name); one that cannot be written is said in the log, and the turn goes on
    (the message is on standard input too)."""
    folder = AgentFolder(ctx.folder)
    try:
        await folder.run(partial(folder.write, name, text.encode("utf-8")))
    except OSError as error:
        ctx.emit(AgentOutput(0.0, f"[changeup could not write the message file: {error}]\n"))


class CommandAgent(TurnAgent):
    """Runs a command once per turn, with the turn's messages on stdin and in a file.

    ``command`` is a shell command line (run with ``sh -c``; its program anchored, see
    :func:`anchored`) or an argument list (run as is).
    """

    def __init__(self, command: str | Sequence[str]) -> None:
        self.command: str | list[str] = (
            anchored(command, Path.cwd()) if isinstance(command, str) else list(command)
        )
        shown = command if isinstance(command, str) else shlex.join(command)
        self.name = f"command:{shown}"
        self._turns = 0
        self._stream = RedactedStream(Redactor({}))
        self._budget = InlineBudget()

    # --- hooks: what a turn sends and runs, and what becomes of its output ------------------

    def prompt_for(self, messages: list[Message]) -> str:
        """The text this turn gives the agent (written to the message file)."""
        return message_text(messages)

    def command_for(self, ctx: AgentContext, prompt: str, message_file: Path) -> list[str]:
        """The argument list this turn runs."""
        return ["sh", "-c", self.command] if isinstance(self.command, str) else list(self.command)

    def stdin_for(self, prompt: str) -> bytes | None:
        """What the command reads on stdin (None: nothing, not even an open pipe)."""
        return prompt.encode("utf-8")

    def env_for(self, ctx: AgentContext, message_file: Path) -> dict[str, str]:
        """The command's environment."""
        return agent_env(ctx, str(message_file))

    def programs(self) -> list[str]:
        """The program of the command line."""
        return command_programs(self.command) if isinstance(self.command, str) else self.command[:1]

    def preflight(self, challenge: Challenge) -> None:
        """Refuse a shell command whose program is a path to no runnable file."""
        if isinstance(self.command, str):
            check_program(self.command, challenge)

    def begin_turn(self, ctx: AgentContext) -> Callable[[str], None]:
        """Called as the turn starts; returns what receives the command's output.

        Secret values of the environment (API keys, tokens) are redacted from what is
        logged, whole lines at a time, so a secret printed in two pieces is caught too. The
        log takes the turn's first :data:`~orchestrator.agents.transcript.INLINE_CHARS`.
        """
        self._stream = RedactedStream(Redactor.from_env(os.environ))
        self._budget = InlineBudget()

        def output(chunk: str) -> None:
            text = self._budget.take(self._stream.feed(chunk))
            if text:
                ctx.emit(AgentOutput(0.0, text))

        return output

    def end_turn(self, ctx: AgentContext, returncode: int | None) -> None:
        """Called as the turn ends, also when it is interrupted or times out (``returncode`` None)."""
        rest = self._budget.take(self._stream.flush()) + self._budget.note()
        if rest:
            ctx.emit(AgentOutput(0.0, rest))

    # --- the turn ---------------------------------------------------------------------------

    async def turn(self, ctx: AgentContext, messages: list[Message]) -> int | None:
        """Run the command on these messages; its exit ends the turn."""
        self._turns += 1
        text = self.prompt_for(messages)
        ctx.folder.mkdir(parents=True, exist_ok=True)  # the run's agent folder: changeup's to make
        message_file = ctx.folder / f"message-{self._turns:03d}.md"
        await write_message(ctx, message_file.name, text)
        argv = ctx.command(self.command_for(ctx, text, message_file))
        env = self.env_for(ctx, message_file)
        output = self.begin_turn(ctx)
        returncode: int | None = None
        try:
            try:
                finished = await run_process_group(
                    argv,
                    cwd=ctx.workspace,
                    env=env,
                    timeout=None,
                    stdin=self.stdin_for(text),
                    on_output=output,
                )
            except (FileNotFoundError, PermissionError) as error:  # an argument list's program
                raise AgentUnavailable(
                    f"cannot start the agent {argv[0]!r}: {error.strerror or error}"
                ) from None
            returncode = finished.returncode
            if "bwrap: execvp" in finished.output and returncode == 1:  # not found inside the sandbox
                raise AgentUnavailable(f"cannot start the agent: {finished.output.strip()[-300:]}")
            if returncode == _NOT_FOUND and self._turns == 1 and isinstance(self.command, str):
                raise AgentUnavailable(
                    f"agent command not found: {self.command!r} ({finished.output.strip()})"
                )
            return returncode
        finally:
            self.end_turn(ctx, returncode)


class ProcessAgent:
    """One long-lived process; messages go to its stdin, ``TURN_DONE`` ends a turn."""

    home_files: tuple[str, ...] = ()

    def __init__(self, command: str) -> None:
        self.command = anchored(command, Path.cwd())
        self.name = f"process:{command}"
        self._turn_done = anyio.Event()

    def programs(self) -> list[str]:
        """The program of the command line."""
        return command_programs(self.command)

    def preflight(self, challenge: Challenge) -> None:
        """Refuse a command whose program is a path to no runnable file."""
        check_program(self.command, challenge)

    async def run(self, ctx: AgentContext, mailbox: Mailbox) -> None:
        """Start the process, feed it messages, and report its turns and its exit."""
        process = await anyio.open_process(
            ctx.command(["sh", "-c", self.command]),
            cwd=ctx.workspace,
            env=agent_env(ctx),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        ctx.emit(AgentStarted(0.0))
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._read, ctx, process, group.cancel_scope)
                while True:
                    messages = await mailbox.take_all()
                    self._turn_done = anyio.Event()
                    # Recorded before they are sent: an exit they cause comes after, in this turn.
                    for message in messages:
                        ctx.emit(MessageDelivered(0.0, message.trigger))
                    await self._send(process, messages)
                    await self._turn_done.wait()
                    ctx.emit(AgentTurnEnded(0.0))
        finally:
            with anyio.CancelScope(shield=True):
                await stop(process)  # its whole tree
                await process.aclose()

    async def _send(self, process: Process, messages: list[Message]) -> None:
        assert process.stdin is not None
        payload = f"{message_text(messages).rstrip()}\n{END_MARKER}\n".encode()
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.send(payload)  # if it exited, the reader reports that

    async def _read(self, ctx: AgentContext, process: Process, session: anyio.CancelScope) -> None:
        """Log the output (each turn's first ``INLINE_CHARS``), and end a turn at ``TURN_DONE``."""
        assert process.stdout is not None
        line = ""  # the end of the output after its last line feed, while it may be TURN_DONE
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        stream = RedactedStream(Redactor.from_env(os.environ))
        budget = InlineBudget()
        async for chunk in process.stdout:
            text = decoder.decode(chunk)
            redacted = budget.take(stream.feed(text))
            if redacted:
                ctx.emit(AgentOutput(0.0, redacted))
            *lines, rest = (line + text).split("\n")
            line = rest if len(rest) <= _DONE_LINE else ""  # so long a line is no TURN_DONE
            if any(done.strip() == TURN_DONE for done in lines):
                note = budget.note()
                if note:
                    ctx.emit(AgentOutput(0.0, note))
                budget = InlineBudget()
                self._turn_done.set()
        rest = budget.take(stream.flush()) + budget.note()
        if rest:
            ctx.emit(AgentOutput(0.0, rest))
        ctx.emit(AgentExited(0.0, await process.wait()))
        session.cancel()

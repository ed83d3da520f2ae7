"""Each CLI's own way of acting: a script's steps as that CLI's tool calls or edit format.

A :class:`Dialect` turns a step into a :class:`Reply` (words, and at most one tool call) that
the protocol (:mod:`tests.modelserver.protocols`) then puts on the wire. The tool names and
arguments are the ones each CLI declares in its requests (read off the pinned versions):

==================  =========================================================================
Claude Code         ``Read``/``Write`` (``file_path`` absolute, ``content``), ``Bash`` (``command``)
Codex CLI           ``exec_command`` (``cmd``): files are read with ``cat`` and written with a
                    here-document, since that is the tool it declares for a model it has no
                    metadata for
Gemini CLI          ``read_file``/``write_file`` (``file_path`` absolute), ``run_shell_command``
mini-swe-agent      ``bash`` (``command``); the turn ends with its ``echo
                    COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`` command, the words after it
OpenHands           ``file_editor`` (``command: view``, ``path``), ``terminal`` (``command``: files
                    are written with a here-document, as its ``create`` refuses a file that
                    exists), ``finish`` (``message``); every call but ``finish`` says its
                    ``security_risk``
Aider               no tools: one answer per message, every file whole in its ``whole`` edit
                    format (the path on a line, then the file in a fence), then the words
==================  =========================================================================
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from tests.modelserver.script import Hold, Part, Read, Run, Say, Step, Write

__all__ = ["DIALECTS", "Call", "Dialect", "Reply"]


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call: the tool's name and its arguments."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Reply:
    """One model answer: words, and the tool call it makes (None: the turn's last answer)."""

    text: str = ""
    call: Call | None = None
    hold: bool = False  # answer nothing yet (a Hold step)


def _heredoc(path: str, content: str) -> str:
    """A shell command that writes ``content`` to ``path`` exactly."""
    end = "CHANGEUP_EOF"
    assert end not in content
    return (
        f"cat > {shlex.quote(path)} <<'{end}'\n{content}{'' if content.endswith(chr(10)) else chr(10)}{end}"
    )


def _absolute(workspace: str, path: str) -> str:
    return str(PurePosixPath(workspace) / path)


def _claude(step: Step, workspace: str) -> Reply:
    if isinstance(step, Read):
        return Reply(call=Call("Read", {"file_path": _absolute(workspace, step.path)}))
    if isinstance(step, Write):
        return Reply(
            f"Writing {step.path}.",
            Call("Write", {"file_path": _absolute(workspace, step.path), "content": step.content}),
        )
    if isinstance(step, Run):
        return Reply(call=Call("Bash", {"command": step.command, "description": "Run the tests"}))
    assert isinstance(step, Say)
    return Reply(step.text)


def _codex(step: Step, workspace: str) -> Reply:
    if isinstance(step, Read):
        return Reply(call=Call("exec_command", {"cmd": f"cat {shlex.quote(step.path)}"}))
    if isinstance(step, Write):
        return Reply(
            f"Writing {step.path}.", Call("exec_command", {"cmd": _heredoc(step.path, step.content)})
        )
    if isinstance(step, Run):
        return Reply(call=Call("exec_command", {"cmd": step.command}))
    assert isinstance(step, Say)
    return Reply(step.text)


def _gemini(step: Step, workspace: str) -> Reply:
    if isinstance(step, Read):
        return Reply(call=Call("read_file", {"file_path": _absolute(workspace, step.path)}))
    if isinstance(step, Write):
        return Reply(
            f"Writing {step.path}.",
            Call("write_file", {"file_path": _absolute(workspace, step.path), "content": step.content}),
        )
    if isinstance(step, Run):
        return Reply(
            call=Call("run_shell_command", {"command": step.command, "description": "Run the tests"})
        )
    assert isinstance(step, Say)
    return Reply(step.text)


def _mini(step: Step, workspace: str) -> Reply:
    if isinstance(step, Read):
        return Reply(f"Reading {step.path}.", Call("bash", {"command": f"cat {shlex.quote(step.path)}"}))
    if isinstance(step, Write):
        return Reply(f"Writing {step.path}.", Call("bash", {"command": _heredoc(step.path, step.content)}))
    if isinstance(step, Run):
        return Reply("Running the tests.", Call("bash", {"command": step.command}))
    assert isinstance(step, Say)
    # mini ends a task on this command's output; what follows its first line is the submission.
    words = f"echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && printf '%s\\n' {shlex.quote(step.text)}"
    return Reply("Submitting.", Call("bash", {"command": words}))


def _openhands(step: Step, workspace: str) -> Reply:
    if isinstance(step, Read):
        path = _absolute(workspace, step.path)
        return Reply(call=Call("file_editor", {"command": "view", "path": path, "security_risk": "LOW"}))
    if isinstance(step, Write):  # its file_editor's create refuses a file that exists
        return Reply(
            f"Writing {step.path}.",
            Call("terminal", {"command": _heredoc(step.path, step.content), "security_risk": "LOW"}),
        )
    if isinstance(step, Run):
        return Reply(call=Call("terminal", {"command": step.command, "security_risk": "LOW"}))
    assert isinstance(step, Say)
    return Reply(call=Call("finish", {"message": step.text}))


def _aider_whole(part: Part) -> Reply:
    """Aider's ``whole`` edit format: every file written in full, then the turn's words."""
    blocks = [f"{s.path}\n```\n{s.content}```" for s in part.steps if isinstance(s, Write)]
    words = next(s.text for s in reversed(part.steps) if isinstance(s, Say))
    return Reply("\n\n".join([*blocks, words]))


def _aider_commit_message(body: dict[str, Any]) -> bool:
    """Aider asks its (weak) model for a commit message after each edit, with the chat as context."""
    messages = body.get("messages") or []
    first = messages[0] if messages and isinstance(messages[0], dict) else {}
    return first.get("role") == "system" and "commit message" in str(first.get("content")).lower()


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one CLI acts: a step as a reply; ``whole`` CLIs answer a message in one reply.

    ``side`` tells a request of the CLI's own (a commit message) that quotes the conversation,
    so holds a marker, from one of the script: it gets a short answer, outside the script.
    """

    name: str
    step: Callable[[Step, str], Reply] | None = None
    whole: Callable[[Part], Reply] | None = None
    side: Callable[[dict[str, Any]], bool] = lambda body: False
    #: A whole-reply CLI's only request mid-turn is a side one: a part that holds holds there.
    holds_side: bool = False

    def reply(self, part: Part, index: int, workspace: str) -> Reply:
        """The answer to the request that asks for step ``index`` of ``part``."""
        if self.whole is not None:
            return self.whole(part) if index == 0 else Reply("Done.")
        assert self.step is not None
        step = part.steps[min(index, len(part.steps) - 1)]
        if isinstance(step, Hold):
            return Reply(hold=True)
        return self.step(step, workspace)


#: The dialects by CLI.
DIALECTS: dict[str, Dialect] = {
    "claude-code": Dialect("claude-code", step=_claude),
    "codex": Dialect("codex", step=_codex),
    "gemini-cli": Dialect("gemini-cli", step=_gemini),
    "mini-swe-agent": Dialect("mini-swe-agent", step=_mini),
    "openhands": Dialect("openhands", step=_openhands),
    "aider": Dialect("aider", whole=_aider_whole, side=_aider_commit_message, holds_side=True),
}

"""What the scripted model says: steps per challenge message, and where a request stands in them.

A :class:`Script` holds one :class:`Part` per challenge message, found by a *marker* (a phrase
only that message holds). A request is placed by :func:`locate`: the latest user message that
holds a marker names the part (where one message holds several, as a CLI that re-sends
earlier messages writes them, the marker that comes last wins), and the number of model
answers after that message is the step. So the server keeps no state between requests: a
retried request gets the same answer, and a CLI restarted on the same conversation goes on
where it was.

Steps are what a coding model does: :class:`Read` a file, :class:`Write` one, :class:`Run` a
command, :class:`Say` the final words of the turn, or :class:`Hold` (answer nothing until the
server is woken, for a turn that must be interrupted). Each CLI's dialect
(:mod:`tests.modelserver.dialects`) writes them in that CLI's own tool calls or edit format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "Hold",
    "Message",
    "Part",
    "Place",
    "Read",
    "Run",
    "Say",
    "Script",
    "Step",
    "Write",
    "locate",
]


@dataclass(frozen=True, slots=True)
class Read:
    """Read a file of the workspace (path relative to it)."""

    path: str


@dataclass(frozen=True, slots=True)
class Write:
    """Write a whole file of the workspace (path relative to it)."""

    path: str
    content: str


@dataclass(frozen=True, slots=True)
class Run:
    """Run a shell command in the workspace."""

    command: str


@dataclass(frozen=True, slots=True)
class Say:
    """End the turn with these words."""

    text: str


@dataclass(frozen=True, slots=True)
class Hold:
    """Answer nothing until the server is woken (by a request of a later part, or its end)."""


Step = Read | Write | Run | Say | Hold


@dataclass(frozen=True, slots=True)
class Part:
    """The steps that answer one challenge message, found by a phrase only it holds."""

    name: str
    marker: str
    steps: tuple[Step, ...]

    def __post_init__(self) -> None:
        if not self.steps or not isinstance(self.steps[-1], Say):
            raise ValueError(f"part {self.name!r}: the last step must be a Say (the turn's final words)")


@dataclass(frozen=True, slots=True)
class Script:
    """The parts, one per challenge message."""

    parts: tuple[Part, ...]

    def part(self, name: str) -> Part:
        """The part of that name."""
        for part in self.parts:
            if part.name == name:
                return part
        raise KeyError(f"no part {name!r} (parts: {', '.join(p.name for p in self.parts)})")


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a request's conversation, as the server reads it."""

    role: str  # "user" (a person's text), "assistant" (a model answer), "tool" (a tool's result)
    text: str


@dataclass(frozen=True, slots=True)
class Place:
    """Where a request stands: the part, and the index of the step it asks for."""

    part: Part
    step: int  # past the part's last step, its final words are said again


def locate(script: Script, messages: Sequence[Message]) -> Place | None:
    """The place of a conversation in the script; None when no user message holds a marker
    (a CLI's side request: a title, a classifier, a summary)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role != "user":
            continue
        found = [(message.text.rfind(p.marker), p) for p in script.parts if p.marker in message.text]
        if not found:
            continue
        part = max(found, key=lambda pair: pair[0])[1]
        answers = sum(1 for later in messages[index + 1 :] if later.role == "assistant")
        return Place(part, answers)
    return None

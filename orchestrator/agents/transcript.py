"""Agent transcripts: each turn's output kept beside the log, secrets redacted, parsed where structured.

A :class:`Transcript` receives one turn's output as it arrives. It redacts the values of
secret environment variables (API keys, tokens), writes everything to a new file in the run's
``agent/`` folder (never through what the agent left at its name), passes the first
:data:`INLINE_CHARS` characters on as ``agent.output`` records (and then one line naming the
file), and feeds complete lines to a parser.

A parser (a :class:`LineParser`) reads the output format its CLI documents and answers a
:class:`Usage`: tokens, cost, the final message and the id that continues the conversation.
A figure the output does not state stays ``None``: missing, never 0. Each parser lives with
its CLI's preset, in ``orchestrator.agents.presets.<vendor>``; the readers of loosely typed
JSON values they share are here.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TextIO

from orchestrator.agents.redaction import RedactedStream, Redactor
from orchestrator.system.agentfiles import AgentFolder

__all__ = [
    "INLINE_CHARS",
    "LineParser",
    "Transcript",
    "Usage",
    "as_dict",
    "as_int",
    "as_number",
    "as_text",
    "json_object",
    "total",
]

#: How much of one turn's output goes into the event log itself; the rest only to the file.
INLINE_CHARS = 128 * 1024


@dataclass(slots=True)
class Usage:
    """What a turn's output says it used and said; ``None`` where it says nothing."""

    input_tokens: int | None = None  # every prompt token, cached or not
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    cost_usd: float | None = None
    final_message: str | None = None
    session: str = ""  # what continues the conversation (a session or thread id)
    model: str = ""


class LineParser(Protocol):
    """Reads one CLI's output format, a line at a time."""

    def feed(self, line: str) -> None:
        """Take one line of output (without its newline)."""

    def finish(self) -> Usage:
        """What the lines said."""


class Transcript:
    """One turn's output: redacted, written to ``path``, inlined up to a budget, parsed by lines."""

    def __init__(
        self,
        path: Path,
        *,
        shown_as: str,
        emit: Callable[[str], None],
        redact: Redactor,
        parser: LineParser | None = None,
        inline: int = INLINE_CHARS,
    ) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)  # the run's agent folder: changeup's to make
        self.path = path
        self.shown_as = shown_as  # the path as the log names it (relative to the run folder)
        self.chars = 0
        self.truncated = False
        self._emit = emit
        self._stream = RedactedStream(redact)
        self._parser = parser
        self._budget = inline
        self._line = ""  # redacted text of the current line, for the parser
        self._closed = False
        self._file: TextIO | None = None
        try:  # a new file in place: never written through what the agent left at its name
            binary = AgentFolder(path.parent).create(path.name)
        except OSError as error:
            emit(f"[changeup could not write the transcript {shown_as}: {error}]\n")
        else:
            self._file = io.TextIOWrapper(binary, encoding="utf-8", newline="")

    def write(self, chunk: str) -> None:
        """Take a chunk of output as it arrives."""
        self._out(self._stream.feed(chunk))

    def close(self) -> None:
        """Write what is left; the parser gets the last line even without its newline."""
        if self._closed:
            return
        self._out(self._stream.flush())
        if self._line and self._parser is not None:
            self._parser.feed(self._line)
        self._line = ""
        self._closed = True
        if self._file is not None:
            self._file.close()

    def usage(self) -> Usage:
        """What the parser made of the output (an empty :class:`Usage` without one)."""
        return self._parser.finish() if self._parser is not None else Usage()

    def _out(self, text: str) -> None:
        if not text:
            return
        if self._file is not None:
            self._file.write(text)
            self._file.flush()
        self.chars += len(text)
        room = self._budget - (self.chars - len(text))
        if room >= len(text):
            self._emit(text)
        elif not self.truncated:
            self.truncated = True
            self._emit(text[: max(room, 0)] + f"\n[… the rest of this turn's output is in {self.shown_as}]\n")
        if self._parser is not None:
            self._line += text
            *lines, self._line = self._line.split("\n")
            for line in lines:
                self._parser.feed(line)


# --- reading loosely typed JSON values -------------------------------------------------------


def json_object(line: str) -> dict[str, Any] | None:
    """The JSON object a line holds, or None if it holds anything else."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is an object, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_int(value: Any) -> int | None:
    """``value`` as an integer if it is a number (not a boolean), else None."""
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def as_number(value: Any) -> float | None:
    """``value`` as a float if it is a number (not a boolean), else None."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def total(values: Iterable[int | None]) -> int | None:
    """The sum of the values present; None if none is."""
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def as_text(value: Any) -> str | None:
    """``value`` stripped, if it is a string with something in it, else None."""
    return value.strip() if isinstance(value, str) and value.strip() else None

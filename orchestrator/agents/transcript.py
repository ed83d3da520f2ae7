"""Agent transcripts: each turn's output kept beside the log, secrets redacted, parsed where structured.

A :class:`Transcript` receives one turn's output as it arrives. It redacts the values of
secret environment variables (API keys, tokens), writes it to a new file in the run's
``agent/`` folder (never through what the agent left at its name; up to :data:`TRANSCRIPT_CHARS`),
passes the first :data:`INLINE_CHARS` characters on as ``agent.output`` records (and then one line
naming the file), and feeds complete lines (up to :data:`LINE_CHARS`) to a parser. An adapter with
no transcript file bounds what it logs the same way (:class:`InlineBudget`): an agent's output never
grows the log or changeup's memory past these bounds, however much it prints.

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
    "LINE_CHARS",
    "TRANSCRIPT_CHARS",
    "InlineBudget",
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
#: How much of one turn's output its transcript file keeps (characters: 4 bytes each at most).
TRANSCRIPT_CHARS = 64 * 1024 * 1024
#: The longest line a parser is given; a longer one (no JSON a CLI reports usage in) is passed over.
LINE_CHARS = 16 * 1024 * 1024


class InlineBudget:
    """What of a turn's output goes into the log: its first ``budget`` characters, then one note."""

    def __init__(self, budget: int = INLINE_CHARS) -> None:
        self.budget = budget
        self.chars = 0  #: characters offered so far, logged or not

    @property
    def over(self) -> bool:
        """Whether some of the output was left out."""
        return self.chars > self.budget

    def take(self, text: str) -> str:
        """The part of ``text`` that still fits."""
        room = self.budget - self.chars
        self.chars += len(text)
        return text if room >= len(text) else text[: max(room, 0)]

    def note(self) -> str:
        """The line that says what was left out, once the output is over (``""`` if nothing was)."""
        if not self.over:
            return ""
        left = self.chars - self.budget
        return f"\n[… {left:,} more characters of this turn's output were left out of the log]\n"


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
        self._emit = emit
        self._stream = RedactedStream(redact)
        self._parser = parser
        self._inline = InlineBudget(inline)
        self._kept = InlineBudget(TRANSCRIPT_CHARS)  # what the file keeps
        self._line = ""  # redacted text of the current line, for the parser
        self._long = False  # the current line is over LINE_CHARS: it is not parsed
        self._closed = False
        self._file: TextIO | None = None
        try:  # a new file in place: never written through what the agent left at its name
            binary = AgentFolder(path.parent).create(path.name)
        except OSError as error:
            emit(f"[changeup could not write the transcript {shown_as}: {error}]\n")
        else:
            self._file = io.TextIOWrapper(binary, encoding="utf-8", newline="")

    @property
    def chars(self) -> int:
        """Characters of output so far (redacted)."""
        return self._inline.chars

    @property
    def truncated(self) -> bool:
        """Whether the log holds only the start of the output."""
        return self._inline.over

    def write(self, chunk: str) -> None:
        """Take a chunk of output as it arrives."""
        self._out(self._stream.feed(chunk))

    def close(self) -> None:
        """Write what is left; the parser gets the last line even without its newline."""
        if self._closed:
            return
        self._out(self._stream.flush())
        if self._line and self._parser is not None and not self._long:
            self._parser.feed(self._line)
        self._line = ""
        self._closed = True
        if self._file is None:
            return
        if self._kept.over:
            self._file.write(
                f"\n[… {self._kept.chars - self._kept.budget:,} more characters were not kept]\n"
            )
        self._file.close()

    def usage(self) -> Usage:
        """What the parser made of the output (an empty :class:`Usage` without one)."""
        return self._parser.finish() if self._parser is not None else Usage()

    def _out(self, text: str) -> None:
        if not text:
            return
        kept = self._kept.take(text)
        if kept and self._file is not None:
            self._file.write(kept)
            self._file.flush()
        was_over = self._inline.over
        inline = self._inline.take(text)
        if not self._inline.over:
            self._emit(inline)
        elif not was_over:
            self._emit(inline + f"\n[… the rest of this turn's output is in {self.shown_as}]\n")
        if self._parser is not None:
            self._parse(text)

    def _parse(self, text: str) -> None:
        """Feed the parser the complete lines of ``text``, none longer than :data:`LINE_CHARS`."""
        *lines, rest = text.split("\n")
        for line in lines:
            if not self._long and len(self._line) + len(line) <= LINE_CHARS:
                self._parser.feed(self._line + line)  # type: ignore[union-attr]
            self._line, self._long = "", False
        if not self._long:
            self._line += rest
            if len(self._line) > LINE_CHARS:
                self._line, self._long = "", True


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

"""The session's append-only event log, ``events.jsonl`` (format documented in docs/event-log.md).

Line 1 is a header; every later line is one JSON object with ``seq``, ``t`` and ``kind``.
Each append goes to the file in a single ``write`` on an ``O_APPEND`` descriptor, so a crash
can tear at most the last line, and that torn tail is cut off when the log is opened again
(the one journal of :mod:`orchestrator.log.journal`).
Lines are pushed to the disk (``fsync``) at every engine decision.

A line is JSON as ``json.dumps`` writes it with non-ASCII text as it is, except that the
characters a terminal or viewer would act on (:data:`triggers.bounds.UNSEEN`: C1 controls,
bidi overrides, ...) are ``\\u``-escaped as the C0 ones are: printing the log is inert.

Records go in typed (``to_record()``) and come out typed: :func:`read_log` gives each line as
an :class:`~orchestrator.log.records.Entry`. On the way, every record of a known kind is
checked against its shape (:mod:`orchestrator.log.shapes`); a record that does not fit is
an error naming its line, its kind and the field. :class:`LogReader` streams the checked JSON
objects themselves, for replay (which decodes only what the engine reads) and for tools that
check the format.
"""

from __future__ import annotations

import collections
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from json.scanner import make_scanner
from pathlib import Path
from typing import Any, TextIO

from orchestrator.log.journal import Appender, JournalError, repair
from orchestrator.log.records import Entry, Record, decode_entry
from orchestrator.log.shapes import CHECKS, checker, explain
from triggers import RecordError
from triggers.bounds import UNSEEN

__all__ = [
    "FORMAT",
    "VERSION",
    "EventLog",
    "EventLogError",
    "LogContents",
    "LogReader",
    "read_log",
]

FORMAT = "changeup-events"
VERSION = 2
#: What is written as a ``\u`` escape: the characters a terminal acts on (``UNSEEN``), and lone
#: surrogates, how :func:`os.fsdecode` gives a file name's bytes that are not UTF-8 (``\udcff``
#: reads back as the same string).
_UNSEEN = re.compile(f"[{UNSEEN}\ud800-\udfff]")


class EventLogError(Exception):
    """A log that cannot be read as this format and version; the message says where."""


@dataclass(frozen=True, slots=True)
class LogContents:
    """A log read back: its header, its entries, and whether a torn last line was dropped."""

    header: dict[str, Any]
    entries: list[Entry]
    torn: bool = False

    @property
    def elapsed(self) -> float:
        """The time of the last entry (0 for none)."""
        return self.entries[-1].t if self.entries else 0.0


class EventLog:
    """Appends records to ``events.jsonl``; one ``write`` per append, of one or more lines."""

    def __init__(self, path: Path, out: Appender, seq: int, t: float = 0.0) -> None:
        self.path = path
        self._out = out
        self._seq = seq
        self.last_t = t  #: the time of the last record appended

    @classmethod
    def create(cls, path: Path, header: dict[str, Any]) -> EventLog:
        """Start a new log at ``path`` with ``header`` (``format`` and ``version`` are added)."""
        log = cls(path, Appender.create(path), 0)
        log._write({"format": FORMAT, "version": VERSION, **header})
        log.sync()
        return log

    @classmethod
    def reopen(cls, path: Path) -> EventLog:
        """Open an existing log for appending, after cutting off a torn last line."""
        try:
            repair(path)
        except JournalError as error:
            raise EventLogError(str(error)) from None
        last = collections.deque(LogReader(path), maxlen=1)
        seq, t = (last[0]["seq"], last[0]["t"]) if last else (0, 0.0)
        return cls(path, Appender.open(path), int(seq), float(t))

    @property
    def seq(self) -> int:
        """The sequence number of the last record appended."""
        return self._seq

    def append(self, record: Record, t: float, *, sync: bool = False) -> int:
        """Append ``record`` at time ``t``; returns its ``seq``."""
        return self.append_all([record], t, sync=sync)

    def append_all(self, records: Sequence[Record], t: float, *, sync: bool = False) -> int:
        """Append ``records`` at time ``t`` in one write (all or none survive a kill); returns
        the ``seq`` of the first."""
        first = self._seq + 1
        # t is written exactly (repr round-trips), so a replay feeds the engine the same time.
        lines = []
        for record in records:
            self._seq += 1
            line = {"seq": self._seq, "t": t}
            line.update(record.to_record())
            line["t"] = t
            lines.append(line)
        self.last_t = t
        self._write(*lines)
        if sync:
            self.sync()
        return first

    def sync(self) -> None:
        """Push everything appended so far to the disk."""
        self._out.sync()

    def close(self) -> None:
        """Sync and close; appending afterwards is an error."""
        self._out.close()

    def _write(self, *objs: dict[str, Any]) -> None:
        text = "".join(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n" for obj in objs)
        self._out.write(_UNSEEN.sub(_escaped, text).encode("utf-8"))


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


class LogReader:
    """A log opened for streaming: its header is read and checked at once, its records each
    time it is iterated (only then is the file open), so memory does not grow with the log.

    ``torn`` says whether the last line is cut off (its records leave that line out): known
    on opening, and brought up to date when the records are read to the end, as a live log
    grows meanwhile.
    """

    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise EventLogError(f"{path}: no event log here")
        self.path = path
        with _open(path) as handle:
            try:
                first = handle.readline()
            except UnicodeDecodeError:
                raise EventLogError(f"{path}:1: not UTF-8 text") from None
            if not first:
                raise EventLogError(f"{path}: empty log (no header line)")
            if not first.endswith("\n"):
                raise EventLogError(f"{path}:1: the header line is torn; nothing was recorded")
            self.header = _check_header(path, _parsed(path, 1, first))
            handle.buffer.seek(-1, os.SEEK_END)
            self.torn = handle.buffer.read(1) != b"\n"

    def __iter__(self) -> Iterator[dict[str, Any]]:
        # The common line at C speed, in one go: the decoder's scanner takes it whole (without
        # json.loads' whitespace handling around it, or raw_decode's frame in Python), its seq
        # is an integer and its kind one with a shape that it fits. Any other line (torn,
        # padded, not JSON, of an unknown kind, misfit) goes to _record_at, which reads it as
        # json.loads would, or says what is wrong.
        scan = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # typeshed: the decoder's settings
        checks, path = CHECKS, self.path
        number = 1
        with _open(path) as handle:
            try:
                handle.readline()  # the header, checked on opening
                for number, raw in enumerate(handle, 2):
                    try:
                        obj, end = scan(raw, 0)
                        fits = (
                            end == len(raw) - 1
                            and type(obj["seq"]) is int
                            and checks[obj["kind"]](obj) is None
                        )
                    except (StopIteration, ValueError, LookupError, TypeError):  # StopIteration: not JSON
                        fits = False
                    if not fits:
                        obj = _record_at(path, number, raw)
                        if obj is None:
                            self.torn = True
                            return
                    yield obj
            except UnicodeDecodeError:
                raise EventLogError(f"{path}:{number + 1}: not UTF-8 text") from None
        self.torn = False


def _record_at(path: Path, number: int, raw: str) -> dict[str, Any] | None:
    """Line ``number`` read with every check spelled out: its record, None if it is a torn
    (unterminated) last line, or an error naming the line and what is wrong."""
    if raw[-1:] != "\n":
        return None
    obj = _parsed(path, number, raw)
    kind = obj.get("kind")
    if type(kind) is not str or type(obj.get("seq")) is not int:
        raise EventLogError(f"{path}:{number}: a record needs 'seq' and 'kind'")
    problem = checker(kind)(obj)
    if problem is not None:
        raise EventLogError(f"{path}:{number}: {explain(kind, problem)}")
    return obj


def _open(path: Path) -> TextIO:
    # Text mode: json.loads on str skips the encoding sniffing it does for bytes.
    return path.open("r", encoding="utf-8", newline="\n")


def _parsed(path: Path, number: int, raw: str) -> dict[str, Any]:
    """Line ``number`` of the log as a JSON object, or an error naming the line."""
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as error:
        raise EventLogError(f"{path}:{number}: not a JSON line ({error})") from None
    if not isinstance(obj, dict):
        raise EventLogError(f"{path}:{number}: expected a JSON object")
    return obj


def read_log(path: Path) -> LogContents:
    """Read a whole log as typed entries; a torn last line is dropped (``torn``), any other
    fault is an error naming its line."""
    reader = LogReader(path)
    entries = []
    for raw in reader:
        try:
            entries.append(decode_entry(raw))
        except RecordError as error:  # fits its shape, yet does not decode: say where
            raise EventLogError(f"{path}: seq {raw['seq']}: {error}") from None
    return LogContents(reader.header, entries, reader.torn)


def _check_header(path: Path, obj: dict[str, Any]) -> dict[str, Any]:
    if obj.get("format") != FORMAT:
        raise EventLogError(f"{path}:1: not a changeup event log (format {obj.get('format')!r})")
    version = obj.get("version")
    if version != VERSION:
        older = isinstance(version, int) and version < VERSION
        hint = "written by an older changeup" if older else "not one this changeup knows"
        raise EventLogError(
            f"{path}:1: event log version {version!r}; this changeup reads version {VERSION} ({hint})"
        )
    return obj

"""The session's append-only event log, ``events.jsonl`` (format documented in docs/event-log.md).

Line 1 is a header; every later line is one JSON object with ``seq``, ``t`` and ``kind``.
Each line goes to the file in a single ``write`` on an ``O_APPEND`` descriptor, so a crash
can tear at most the last line, and that torn tail is cut off when the log is opened again.
Lines are pushed to the disk (``fsync``) at every engine decision.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["FORMAT", "VERSION", "EventLog", "EventLogError", "LogContents", "LogReader", "read_log", "repair"]

FORMAT = "changeup-events"
VERSION = 2


class EventLogError(Exception):
    """A log that cannot be read as this format and version; the message says where."""


@dataclass(frozen=True, slots=True)
class LogContents:
    """A log read back: its header, its records, and whether a torn last line was dropped."""

    header: dict[str, Any]
    records: list[dict[str, Any]]
    torn: bool = False


class EventLog:
    """Appends records to ``events.jsonl``; one ``write`` per line."""

    def __init__(self, path: Path, fd: int, seq: int, t: float = 0.0) -> None:
        self.path = path
        self._fd = fd
        self._seq = seq
        self.last_t = t  #: the time of the last record appended

    @classmethod
    def create(cls, path: Path, header: dict[str, Any]) -> EventLog:
        """Start a new log at ``path`` with ``header`` (``format`` and ``version`` are added)."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        log = cls(path, fd, 0)
        log._write({"format": FORMAT, "version": VERSION, **header})
        log.sync()
        return log

    @classmethod
    def reopen(cls, path: Path) -> EventLog:
        """Open an existing log for appending, after cutting off a torn last line."""
        repair(path)
        contents = read_log(path)
        last: dict[str, Any] = contents.records[-1] if contents.records else {"seq": 0, "t": 0.0}
        return cls(path, os.open(path, os.O_WRONLY | os.O_APPEND), int(last["seq"]), float(last["t"]))

    @property
    def seq(self) -> int:
        """The sequence number of the last record appended."""
        return self._seq

    def append(self, record: dict[str, Any], t: float, *, sync: bool = False) -> int:
        """Append ``record`` (which has ``kind``) at time ``t``; returns its ``seq``."""
        self._seq += 1
        # t is written exactly (repr round-trips), so a replay feeds the engine the same time.
        self.last_t = t
        line = {"seq": self._seq, "t": t}
        line.update(record)
        line["t"] = t
        self._write(line)
        if sync:
            self.sync()
        return self._seq

    def sync(self) -> None:
        """Push everything appended so far to the disk."""
        os.fsync(self._fd)

    def close(self) -> None:
        """Sync and close; appending afterwards is an error."""
        if self._fd >= 0:
            self.sync()
            os.close(self._fd)
            self._fd = -1

    def _write(self, obj: dict[str, Any]) -> None:
        line = json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
        data = line.encode("utf-8")
        written = os.write(self._fd, data)
        if written != len(data):  # a full disk: the torn tail is repaired on the next open
            raise OSError(f"short write to {self.path}: {written} of {len(data)} bytes")


def repair(path: Path) -> bool:
    """Cut a torn (unterminated) last line off the log; True if something was cut."""
    with path.open("rb+") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        if size == 0:
            return False
        handle.seek(max(0, size - 65536))
        tail = handle.read()
        if tail.endswith(b"\n"):
            return False
        cut = tail.rfind(b"\n")
        keep = size - len(tail) + cut + 1 if cut >= 0 else 0
        if keep == 0 and size > 65536:
            raise EventLogError(f"{path}: no line break in the last 64 KiB; refusing to cut")
        handle.truncate(keep)
        return True


class LogReader:
    """Streams a log's records; the header is checked on opening, ``torn`` is known at the end."""

    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise EventLogError(f"{path}: no event log here")
        self.path = path
        self.torn = False
        # Text mode: json.loads on str skips the encoding sniffing it does for bytes.
        self._handle = path.open("r", encoding="utf-8", newline="\n")
        try:
            first = self._handle.readline()
        except UnicodeDecodeError:
            self._handle.close()
            raise EventLogError(f"{path}:1: not UTF-8 text") from None
        if not first:
            self._handle.close()
            raise EventLogError(f"{path}: empty log (no header line)")
        if not first.endswith("\n"):
            self._handle.close()
            raise EventLogError(f"{path}:1: the header line is torn; nothing was recorded")
        try:
            self.header = _check_header(path, self._object(1, first))
        except EventLogError:
            self._handle.close()
            raise

    def _object(self, number: int, raw: str) -> dict[str, Any]:
        try:
            obj = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            self._handle.close()
            raise EventLogError(f"{self.path}:{number}: not a JSON line ({error})") from None
        if not isinstance(obj, dict):
            self._handle.close()
            raise EventLogError(f"{self.path}:{number}: expected a JSON object")
        return obj

    def __iter__(self) -> Iterator[dict[str, Any]]:
        # raw_decode parses a line without json.loads' whitespace handling around it; a line
        # it does not take whole (whitespace, a second value, not JSON) goes to json.loads,
        # which accepts or rejects it exactly as it would any line.
        scan = json.JSONDecoder().raw_decode
        number = 1
        with self._handle:
            try:
                for raw in self._handle:
                    number += 1
                    if raw[-1:] != "\n":
                        self.torn = True
                        return
                    try:
                        obj, end = scan(raw)
                    except ValueError:
                        obj, end = None, 0
                    if end != len(raw) - 1 or type(obj) is not dict:
                        obj = self._object(number, raw)
                    if type(obj.get("kind")) is not str or type(obj.get("seq")) is not int:
                        raise EventLogError(f"{self.path}:{number}: a record needs 'seq' and 'kind'")
                    yield obj
            except UnicodeDecodeError:
                raise EventLogError(f"{self.path}:{number + 1}: not UTF-8 text") from None


def read_log(path: Path) -> LogContents:
    """Read a whole log; a torn last line is dropped (``torn``), any other fault is an error."""
    reader = LogReader(path)
    records = list(reader)
    return LogContents(reader.header, records, reader.torn)


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

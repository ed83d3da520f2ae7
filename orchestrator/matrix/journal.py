"""An append-only JSON-lines file: a header line, then one record a line, each flushed to disk.

The matrix keeps two: ``attempts.jsonl`` (every attempt of every cell) and ``reviews.jsonl``
(every review decision). Nothing in either is ever rewritten or erased. One ``write`` per
line, fsynced before :meth:`Journal.append` returns, so a record a caller was told about
survives a kill; a torn last line (the process died inside a write) is cut when the file is
opened. Writing and repair are the event log's own (:mod:`orchestrator.log.journal`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from orchestrator.log.journal import Appender, JournalError, repair, whole_lines

__all__ = ["Journal"]


class Journal:
    """One append-only JSON-lines file, opened for appending."""

    def __init__(self, path: Path, fmt: str, version: int, *, writer: bool = True) -> None:
        """Open (a ``writer`` creates it, and cuts a torn last line; a reader, which may read
        while a writer appends, only leaves that line out)."""
        self.path = path
        self.format = fmt
        self.version = version
        self.writer = writer
        self.records: list[dict[str, Any]] = []
        if path.exists():
            self.records = self._read()
        elif writer:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._write({"format": fmt, "version": version})

    def append(self, record: dict[str, Any]) -> None:
        """Write ``record`` as one line and wait until it is on disk."""
        if not self.writer:
            raise RuntimeError(f"{self.path} was opened for reading")
        self._write(record)
        self.records.append(record)

    def _write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
        with Appender.open(self.path) as out:  # closing syncs it
            out.write(line.encode("utf-8"))

    def _read(self) -> list[dict[str, Any]]:
        # A torn last line: its writer died inside the write (or, to a reader, is still in it),
        # so nobody was told of it. A writer cuts it; a reader leaves it out.
        if self.writer:
            repair(self.path)
        lines = whole_lines(self.path.read_bytes()).decode("utf-8").splitlines()
        if not lines:  # killed before its header was on disk: nothing was ever recorded
            if self.writer:
                self._write({"format": self.format, "version": self.version})
            return []
        header = self._decode(lines[0], 1)
        if header.get("format") != self.format:
            raise JournalError(
                f"{self.path}:1: not a {self.format} file (its header says {header.get('format')!r})"
            )
        if header.get("version") != self.version:
            raise JournalError(
                f"{self.path}:1: version {header.get('version')!r}; this changeup reads {self.version}"
            )
        return [self._decode(line, number) for number, line in enumerate(lines[1:], 2)]

    def _decode(self, line: str, number: int) -> dict[str, Any]:
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise JournalError(f"{self.path}:{number}: not JSON ({error.msg})") from None
        if not isinstance(record, dict):
            raise JournalError(f"{self.path}:{number}: expected an object, found {type(record).__name__}")
        return record

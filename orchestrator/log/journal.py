"""The one append-only journal: a file of whole lines, each append one ``write``, never rewritten.

Both of changeup's JSON-lines files go through it: a session's event log (``eventlog.py``) and
a matrix's ``attempts.jsonl`` and ``reviews.jsonl`` (``matrix/journal.py``). Each encodes its
own lines; here is what they share:

- every append is a single ``write`` on an ``O_APPEND`` descriptor, of one or more whole lines,
  so a kill can tear at most the last line, and never separates lines written together;
- :meth:`Appender.sync` pushes what was appended to the disk (``fsync``);
- :func:`repair`, before a file is appended to again, cuts a torn last line: its writer died
  inside the write, so nobody was told of it.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType

__all__ = ["Appender", "JournalError", "repair", "whole_lines"]

#: How far back :func:`repair` looks for the end of the last whole line.
_TAIL = 65536


class JournalError(ValueError):
    """A journal that cannot be read or repaired as one: the message names the file and problem."""


class Appender:
    """An append-only file, open for appending whole lines."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd

    @classmethod
    def create(cls, path: Path) -> Appender:
        """Start a new file at ``path`` (an error if there is one)."""
        return cls(path, os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644))

    @classmethod
    def open(cls, path: Path) -> Appender:
        """Open ``path`` for appending, making it if there is none (repair it first: :func:`repair`)."""
        return cls(path, os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644))

    def write(self, data: bytes) -> None:
        """Append ``data``, whole lines, in one ``write``."""
        written = os.write(self._fd, data)
        if written != len(data):  # a full disk: the torn tail is repaired on the next open
            raise OSError(f"short write to {self.path}: {written} of {len(data)} bytes")

    def sync(self) -> None:
        """Push everything appended so far to the disk."""
        os.fsync(self._fd)

    def close(self) -> None:
        """Sync and close; appending afterwards is an error."""
        if self._fd >= 0:
            self.sync()
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Appender:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


def repair(path: Path) -> bool:
    """Cut a torn (unterminated) last line off the file at ``path``; True if something was cut.

    Only the last 64 KiB are read: a file whose last 64 KiB hold no line break is refused, not
    cut, as no whole line of changeup's is that long."""
    with path.open("rb+") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        if size == 0:
            return False
        handle.seek(max(0, size - _TAIL))
        tail = handle.read()
        if tail.endswith(b"\n"):
            return False
        cut = tail.rfind(b"\n")
        keep = size - len(tail) + cut + 1 if cut >= 0 else 0
        if keep == 0 and size > _TAIL:
            raise JournalError(f"{path}: no line break in the last 64 KiB; refusing to cut")
        handle.truncate(keep)
        return True


def whole_lines(data: bytes) -> bytes:
    """``data`` read from a journal without its torn last line, if it has one (for a reader, which
    may read while a writer appends, and never repairs)."""
    return data if data.endswith(b"\n") else data[: data.rfind(b"\n") + 1]

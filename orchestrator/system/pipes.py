"""A pipe a child writes its result into, read by changeup alone: no file to replace or rewrite.

A file in a folder a child can write can be written by anything that runs there, at any time:
also after the tool that was meant to write it has written it. A :class:`ResultPipe` gives the
child only the write end of a pipe, named by a path (``/dev/fd/N``, which tools that take a
file name open as one); changeup holds the read end and reads what arrives, bounded, while the
child runs and until the last write end is closed. What was written is a stream: a second
writer's bytes come before or after the first's, never instead of them.

Opening ``/dev/fd/N`` opens the pipe again, and Linux checks the pipe's mode then: the pipe is
made writable by anyone and readable by no one (mode 0222, its owner changeup's user). So a
child that runs as another user (the sandbox's test user) can write it, and no child can open
it for reading, to take what the runner wrote before changeup reads it; only the owner could
change the mode, and with changeup running as root that is no child.
"""

from __future__ import annotations

import contextlib
import os
from types import TracebackType

import anyio

__all__ = ["ResultPipe"]

#: How long the read end waits for the last writer once the child is gone (its tree is killed
#: first, so only a straggler still holding the write end is waited for).
DRAIN = 1.0


class ResultPipe:
    """A pipe whose write end a child inherits (:attr:`fd`, named :attr:`path`) and whose read
    end changeup reads up to ``limit`` bytes (the rest is counted, not kept)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._read, self.fd = os.pipe()
        os.set_blocking(self._read, False)
        os.fchmod(self.fd, 0o222)  # write-only, for whoever the child runs as
        self._data = bytearray()
        self.size = 0  #: bytes written to the pipe, kept or not
        self._done = anyio.Event()

    @property
    def path(self) -> str:
        """The write end as a path the child opens (``/dev/fd/N``)."""
        return f"/dev/fd/{self.fd}"

    @property
    def over(self) -> bool:
        """Whether more than ``limit`` bytes were written."""
        return self.size > self.limit

    @property
    def data(self) -> bytes:
        """What was written, up to ``limit`` bytes."""
        return bytes(self._data)

    async def read(self) -> None:
        """Read until every write end is closed (run it in a task beside the child)."""
        try:
            while True:
                await anyio.wait_readable(self._read)
                try:
                    chunk = os.read(self._read, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    return
                room = self.limit - len(self._data)
                if room > 0:
                    self._data += chunk[:room]
                self.size += len(chunk)
        finally:
            self._done.set()

    async def close_writer(self) -> None:
        """Close changeup's copy of the write end (the child has its own) and wait, a little, for
        the reading to reach the end."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        with anyio.move_on_after(DRAIN):
            await self._done.wait()

    async def __aenter__(self) -> ResultPipe:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        for fd in (self.fd, self._read):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.fd = self._read = -1

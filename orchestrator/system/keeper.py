"""A keeper: a small process that empties and removes control groups once the process that made
them is gone, however it went (``SIGKILL`` included), with nobody calling that process again.

A frozen group must not outlive its owner: its processes cannot run, and on cgroup v1 they cannot
even die (a SIGKILL waits for a thaw). :meth:`Keeper.start` starts ``keeper_program.py`` as a
new Python (``-I -S``: the standard library only) in a session of its own, outside the groups it
keeps, its standard input the read end of a pipe whose write end only this process holds (not
inheritable: a program this process starts never has it). End of file on that pipe comes when
this process closes it (:meth:`Keeper.close`) or dies; then the keeper thaws the groups, kills
every process in them and removes them (``keeper_program.py`` says how). A group removed before
that is nothing to it.

The mechanism only: which groups to keep, and what a keeper that died means, is the caller's.
Its cost: a Python of the standard library, started once (tens of milliseconds, off any
session's path) and waiting in a blocking read (a few MB of memory, no CPU).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["PROGRAM", "Keeper", "KeeperError"]

PROGRAM = Path(__file__).with_name("keeper_program.py")
#: How long the keeper may take to empty its groups once its owner is gone.
TIMEOUT = 30.0
#: How long :meth:`Keeper.close` waits for the keeper to end (it has nothing left to do by then).
CLOSING = 2.0


class KeeperError(OSError):
    """A keeper could not be started; the message says why."""


class Keeper:
    """A running keeper of some control group folders (one per hierarchy)."""

    def __init__(self, process: subprocess.Popen[bytes], pipe: int, folders: Sequence[Path]) -> None:
        self.process = process
        self.folders = tuple(folders)
        self._pipe = pipe  # the write end: this process's only, never written to

    @classmethod
    def start(cls, folders: Sequence[Path], *, timeout: float = TIMEOUT) -> Keeper:
        """A keeper of ``folders``: once this process is gone, it empties and removes each of them."""
        listen, pipe = os.pipe()  # both ends close on exec: no program this process starts holds them
        command = [sys.executable, "-I", "-S", str(PROGRAM), str(os.getpid()), str(timeout)]
        try:
            process = subprocess.Popen(
                [*command, *map(str, folders)],
                stdin=listen,
                stdout=subprocess.DEVNULL,
                start_new_session=True,  # a signal to this process's group is not for it
                close_fds=True,
            )
        except OSError as error:
            os.close(pipe)
            raise KeeperError(error.errno, f"cannot start a keeper ({PROGRAM}): {error.strerror}") from None
        finally:
            os.close(listen)
        return cls(process, pipe, folders)

    @property
    def alive(self) -> bool:
        """Whether the keeper is still there to act when this process goes."""
        return self.process.poll() is None

    def close(self) -> None:
        """Let the keeper go (it empties what is left of its groups first); wait a moment for it."""
        if self._pipe >= 0:
            os.close(self._pipe)
            self._pipe = -1
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(CLOSING)

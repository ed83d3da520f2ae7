"""Child processes: their own process group, a time limit, bounded output, and no survivors.

Everything changeup starts (hidden test runs, agent commands, judges) goes through
:func:`run_process_group`, but the warm interpreter (``warm.py``), which lives as long as its
session and is stopped by :func:`stop` too. The process leads a new session; its output is streamed to a
callback while only the last ``keep`` bytes are retained. The run is over when *the process*
exits, not when its output closes: a child that keeps the pipe open is killed with the rest.
On a time-out, a cancellation or the process's end, :func:`stop` ends its whole tree:

- inside bubblewrap, the sandbox's PID namespace dies with it (``--die-with-parent``);
- elsewhere the command runs under the reaper (``reaper.py``, see :func:`reaped`), a child
  subreaper that kills everything below it, ``setsid`` children included, when told to.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.abc import Process

__all__ = ["Finished", "alive", "reaped", "run_process_group", "stop"]

REAPER = Path(__file__).with_name("reaper.py")
#: How long a stopped tree gets to go (the reaper kills what is below it) before SIGKILL.
GRACE = 2.0
#: How long output may keep coming once the process has exited (its children are killed first).
DRAIN = 1.0


@dataclass(frozen=True, slots=True)
class Finished:
    """How a process ended: its exit code (None if killed), output tail, and whether it timed out;
    ``filled``: its size-limited mounts it left full (where its sandbox can tell)."""

    returncode: int | None
    output: str
    timed_out: bool
    truncated: bool
    filled: tuple[str, ...] = ()


def reaped(argv: Sequence[str], *, pids: int | None = None) -> list[str]:
    """``argv`` under the reaper: its whole tree dies with it (``pids``: a cgroup limit, as root)."""
    limit = ["--pids", str(pids)] if pids else []
    return [sys.executable, "-I", "-S", str(REAPER), *limit, "--", *argv]


def _signal_group(process: Process, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


async def stop(process: Process) -> None:
    """End ``process`` and everything it started: SIGTERM to its group, then SIGKILL after a grace."""
    if process.returncode is None:
        _signal_group(process, signal.SIGTERM)
        with anyio.move_on_after(GRACE), anyio.CancelScope(shield=True):
            await process.wait()
    _signal_group(process, signal.SIGKILL)  # what is left of its group


async def run_process_group(
    command: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float | None,
    stdin: bytes | None = None,
    keep: int = 65536,
    on_output: Callable[[str], None] | None = None,
    pass_fds: Sequence[int] = (),
) -> Finished:
    """Run ``command`` to its exit or ``timeout``; cancellation stops its tree too. ``pass_fds``
    are descriptors it inherits (a result pipe's write end, an isolated run's socket to its
    workspace host)."""
    tail = bytearray()
    truncated = False
    # A character may be split between two reads: decode incrementally, not chunk by chunk.
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    process = await anyio.open_process(
        list(command),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        pass_fds=pass_fds,
    )
    drained = anyio.Event()

    async def read() -> None:
        nonlocal tail, truncated
        assert process.stdout is not None
        try:
            async for chunk in process.stdout:
                tail += chunk
                if len(tail) > keep:
                    del tail[: len(tail) - keep]
                    truncated = True
                if on_output is not None:
                    text = decoder.decode(chunk)
                    if text:
                        on_output(text)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        drained.set()

    async def feed() -> None:
        if stdin is not None and process.stdin is not None:
            try:
                await process.stdin.send(stdin)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass  # it did not read its input; that is its business
            finally:
                await process.stdin.aclose()

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(read)
            group.start_soon(feed)
            with anyio.move_on_after(timeout if timeout is not None else float("inf")) as scope:
                await process.wait()
            await stop(process)  # whatever it left behind goes with it
            with anyio.move_on_after(DRAIN):
                await drained.wait()
            group.cancel_scope.cancel()
        timed_out = scope.cancelled_caught
    finally:
        with anyio.CancelScope(shield=True):
            await stop(process)
            await process.aclose()  # waits, and closes the pipes
    tail_text = tail.decode("utf-8", "replace")
    return Finished(None if timed_out else process.returncode, tail_text, timed_out, truncated)


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (one of another user's counts: it may not be signalled)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

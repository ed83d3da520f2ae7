"""Child processes in their own process group, with a time limit and bounded output.

Everything changeup starts (hidden test runs, agent commands) goes through
:func:`run_process_group`: the process leads a new session, so on a time-out or a
cancellation the whole group — including anything it forked — is killed, and its output is
streamed to a callback while only the last ``keep`` bytes are retained.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.abc import Process

__all__ = ["Finished", "kill_group", "run_process_group"]


@dataclass(frozen=True, slots=True)
class Finished:
    """How a process ended: its exit code (None if killed), output tail, and whether it timed out."""

    returncode: int | None
    output: str
    timed_out: bool
    truncated: bool


def kill_group(process: Process) -> None:
    """SIGKILL the process's whole group; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def run_process_group(
    command: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float | None,
    stdin: bytes | None = None,
    keep: int = 65536,
    on_output: Callable[[str], None] | None = None,
) -> Finished:
    """Run ``command`` to completion or ``timeout``; cancellation kills its group too."""
    tail = bytearray()
    truncated = False
    timed_out = False
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
    )
    try:
        with anyio.move_on_after(timeout if timeout is not None else float("inf")) as scope:
            if stdin is not None and process.stdin is not None:
                try:
                    await process.stdin.send(stdin)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass  # it did not read its input; that is its business
                finally:
                    await process.stdin.aclose()
            assert process.stdout is not None
            async for chunk in process.stdout:
                tail += chunk
                if len(tail) > keep:
                    del tail[: len(tail) - keep]
                    truncated = True
                if on_output is not None:
                    text = decoder.decode(chunk)
                    if text:
                        on_output(text)
            await process.wait()
        timed_out = scope.cancelled_caught
    finally:
        kill_group(process)  # the leader, if still running, and anything it left in its group
        with anyio.CancelScope(shield=True):
            await process.aclose()  # waits, and closes the pipes
    returncode = None if timed_out else process.returncode
    return Finished(returncode, tail.decode("utf-8", "replace"), timed_out, truncated)

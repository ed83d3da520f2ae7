"""The warm interpreter, from outside: started with a session, one request per test run, gone with it.

Under bubblewrap, a session's hidden pytest runs are forks of one clean interpreter that has
already imported pytest (``zygote.py``, in the hidden tests' own sandbox), not fresh
interpreters that each import it again. :class:`WarmInterpreter` is changeup's handle on it:

- :meth:`~WarmInterpreter.start` spawns it when the session starts, off the hot path; the
  first run waits for its ``ready``.
- :meth:`~WarmInterpreter.run` asks for one run and returns how it ended
  (:class:`~orchestrator.system.processes.Finished`, as for a cold run), judged the same way.
- :meth:`~WarmInterpreter.aclose` ends it, and every run with it, when the session ends; if
  changeup itself dies, bubblewrap's ``--die-with-parent`` takes it down.

Whatever goes wrong with it (it will not start, dies, or stops answering) raises
:class:`WarmFailure`: the run is the grader's failure (``invalid``), never a zero for the
agent, and the next run starts a new one. A run that is cancelled is stopped (its whole PID
namespace) before :meth:`~WarmInterpreter.run` returns.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from orchestrator.system.processes import GRACE, Finished, stop

__all__ = ["ZYGOTE", "WarmFailure", "WarmInterpreter"]

#: The warm interpreter's own source (a script run inside the sandbox).
ZYGOTE = Path(__file__).with_name("zygote.py")

#: How long the zygote may take to import pytest and say ready (a loaded machine is slow).
START = 120.0
#: How long past a run's time limit its report may take (the zygote enforces the limit itself).
MARGIN = 30.0
#: The longest report line: a 64 KiB output tail, escaped.
LINE = 1 << 22


class WarmFailure(Exception):
    """The warm interpreter could not run a test run; the message says why."""


class WarmInterpreter:
    """One zygote process, started by ``command`` (``Sandbox.warm``), and its conversation."""

    def __init__(self, command: Sequence[str], *, env: Mapping[str, str], log: Path) -> None:
        self.command = list(command)
        self.env = dict(env)
        self.log = log  # the zygote's own standard error (each run's output is its own)
        self._process: Process | None = None
        self._lines: BufferedByteReceiveStream | None = None
        self._ready = False
        self._runs = 0
        self._lock = anyio.Lock()

    @property
    def served(self) -> int:
        """How many runs it was asked for (by every zygote it started)."""
        return self._runs

    @property
    def pid(self) -> int | None:
        """The process changeup started (bubblewrap), while it runs."""
        return self._process.pid if self._process is not None else None

    async def start(self) -> None:
        """Spawn the zygote; it imports pytest meanwhile, and the first run waits for it."""
        if self._process is not None:
            return
        try:
            with self.log.open("ab") as log:
                self._process = await anyio.open_process(
                    self.command,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    env=self.env,
                    start_new_session=True,
                )
        except OSError as error:
            raise WarmFailure(f"the warm interpreter cannot start: {error}") from None
        assert self._process.stdout is not None
        self._lines = BufferedByteReceiveStream(self._process.stdout)
        self._ready = False

    async def run(
        self,
        folder: str,
        settings: dict[str, Any],
        args: Sequence[str],
        *,
        timeout: float,
        nproc: int | None,
        tmp_mb: int | None = None,
        cgroup: Sequence[str] = (),
    ) -> Finished:
        """Run the bootstrap with ``settings`` and pytest ``args`` on run folder ``folder``, with
        at most ``nproc`` processes of its user (None: not lowered), ``/tmp`` and ``/dev/shm`` of
        ``tmp_mb`` each, in the control group the run's leader joins by writing ``0`` to each file
        of ``cgroup`` (as the zygote sees them: ``Cgroup.join_file``)."""
        async with self._lock:
            await self.start()
            if not self._ready:
                await self._wait_ready()
            self._runs += 1
            number = self._runs
            request = {
                "run": number,
                "folder": folder,
                "settings": settings,
                "args": list(args),
                "timeout": timeout,
                "nproc": nproc,
                "tmp_mb": tmp_mb,
                "cgroup": list(cgroup),
            }
            with anyio.CancelScope(shield=True):  # a request goes whole, or not at all
                await self._send(request)
            try:
                with anyio.fail_after(timeout + MARGIN):
                    report = await self._report(number)
            except TimeoutError:
                await self._end()
                raise WarmFailure(
                    f"the warm interpreter did not report a run within {timeout + MARGIN:g}s"
                ) from None
            except WarmFailure:
                raise
            except BaseException:  # cancelled: the run is stopped before anything reuses its files
                with anyio.CancelScope(shield=True):
                    await self._cancel(number)
                raise
        exit = report.get("exit")
        return Finished(
            exit if isinstance(exit, int) else None,
            str(report.get("output", "")),
            bool(report.get("timed_out")),
            bool(report.get("truncated")),
            tuple(str(place) for place in report.get("filled", ())),
        )

    async def aclose(self) -> None:
        """End the zygote: the end of its input stops every run; then its sandbox goes."""
        with anyio.CancelScope(shield=True):  # a session that is being cancelled ends it too
            async with self._lock:
                await self._end()

    async def _wait_ready(self) -> None:
        try:
            with anyio.fail_after(START):
                line = await self._line()
        except TimeoutError:
            await self._end()
            raise WarmFailure(f"the warm interpreter did not start within {START:g}s") from None
        if "ready" not in line:
            await self._end()
            raise WarmFailure(f"the warm interpreter started with {line!r:.200} instead of ready")
        self._ready = True

    async def _send(self, request: dict[str, Any]) -> None:
        if self._process is None or self._process.stdin is None:
            raise WarmFailure("the warm interpreter is gone")
        try:
            await self._process.stdin.send((json.dumps(request) + "\n").encode())
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            await self._end()
            raise WarmFailure(f"the warm interpreter is gone: {self._log_tail()}") from None

    async def _report(self, number: int) -> dict[str, Any]:
        """The report of run ``number`` (those of runs cancelled before it are passed over)."""
        while True:
            line = await self._line()
            if line.get("run") == number:
                return line

    async def _line(self) -> dict[str, Any]:
        assert self._lines is not None
        try:
            raw = await self._lines.receive_until(b"\n", LINE)
        except (
            anyio.IncompleteRead,
            anyio.EndOfStream,
            anyio.BrokenResourceError,
            anyio.ClosedResourceError,
        ):
            await self._end()
            raise WarmFailure(f"the warm interpreter died: {self._log_tail()}") from None
        except anyio.DelimiterNotFound:
            await self._end()
            raise WarmFailure("the warm interpreter sent a line longer than any report") from None
        try:
            line = json.loads(raw)
        except ValueError:
            line = None
        if not isinstance(line, dict):
            await self._end()
            raise WarmFailure(f"the warm interpreter sent {raw[:200]!r}, not a report")
        return line

    async def _cancel(self, number: int) -> None:
        """Stop run ``number`` and wait until it is gone; if the zygote does not answer, end it."""
        try:
            await self._send({"cancel": number})
            with anyio.fail_after(GRACE * 2):
                await self._report(number)
        except (TimeoutError, WarmFailure):
            await self._end()

    async def _end(self) -> None:
        process, self._process, self._lines, self._ready = self._process, None, None, False
        if process is None:
            return
        with anyio.CancelScope(shield=True):
            if process.stdin is not None:
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    await process.stdin.aclose()
            with anyio.move_on_after(GRACE):
                await process.wait()
            await stop(process)
            await process.aclose()

    def _log_tail(self) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return "(no log)"
        lines = text.strip().splitlines()
        return "\n".join(lines[-12:]) or "(it said nothing)"

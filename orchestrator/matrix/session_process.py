"""One session in a process of its own: how every backend runs a session.

A session process is a child of a fork server (``system/forkserver.py``) that has imported
changeup once: :func:`start_sessions` starts the server (a fork of the driver, which has, or a
new Python under changeup's reaper, ``system/reaper.py``, on a Ray worker), and
:func:`run_session_process` forks a child of it per order, in a session and process group of
its own, gives it the order (``cells.order_to_json``), and waits
for it at most its wall-time limit (:func:`wall_limit`). A fork costs milliseconds where a new
Python and its imports cost half a second. The child (:func:`child`) runs the order as
``changeup run`` would, and tells the parent how far it got, one JSON object a line on its
standard output:

- ``{"folder": PATH}`` once its run folder is made;
- ``{"started": true}`` once the session's loop runs: from then on its agent is in play;
- ``{"error": TEXT}`` when the session raised, just before the child exits non-zero;
- ``{"cpu": SECONDS}`` as it ends: the CPU it used itself (its own children aside).

What it writes on standard error (diagnostics, a traceback) is passed on, line by line, to the
parent's, and kept, its last 64 KiB, to be written to ``session.log`` in its run folder once it
has ended, with a last line that says how it ended. Nothing of a session runs in the parent: a
session that blocks its own event loop, hangs or dies takes no other with it.

How it ended (:class:`SessionEnd`), and what the driver records (``backends.py``):

=============  ===================================================================  =============
status         the child                                                            recorded as
=============  ===================================================================  =============
``ended``      exited 0: its run folder holds its report, whatever its status       the report's
``crashed``    exited otherwise (an exception, a signal) after its agent started    ``crashed``
``timed out``  was still running at its limit, after its agent started: killed      ``timed out``
``failed``     made no run folder, or ended (or was killed) before its agent        ``invalid``
               started
=============  ===================================================================  =============

A session that is killed (at its limit, or because the matrix is stopped) loses its process
group at once (``SIGKILL``); what it started dies with it (bubblewrap's ``--die-with-parent``
for every sandbox, the reaper of each command outside one), and whatever is left over is
adopted and killed by the fork server. Then a ``session.aborted`` record is appended to its
event log, saying why (``crashed`` at the limit, ``invalid`` while it was still setting up,
``interrupted`` when stopped), so the run folder tells what happened. The server and its
children die with changeup (parent-death signals; on a worker, the reaper kills everything
below it too).
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import anyio
from anyio.abc import ByteReceiveStream

from orchestrator.agents import parse_agent
from orchestrator.challenge.loader import load_challenge
from orchestrator.challenge.model import Limits
from orchestrator.gateway.access import GatewaySettings
from orchestrator.gateway.budget import Limits as BudgetLimits
from orchestrator.gateway.prices import PriceTable
from orchestrator.gateway.providers import Upstreams
from orchestrator.grading.agent_sandbox import Share
from orchestrator.log.cells import GatewayOrder, SessionOrder, order_from_json, order_to_json
from orchestrator.log.eventlog import EventLog, EventLogError
from orchestrator.log.records import STOPPED, SessionAborted
from orchestrator.matrix.backends import SessionCrashed, SessionFailed, SessionTimedOut
from orchestrator.run.agent_network import Network, NetworkChoice
from orchestrator.run.logging_config import configure
from orchestrator.run.runs import run_challenge
from orchestrator.scoring.judge import parse_judge
from orchestrator.system.forkserver import ForkServer
from orchestrator.system.processes import DRAIN, reaped

__all__ = [
    "MARGIN",
    "SESSION_LOG",
    "SessionEnd",
    "child",
    "parse_share",
    "run_here",
    "run_session_process",
    "start_sessions",
    "wall_limit",
]

#: Beyond a challenge's session limit, how long its session process may take by default: setting
#: up, the final grading, scoring and the reports (and, on Ray, the start of its worker).
MARGIN = 600.0
#: The file of a run folder that holds the end of what its session process wrote on standard error.
SESSION_LOG = "session.log"
#: How much of the child's standard error is kept.
_KEEP = 65536
#: A line of the child's standard output longer than this is none of its messages.
_LINE = 65536
#: The longest error text a child sends.
_ERROR = 2000
#: What the fork server runs in each child.
_CHILD = "orchestrator.matrix.session_process:child"
#: How long a killed child may take to be reported ended by its server.
_REAPED = 10.0
#: The start of the last line of ``session.log``, which says how the session process ended.
_ENDED = "[changeup] the session process: "

Status = Literal["ended", "crashed", "timed out", "failed"]


def wall_limit(limits: Limits, configured: float | None = None) -> float:
    """How long a session may run, whole: ``configured`` (``backend.session_timeout``), else the
    challenge's session limit and :data:`MARGIN`."""
    return configured if configured is not None else limits.session + MARGIN


@dataclass(frozen=True, slots=True)
class SessionEnd:
    """How a session process ended: its status, its run folder (None if it made none), and why."""

    status: Status
    folder: Path | None
    detail: str

    def settled(self) -> Path:
        """The run folder of a session that ended; else raises what the driver records (``backends.py``)."""
        if self.status == "ended" and self.folder is not None:
            return self.folder
        if self.status == "crashed":
            raise SessionCrashed(self.detail)
        if self.status == "timed out":
            raise SessionTimedOut(self.detail)
        raise SessionFailed(self.detail)


@dataclass(slots=True)
class _Heard:
    """What the child said so far, and the end of its standard error."""

    out: Path
    name: str
    folder: Path | None = None
    started: bool = False
    error: str = ""
    #: The CPU seconds the child used itself (its children aside), once it said so as it ended.
    cpu: float | None = None
    errors: bytearray = field(default_factory=bytearray)

    def take(self, line: bytes) -> None:
        """One line of the child's standard output: a message, or nothing of ours (ignored)."""
        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        folder = message.get("folder")
        # Only a folder this order makes: the parent writes into it.
        made = Path(folder) if isinstance(folder, str) else None
        if made is not None and made.parent == self.out and made.name.startswith(self.name):
            self.folder = made
        self.started = self.started or message.get("started") is True
        if isinstance(message.get("error"), str):
            self.error = message["error"][:_ERROR]
        if isinstance(message.get("cpu"), int | float):
            self.cpu = float(message["cpu"])


def start_sessions(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> ForkServer:
    """The fork server of session processes; end it with :meth:`~ForkServer.close`.

    With no ``cwd`` or ``env`` of their own, the children have this process's, and the server is a
    fork of this process (it has changeup imported already), where it can be one; else, and with
    them, it is a new Python under the reaper that imports changeup while the caller goes on."""
    if cwd is None and env is None:
        return ForkServer.here(_CHILD)
    return ForkServer.start(_CHILD, wrap=reaped, cwd=cwd, env=env)


async def run_session_process(order: SessionOrder, *, limit: float, server: ForkServer) -> SessionEnd:
    """Run ``order``'s session in a child of ``server`` for at most ``limit`` seconds; how it ended.

    A cancellation kills the child, marks its log interrupted, and goes on."""
    order = replace(order, challenge=order.challenge.absolute(), out=order.out.absolute())
    heard = _Heard(order.out.resolve(), order.name)
    forked = await server.spawn({"order": order_to_json(order)})
    timed_out = False
    code: int | None = None
    drained = (anyio.Event(), anyio.Event())
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_messages, forked.stdout, heard, drained[0])
            group.start_soon(_errors, forked.stderr, heard, drained[1])
            with anyio.move_on_after(limit) as scope:
                code = await forked.wait()
            timed_out = scope.cancelled_caught
            if timed_out:
                forked.kill()
                with anyio.move_on_after(_REAPED):
                    code = await forked.wait()
            with anyio.move_on_after(DRAIN):
                for event in drained:
                    await event.wait()
            group.cancel_scope.cancel()
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            running = forked.returncode is None
            forked.kill()
            with anyio.move_on_after(_REAPED):
                await forked.wait()
            if running:
                await _mark(heard.folder, "interrupted", STOPPED)
            _keep_errors(heard, f"interrupted ({STOPPED}): killed")
        raise
    finally:
        with anyio.CancelScope(shield=True):
            forked.kill()
            await forked.aclose()
    end = _ending(heard, code, timed_out, limit)
    if timed_out or code is None or code < 0:
        await _mark(end.folder, "invalid" if end.status == "failed" else "crashed", end.detail)
    cpu = "" if heard.cpu is None else f"; its own CPU: {heard.cpu:.3f} s"
    _keep_errors(heard, end.status + (f" ({end.detail})" if end.detail else "") + cpu)
    return end


async def _messages(stream: ByteReceiveStream | None, heard: _Heard, drained: anyio.Event) -> None:
    assert stream is not None
    pending = b""
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        async for chunk in stream:
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                heard.take(line)
            if len(pending) > _LINE:
                pending = b""
    drained.set()


async def _errors(stream: ByteReceiveStream | None, heard: _Heard, drained: anyio.Event) -> None:
    """Keep the end of the child's standard error, and pass each of its lines on to this process's
    (its warnings, a weaker sandbox among them, are seen as they were when sessions ran here)."""
    assert stream is not None
    pending = b""
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        async for chunk in stream:
            heard.errors += chunk
            del heard.errors[:-_KEEP]
            whole, _, pending = (pending + chunk).rpartition(b"\n")
            if whole:
                _relay(whole + b"\n")
            pending = pending[-_LINE:]
    if pending:
        _relay(pending + b"\n")
    drained.set()


def _relay(data: bytes) -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(data.decode("utf-8", "replace"))
        sys.stderr.flush()


def _ending(heard: _Heard, code: int | None, timed_out: bool, limit: float) -> SessionEnd:
    """How the child ended, from what it said and how it exited."""
    if timed_out:
        when = "" if heard.started else ", before its agent started (still setting up)"
        detail = (
            f"the session process was still running after {limit:g}s, its wall-time limit{when}: "
            "killed with its whole process tree"
        )
        return SessionEnd("timed out" if heard.started else "failed", heard.folder, detail)
    if code == 0 and heard.folder is not None:
        return SessionEnd("ended", heard.folder, "")
    if heard.error:
        how = heard.error
    elif code is None:
        how = "its fork server died under it"
    elif code < 0:
        how = f"killed by signal {_signal_name(-code)}"
    else:
        how = f"exited {code}"
    lines = heard.errors.decode("utf-8", "replace").strip().splitlines()
    where = f"; its output: {heard.folder / SESSION_LOG}" if heard.folder is not None else ""
    last = "" if heard.folder is not None or not lines else f"; it printed: {' / '.join(lines[-5:])}"
    if heard.started:
        return SessionEnd("crashed", heard.folder, f"the session process crashed: {how}{where}")
    return SessionEnd(
        "failed", heard.folder, f"the session process ended before its agent started: {how}{where}{last}"
    )


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


Aborted = Literal["invalid", "crashed", "interrupted"]


async def _mark(folder: Path | None, status: Aborted, detail: str) -> None:
    """Append ``session.aborted`` to the event log of a session killed from outside (nothing of it runs)."""
    if folder is None or not (folder / "events.jsonl").is_file():
        return

    def append() -> None:
        log = EventLog.reopen(folder / "events.jsonl")
        try:
            log.append(SessionAborted(status, detail), log.last_t, sync=True)
        finally:
            log.close()

    # A log it cannot append to stays as it is: readable, its end cut at its last whole line.
    with contextlib.suppress(OSError, EventLogError, ValueError):
        await anyio.to_thread.run_sync(append)


def _keep_errors(heard: _Heard, ended: str) -> None:
    """Write the end of the child's standard error to ``session.log`` in its run folder, then a
    line of changeup's that says how the session process ``ended``."""
    if heard.folder is not None and heard.folder.is_dir():
        with contextlib.suppress(OSError):
            said = bytes(heard.errors) + f"{_ENDED}{ended}\n".encode()
            (heard.folder / SESSION_LOG).write_bytes(said)


def parse_share(spec: str) -> Share:
    """An ``--agent-share`` value, ``PATH``, ``PATH:ro`` or ``PATH:rw``, as a :class:`Share`."""
    path, _, mode = spec.rpartition(":") if spec.endswith((":rw", ":ro")) else (spec, "", "ro")
    return Share(Path(path).expanduser().absolute(), writable=mode == "rw")


async def run_here(order: SessionOrder, tell: Callable[[dict[str, Any]], None] = lambda _: None) -> Path:
    """Run the attempt ``order`` describes in this process; returns its run folder. ``tell`` hears
    of the run folder once it is made, and that the session started once its loop runs."""
    challenge = load_challenge(order.challenge)
    agent = parse_agent(order.agent, order.options)
    started = False

    def on_change(_: object) -> None:
        nonlocal started
        if not started:
            started = True
            tell({"started": True})

    folder, _, _ = await run_challenge(
        challenge,
        agent,
        order.out,
        judge=parse_judge(order.judge),
        debounce=order.debounce,
        on_change=on_change,
        on_folder=lambda made: tell({"folder": str(made.path)}),
        shares=[parse_share(spec) for spec in order.shares],
        network=order.network,
        name=order.name,
        start=order.start,
        gateway=_gateway_settings(order.gateway),
        network_choice=NetworkChoice(_network(order), True, "the matrix's agent_network"),
    )
    return folder.path


def _network(order: SessionOrder) -> Network:
    """The network the matrix gave ``order``'s agent."""
    if order.gateway is not None and order.gateway.model_only:
        return "model"
    return "full" if order.network else "none"


def _gateway_settings(order: GatewayOrder | None) -> GatewaySettings | None:
    """The gateway of ``order``, its keys read from this process's environment (the driver's, or on
    a Ray worker the node's and the agent's ``send_env``): none ever travels in an order."""
    if order is None:
        return None
    text, where = order.prices, order.prices_path or ""
    prices = PriceTable.load() if text is None else PriceTable.from_text(text, where)
    budget = None if order.budget is None else BudgetLimits.parse(order.budget)
    return GatewaySettings(Upstreams.from_env(os.environ, order.upstream), prices, budget, order.model_only)


def _tell(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _innermost(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def child(request: dict[str, Any]) -> int:
    """A session process (what the fork server runs): the order of ``request`` run as a session;
    0 once its run folder is written."""
    configure()
    order = order_from_json(request["order"])
    try:
        anyio.run(run_here, order, _tell)
    except BaseException as error:
        cause = _innermost(error)
        _tell({"error": f"{type(cause).__name__}: {cause}"[:_ERROR]})
        raise
    finally:
        own = resource.getrusage(resource.RUSAGE_SELF)
        _tell({"cpu": round(own.ru_utime + own.ru_stime, 3)})
    return 0

"""A fork server: one process that has done its imports, forking a child per request.

Starting Python and importing a large program costs about half a second of CPU; a fork of a
process that has done it costs milliseconds. :meth:`ForkServer.start` starts the server,
``python -P -c SERVE MODULE:FUNCTION``, which imports ``MODULE`` and waits for requests;
:meth:`ForkServer.spawn` sends one (a JSON object) with three sockets, and the server forks a
child that calls ``FUNCTION(request)`` and exits with the number it returns. The child

- leads a session and process group of its own (:meth:`Forked.kill` kills the group);
- has the request's first two sockets as its standard output and error, ``/dev/null`` as its
  standard input, and no other file descriptor of the server's;
- dies (``SIGKILL``) when the server does (a parent-death signal).

On the third socket the server writes ``{"pid": PID}`` once the child is forked and
``{"exit": CODE}`` once it has ended (negative: killed by that signal), one JSON object a line,
then closes it. The server is a child subreaper: a process a child left behind is adopted by
it and killed at once (looked for at every child's end and every second, as an adoption
sends no signal; one a v1 freezer holds is thawed to die). The server dies with its parent
(``SIGKILL``); when its requests' socket closes, it kills every child still running and exits.

The server forks from its one thread and runs no event loop, so each child starts from a
clean interpreter whose imports are done (the prior art: Android's zygote, ``multiprocessing``'s
forkserver; ``grading/zygote.py`` does the same for hidden test runs).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import io
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

import anyio
from anyio.abc import SocketStream, UNIXSocketStream

from orchestrator.system.hierarchies import let_die

__all__ = ["SERVE", "ForkServer", "ForkServerError", "Forked", "serve"]

#: The server's program: ``python -P -c SERVE MODULE:FUNCTION`` (-P: its working folder is not on
#: its import path).
SERVE = "import sys; from orchestrator.system.forkserver import serve; serve(sys.argv[1])"
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
#: How often the server looks for processes it adopted, in seconds.
_SWEEP = 1.0
#: The largest request.
_REQUEST = 1 << 20
#: How long the server may take to end once its requests' socket is closed.
_CLOSING = 5.0


class ForkServerError(RuntimeError):
    """The fork server is gone, or refused a request; the message says which."""


def _prctl(option: int, value: int) -> None:
    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _die_with(parent: int) -> None:
    """Be killed when ``parent``, this process's parent, dies; exit now if it already has."""
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


def _say(sock: socket.socket, message: dict[str, int]) -> None:
    with contextlib.suppress(OSError):  # nobody listens any more: nothing to tell
        sock.sendall(json.dumps(message).encode() + b"\n")


def _children_of(me: int) -> list[int]:
    """The processes whose parent is ``me``, from ``/proc``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == me:
                found.append(int(entry))
    return found


def _reap(children: dict[int, socket.socket]) -> None:
    """Collect every child that ended; tell each request's parent how its child ended."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        told = children.pop(pid, None)
        if told is not None:
            _say(told, {"exit": os.waitstatus_to_exitcode(status)})
            told.close()


def _stream(fd: int, errors: str) -> TextIO:
    """A line-buffered text stream on ``fd``, which it never closes (the process's own)."""
    buffered = io.BufferedWriter(io.FileIO(fd, "w", closefd=False))
    return io.TextIOWrapper(buffered, encoding="utf-8", errors=errors, line_buffering=True)


def _child(
    function: Callable[[dict[str, Any]], int],
    message: bytes,
    fds: list[int],
    server: int,
    closing: Sequence[socket.socket],
    pipes: Sequence[int],
) -> NoReturn:
    """The forked child: its own session, the request's sockets as its output, ``function`` run."""
    code = 1
    try:
        os.setsid()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        _die_with(server)
        out, err, told = fds
        os.dup2(out, 1)
        os.dup2(err, 2)
        for fd in (out, err, told, *pipes):
            os.close(fd)
        # Fresh streams on the new descriptors: the server's may be anything (a fork of a caller's).
        sys.stdout = _stream(1, "strict")
        sys.stderr = _stream(2, "backslashreplace")
        for sock in closing:
            sock.close()
        code = int(function(json.loads(message)))
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def serve(target: str) -> None:
    """The server started as a new Python: import ``target``'s module (``MODULE:FUNCTION``), then
    fork a child per request read from standard input (a ``SOCK_SEQPACKET`` socket), until it closes."""
    module, _, name = target.partition(":")
    function = getattr(importlib.import_module(module), name)
    if threading.active_count() > 1:  # a fork would copy locks other threads hold
        raise SystemExit(f"fork server: importing {module} started threads; it cannot fork safely")
    _die_with(os.getppid())
    requests = socket.socket(fileno=os.dup(0))
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.close(null)
    _serve(function, requests)


def _serve(function: Callable[[dict[str, Any]], int], requests: socket.socket) -> None:
    """Fork a child that runs ``function`` per request read from ``requests``, until it closes."""
    gc.freeze()  # what is imported stays out of the children's collections: their pages stay shared
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    wake, woken = os.pipe()
    os.set_blocking(wake, False)
    os.set_blocking(woken, False)
    signal.set_wakeup_fd(woken)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    me = os.getpid()
    children: dict[int, socket.socket] = {}
    while True:
        ready = select.select([requests.fileno(), wake], [], [], _SWEEP)[0]
        with contextlib.suppress(BlockingIOError):
            while os.read(wake, 512):
                pass
        _reap(children)
        for adopted in set(_children_of(me)) - set(children):  # left behind by a child that ended
            with contextlib.suppress(ProcessLookupError):
                os.kill(adopted, signal.SIGKILL)
                let_die(adopted)  # a frozen agent its session left: its group's thaw lets it die
        if requests.fileno() not in ready:
            continue
        message, fds, _, _ = socket.recv_fds(requests, _REQUEST, 3)
        if not message:
            break
        if len(fds) != 3:
            for fd in fds:
                os.close(fd)
            continue
        pid = os.fork()
        if pid == 0:
            _child(function, message, fds, me, [requests, *children.values()], [wake, woken])
        os.close(fds[0])
        os.close(fds[1])
        told = socket.socket(fileno=fds[2])
        _say(told, {"pid": pid})
        children[pid] = told
    for pid in children:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
    for pid in children:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def _served_here(function: Callable[[dict[str, Any]], int], requests: socket.socket, parent: int) -> NoReturn:
    """The server as a fork of its caller: a session of its own, nothing of the caller's open but
    its standard error, then :func:`_serve`."""
    code = 1
    try:
        os.setsid()
        _die_with(parent)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        keep = {0, 1, 2, null, requests.fileno()}
        # Every other descriptor becomes /dev/null: closed, its number could be reused while an
        # object of the caller's still holds it.
        for entry in os.listdir("/proc/self/fd"):
            if int(entry) not in keep:
                with contextlib.suppress(OSError):
                    os.dup2(null, int(entry))
        _serve(function, requests)
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        os._exit(code)


class Forked:
    """A child of the fork server: its pid, its standard output and error, how it ended."""

    def __init__(self, stdout: SocketStream, stderr: SocketStream, told: SocketStream) -> None:
        self.pid = 0
        self.stdout = stdout
        self.stderr = stderr
        self._told = told
        self._pending = b""
        #: Its exit code once it ended (negative: killed by that signal).
        self.returncode: int | None = None

    async def wait(self) -> int | None:
        """Wait for it to end; its exit code, or None when the server died first (it died with it)."""
        while self.returncode is None:
            message = await self._next()
            if message is None:
                return None
            if "exit" in message:
                self.returncode = int(message["exit"])
        return self.returncode

    def kill(self) -> None:
        """``SIGKILL`` its process group (it leads one), unless it has ended."""
        if self.pid and self.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)

    async def aclose(self) -> None:
        """Close its streams."""
        for stream in (self.stdout, self.stderr, self._told):
            await stream.aclose()

    async def _next(self) -> Any:
        """The server's next word about it (a JSON line); None once the server said no more."""
        while b"\n" not in self._pending:
            try:
                self._pending += await self._told.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                return None
        line, _, self._pending = self._pending.partition(b"\n")
        return json.loads(line)


class ForkServer:
    """A running fork server (:func:`serve`); :meth:`spawn` forks a child of it."""

    def __init__(self, process: subprocess.Popen[bytes] | int, requests: socket.socket) -> None:
        #: The server: a process started (:meth:`start`), or the pid of a fork (:meth:`here`).
        self._process = process
        self._requests = requests
        self._lock = anyio.Lock()

    @classmethod
    def here(cls, target: str) -> ForkServer:
        """This process, forked, as the server of ``target`` (``MODULE:FUNCTION``), whose module it
        has imported: nothing to wait for. Only a process with one thread may fork (others' locks
        would be copied held); with more, the server is started as a new Python (:meth:`start`)."""
        if threading.active_count() > 1:
            return cls.start(target)
        module, _, name = target.partition(":")
        function = getattr(importlib.import_module(module), name)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
            stream.flush()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            ours.close()
            _served_here(function, theirs, parent)
        theirs.close()
        ours.setblocking(False)
        return cls(pid, ours)

    @classmethod
    def start(
        cls,
        target: str,
        *,
        wrap: Callable[[list[str]], list[str]] = list,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ForkServer:
        """Start a server of ``target`` (``MODULE:FUNCTION``) in a session of its own, its command
        passed through ``wrap`` (a reaper, say); ``cwd`` and ``env``: its, and its children's.
        It does its imports while the caller goes on; :meth:`spawn` waits for them."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            process = subprocess.Popen(
                wrap([sys.executable, "-P", "-c", SERVE, target]),
                stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL,
                cwd=cwd,
                env=dict(env) if env is not None else None,
                start_new_session=True,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        ours.setblocking(False)
        return cls(process, ours)

    async def spawn(self, request: dict[str, Any]) -> Forked:
        """Fork a child that runs the server's function on ``request``; raises
        :class:`ForkServerError` when the server is gone."""
        pairs = [socket.socketpair() for _ in range(3)]
        data = json.dumps(request).encode()
        try:
            async with self._lock:
                while True:
                    try:
                        socket.send_fds(self._requests, [data], [theirs.fileno() for _, theirs in pairs])
                        break
                    except BlockingIOError:
                        await anyio.wait_writable(self._requests)
        except OSError as error:
            for ours, _ in pairs:
                ours.close()
            raise ForkServerError(f"the fork server is gone ({error})") from None
        finally:
            for _, theirs in pairs:
                theirs.close()
        stdout, stderr, told = [await UNIXSocketStream.from_socket(ours) for ours, _ in pairs]
        forked = Forked(stdout, stderr, told)
        started = await forked._next()
        if started is None or "pid" not in started:
            await forked.aclose()
            raise ForkServerError("the fork server ended before it forked the child")
        forked.pid = int(started["pid"])
        return forked

    def close(self) -> None:
        """Close its requests: it kills every child still running and ends (blocking, briefly)."""
        self._requests.close()
        process = self._process
        pid = process if isinstance(process, int) else process.pid
        deadline = time.monotonic() + _CLOSING
        while time.monotonic() < deadline and not self._ended(pid):
            time.sleep(0.02)
        if not self._ended(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            if isinstance(process, int):
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, 0)
            else:
                process.wait()

    def _ended(self, pid: int) -> bool:
        """Whether the server has ended (and is collected)."""
        if not isinstance(self._process, int):
            return self._process.poll() is not None
        try:
            return os.waitpid(pid, os.WNOHANG)[0] == pid
        except ChildProcessError:
            return True

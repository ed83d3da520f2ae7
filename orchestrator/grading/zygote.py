"""The warm interpreter of hidden test runs: pytest imported once, a clean child per run (a script).

``python -I -B zygote.py CONFIG`` runs inside the hidden tests' bubblewrap sandbox for as
long as a session lasts (``warm.py`` starts and stops it). It imports ``bootstrap.py`` and
makes its :class:`~bootstrap.Machinery` (pytest and every built-in plugin imported, the
fingerprint taken), then waits. It never runs code of the agent's, and it never runs pytest:
each test run is a fresh fork of it, so every run starts from the same clean interpreter a
cold run has just before ``pytest.main``, without paying ~150 ms to import pytest again. The
prior art is Android's zygote and ``multiprocessing``'s forkserver.

Protocol, one JSON object a line. Requests on stdin::

    {"run": N, "folder": NAME, "settings": {...}, "args": [...], "timeout": S, "nproc": P or null,
     "tmp_mb": M, "cgroup": [PROCS...]}
    {"cancel": N}

and on stdout ``{"ready": PID}`` once, then one report per run::

    {"run": N, "exit": CODE or null, "timed_out": B, "output": TAIL, "truncated": B, "filled": [...]}

The end of stdin stops every run and the zygote. The zygote is PID 1 of its sandbox, so
when it ends the kernel ends everything still in it. A run is three processes, each forked
from the one before, and none outlives the run:

- the **leader** (in the zygote's namespaces) first joins the run's control group (writing
  ``0``, itself, to each file of ``PROCS``, v1's ``tasks``: it has one thread, and all of the
  run is born inside), then enters new
  mount, IPC, UTS, network and cgroup namespaces and a new PID namespace for its children;
  mounts the run's own folders (from ``CONFIG["runs"]/NAME``) where a cold run has them,
  covers every run folder and the control groups, and gives the run fresh ``/tmp`` and
  ``/dev/shm`` of ``M`` MB each; then watches the run: its output's tail, its time limit, a
  cancellation; its report says which of those two the run left full. It kills the run by
  killing its init: a PID namespace dies with its init, every process in it (``setsid`` or
  not) with it, before the leader sees it end.
- the **init** (PID 1 of the run's namespace; it dies with the leader) mounts ``/proc`` for
  that namespace, brings up loopback, sets the resource limits and reaps orphans, as
  bubblewrap's own init does; it exits with the test process's status.
- the **test process** leads its own session, holds no file descriptor of the zygote's,
  drops to the test user (``bootstrap.drop``), keeps no capability in any set, and runs
  :func:`bootstrap.run` (the ``ready`` line, the per-test checks, the machinery check). It
  ends as an interpreter ends (threads joined, ``atexit`` run, output flushed) but without
  tearing its modules down.

An isolated run (``testing: isolation: process``) has a fourth: the init forks the
**workspace host** (:class:`WorkspaceHost`, ``host.py``) beside the test process, in PID and
mount namespaces of its own, the only process of the run that runs the agent's code.

The zygote, the leader and the init run as root inside the sandbox (as the caller in a user
namespace, when changeup is not root). The test process runs as the test user (as the same
caller, with no capability, when not root), in a PID namespace where no process of the
zygote's has a PID: it cannot signal or trace one, and the zygote and the leader are not
dumpable either. Nothing it can write is read by the zygote, and its own init is out of its
reach (another uid, or more capabilities; and PID 1 takes no signal it does not handle).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import fcntl
import gc
import importlib.util
import json
import os
import resource
import select
import signal
import socket
import struct
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, NoReturn

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWCGROUP, CLONE_NEWPID, CLONE_NEWNET = 0x02000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT = 1, 4, 24, 38, 47
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
#: The output a run keeps (its last bytes), as ``processes.run_process_group`` keeps.
TAIL = 65536
#: How long a run's output may keep coming once its init has exited.
DRAIN = 1.0
#: The exit of a process of a run whose own code failed before it could report.
BROKEN = 70
#: Where an isolated run's test process and workspace host hold their ends of its socket.
HOST_FD = 3
#: Each run's own memory-backed folders, fresh and of a size.
FRESH = ("/tmp", "/dev/shm")

_libc = ctypes.CDLL(None, use_errno=True)
#: How a test process ends, held before any run: the agent's code may rebind the names.
_JOIN_THREADS = threading._shutdown  # type: ignore[attr-defined]  # what Py_FinalizeEx calls first
_RUN_ATEXIT = atexit._run_exitfuncs
_END = os._exit


@dataclass(frozen=True, slots=True)
class Job:
    """What a test process runs: the bootstrap's settings and pytest's arguments."""

    settings: dict[str, Any]
    args: list[str]


def _call(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else text.encode()


def _mount(source: str | None, target: str, kind: str | None, flags: int, data: str | None = None) -> None:
    done = _libc.mount(_bytes(source), _bytes(target), _bytes(kind), flags, _bytes(data))
    _call(done, f"mount {target}")


def _bind(source: str, target: str, *, writable: bool) -> None:
    _mount(source, target, None, MS_BIND)
    _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | (0 if writable else MS_RDONLY))


def _fork(child: Callable[[], Job | None]) -> tuple[int, Job | None]:
    """Fork; the child runs ``child`` and exits, unless it is the test process (it returns a Job).

    Nothing raised in a child crosses back into the code of the process it was forked from.
    """
    pid = os.fork()
    if pid:
        return pid, None
    try:
        job = child()
    except BaseException:  # whatever it was, this process ends here
        with contextlib.suppress(BaseException):
            traceback.print_exc()
        os._exit(BROKEN)
    if job is None:
        os._exit(0)
    return 0, job


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _say(fd: int, line: dict[str, Any]) -> None:
    _write_all(fd, (json.dumps(line) + "\n").encode())


@dataclass(slots=True)
class _Leading:
    """A run as the zygote sees it: its leader and the report coming from it."""

    run: int
    pid: int
    report: bytearray = field(default_factory=bytearray)


class Zygote:
    """Serves runs until its input ends; in a test process, :meth:`serve` returns that run's job."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.leaders: dict[int, _Leading] = {}  # report pipe → run
        self.pending = b""
        self.ended: dict[int, int] = {}  # leader pid → wait status, when reaped with the strays

    def serve(self) -> Job:
        """Say ready, then start, cancel and report runs."""
        _call(_libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")
        _say(1, {"ready": os.getpid()})
        while True:
            readable, _, _ = select.select([0, *self.leaders], [], [])
            for fd in readable:
                if fd != 0:
                    self._collect(fd)
                    continue
                job = self._requests()
                if job is not None:
                    return job
            self._reap()

    def _requests(self) -> Job | None:
        data = os.read(0, 1 << 16)
        if not data:
            self._stop()
        self.pending += data
        while b"\n" in self.pending:
            line, _, self.pending = self.pending.partition(b"\n")
            request = json.loads(line)
            if "cancel" in request:
                for leading in self.leaders.values():
                    if leading.run == request["cancel"]:
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(leading.pid, signal.SIGTERM)
            else:
                job = self._start(request)
                if job is not None:
                    return job
        return None

    def _start(self, request: dict[str, Any]) -> Job | None:
        reading, writing = os.pipe()
        others = list(self.leaders)

        def lead() -> Job | None:
            os.close(reading)
            for fd in others:
                os.close(fd)
            null = os.open(os.devnull, os.O_RDWR)  # requests and reports are the zygote's alone
            os.dup2(null, 0)
            os.dup2(null, 1)
            os.close(null)
            return Leader(self.config, request, writing).run()

        pid, job = _fork(lead)
        if job is not None:
            return job
        os.close(writing)
        self.leaders[reading] = _Leading(int(request["run"]), pid)
        return None

    def _collect(self, fd: int) -> None:
        leading = self.leaders[fd]
        data = os.read(fd, 1 << 16)
        if data:
            leading.report += data
            return
        os.close(fd)
        del self.leaders[fd]
        status = self.ended.pop(leading.pid, None)
        if status is None:
            _, status = os.waitpid(leading.pid, 0)
        if leading.report.endswith(b"\n"):
            _write_all(1, bytes(leading.report))
            return
        lost = f"the run's leader ended without a report (exit {os.waitstatus_to_exitcode(status)})"
        _say(1, {"run": leading.run, "exit": None, "timed_out": False, "output": lost, "truncated": False})

    def _reap(self) -> None:
        """As PID 1 of the sandbox, reap what ends up here (a run's init whose leader died)."""
        mine = {leading.pid for leading in self.leaders.values()}
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in mine:
                self.ended[pid] = status

    def _stop(self) -> None:
        """The input ended: stop every run, then exit.

        A leader's init dies with it (its parent-death signal), and a run's namespace with its
        init; the zygote is PID 1 of its sandbox, so its own end takes down every process
        still there before its parent (bubblewrap) sees it end.
        """
        for leading in self.leaders.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(leading.pid, signal.SIGKILL)
        for leading in self.leaders.values():
            with contextlib.suppress(ChildProcessError):
                os.waitpid(leading.pid, 0)
        os._exit(0)


class Leader:
    """One run: its namespaces and mounts, its init, and the watch over it until its report."""

    def __init__(self, config: dict[str, Any], request: dict[str, Any], report: int) -> None:
        self.config = config
        self.request = request
        self.report = report
        self.init = 0
        self.cancelled = False

    def run(self) -> Job | None:
        """Run the test, report how it ended; returns only in the test process."""
        signal.signal(signal.SIGTERM, self._cancel)
        try:
            job, ended = self._lead()
        except Exception:  # the run could not be set up: the grader's failure, said in its output
            if self.init:
                os.kill(self.init, signal.SIGKILL)
            ended = {"exit": None, "timed_out": False, "output": traceback.format_exc(), "truncated": False}
            job = None
        if job is not None:
            return job
        _say(self.report, {"run": self.request["run"], **ended, "cancelled": self.cancelled})
        return None

    def _cancel(self, signum: int, frame: object) -> None:
        self.cancelled = True
        if self.init:
            os.kill(self.init, signal.SIGKILL)

    def _lead(self) -> tuple[Job | None, dict[str, Any]]:
        folder = str(self.request["folder"])
        if folder in ("", ".", "..") or "/" in folder:
            raise ValueError(f"not a run folder's name: {folder!r}")
        runs = self.config["runs"]
        for procs in self.request.get("cgroup", ()):  # before anything of the run exists
            with open(procs, "w") as handle:
                handle.write("0")  # this process
        flags = CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWCGROUP
        _call(_libc.unshare(flags), "unshare")
        _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing mounted here reaches the zygote
        for name, target, writable in self.config["binds"]:
            _bind(os.path.join(runs, folder, name), target, writable=writable)
        # Every run's folder (this one's too, at its first place) is covered; read-only, empty.
        for cover in (runs, self.config.get("cgroups")):
            if cover:
                _mount(
                    "tmpfs", cover, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=4k"
                )
        size = f",size={int(self.request['tmp_mb'])}m" if self.request.get("tmp_mb") else ""
        for fresh in FRESH:
            _mount("tmpfs", fresh, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777{size}")
        reading, writing = os.pipe()
        pid, job = _fork(lambda: Init(self.config, self.request).run(reading, writing))
        if job is not None:
            return job, {}
        self.init = pid
        os.close(writing)
        if self.cancelled:
            os.kill(pid, signal.SIGKILL)
        ended = self._watch(pid, reading)
        return None, {**ended, "filled": [place for place in FRESH if _full(place)]}

    def _watch(self, pid: int, output: int) -> dict[str, Any]:
        """Keep the output's tail until the init exits (killed at the time limit), then drain it."""
        tail, truncated, timed_out = bytearray(), False, False
        deadline = time.monotonic() + float(self.request["timeout"])
        watched = select.poll()
        watched.register(output, select.POLLIN)
        pidfd = os.pidfd_open(pid)
        watched.register(pidfd, select.POLLIN)
        exited: float | None = None
        while exited is None or (output >= 0 and time.monotonic() < exited + DRAIN):
            if exited is not None:
                wait: float | None = exited + DRAIN - time.monotonic()
            else:
                wait = None if timed_out else deadline - time.monotonic()
            for fd, _ in watched.poll(None if wait is None else max(0.0, wait) * 1000):
                if fd == pidfd:
                    watched.unregister(pidfd)
                    exited = time.monotonic()
                    continue
                data = os.read(output, 1 << 16)
                if not data:
                    watched.unregister(output)
                    output = -1
                    continue
                tail += data
                if len(tail) > TAIL:
                    del tail[: len(tail) - TAIL]
                    truncated = True
            if exited is None and not timed_out and time.monotonic() >= deadline:
                timed_out = True
                os.kill(pid, signal.SIGKILL)
        os.close(pidfd)
        _, status = os.waitpid(pid, 0)
        code = None if timed_out else os.waitstatus_to_exitcode(status)
        text = tail.decode("utf-8", "replace")
        return {"exit": code, "timed_out": timed_out, "output": text, "truncated": truncated}


class Init:
    """PID 1 of a run's namespace: its ``/proc``, loopback and limits; reaps; ends with the test."""

    def __init__(self, config: dict[str, Any], request: dict[str, Any]) -> None:
        self.config = config
        self.request = request

    def run(self, reading: int, writing: int) -> Job | None:
        """Prepare the namespace, fork the test process, reap until it ends, exit with its status."""
        os.close(reading)
        _call(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
        os.dup2(writing, 2)  # from here on, what goes wrong is in the run's output
        for signum in (signal.SIGINT, signal.SIGTERM):  # PID 1 gets no signal it does not handle
            signal.signal(signum, signal.SIG_DFL)
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        _loopback_up()
        # The run goes before the zygote when memory runs out. A process that is not dumpable
        # (the zygote's setting, inherited) does not own its /proc files in a user namespace.
        _call(_libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")
        with open("/proc/self/oom_score_adj", "w") as handle:
            handle.write("500")
        _call(_libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")
        limits = self.config["limits"]
        for kind, value in (
            (resource.RLIMIT_AS, limits["memory_mb"] * 1024 * 1024),
            (resource.RLIMIT_NOFILE, limits["open_files"]),
            (resource.RLIMIT_CPU, limits["cpu_seconds"]),
            (resource.RLIMIT_FSIZE, limits["file_mb"] * 1024 * 1024),
            (resource.RLIMIT_NPROC, self.request["nproc"]),
        ):
            if value is None:  # the run's control group bounds its processes
                continue
            value = int(value)
            hard = resource.getrlimit(kind)[1]
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(kind, (value, value))
        host = WorkspaceHost.asked(self.config, self.request)  # an isolated run's (``host.py``)
        pid, job = _fork(lambda: self._test(writing, host))
        if job is not None:
            return job
        if host is not None:
            host.start(writing)
        os.close(writing)
        while True:
            reaped, status = os.waitpid(-1, 0)
            if reaped == pid:
                break
        code = os.waitstatus_to_exitcode(status)
        os._exit(code if code >= 0 else 128 - code)  # as bubblewrap reports a signal

    def _test(self, output: int, host: WorkspaceHost | None) -> Job:
        """Become the test process: its own session, no descriptor of ours (but its end of the
        workspace host's socket), no privilege."""
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(output, 1)
        os.dup2(output, 2)
        if host is not None:
            self.request["settings"]["host"]["fd"] = HOST_FD
        _keep([] if host is None else [host.tests])
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a fresh interpreter
        os.chdir(self.config["workdir"])
        bootstrap = sys.modules["bootstrap"]
        bootstrap.drop(self.config["user"])
        _clear_capabilities()
        if self.config["user"] is None:  # as a cold run's process: dumpable unless its uid changed
            _call(_libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")
        return Job(dict(self.request["settings"]), [str(a) for a in self.request["args"]])


def _keep(fds: list[int]) -> None:
    """Move ``fds`` to ``HOST_FD``, ``HOST_FD + 1``... and close every other descriptor from 3 up
    (one close_range(2): the zygote holds nothing near the top)."""
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, HOST_FD + len(fds)) for fd in fds]  # clear of the targets
    for offset, fd in enumerate(high):
        os.dup2(fd, HOST_FD + offset)
    os.closerange(HOST_FD + len(fds), 1 << 20)


class WorkspaceHost:
    """The workspace host of an isolated run (``host.py``, the one process that runs the agent's
    code), forked by the run's init beside the test process and joined to it by a socket pair.

    The init, once the test process is forked, enters new mount and PID namespaces (its last
    act before it waits), covers the hidden tests and the run's output (an empty folder of the
    host's own there, its HOME as the run's output is the tests') and gives fresh ``/tmp`` and
    ``/dev/shm``; then forks the host's own init (PID 1 there, with its ``/proc``), which
    forks the host: its own session, as the host user of the settings (another uid than the
    tests' as root), no capability. The host cannot name the test process (it has no PID in
    the host's namespace) nor open a file of the tests', and ends with the run's init.
    """

    def __init__(self, config: dict[str, Any], serve: dict[str, Any]) -> None:
        self.config = config
        self.serve = serve
        tests, host = socket.socketpair()
        self.tests, self.host = tests.detach(), host.detach()  # plain descriptors: nothing closes them but us
        self.effects = -1
        if serve.get("effects"):  # opened while the run's output is still in view
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
            self.effects = os.open(serve["effects"]["file"], flags, 0o644)

    @classmethod
    def asked(cls, config: dict[str, Any], request: dict[str, Any]) -> WorkspaceHost | None:
        """The host a run's settings ask for (``host.serve``), if any."""
        host = request["settings"].get("host")
        # The host's own /tmp and /dev/shm are the size of the run's.
        return None if not host else cls(config, {**host["serve"], "tmp_mb": request.get("tmp_mb")})

    def start(self, output: int) -> None:
        """In the run's init: hide what the host must not see, and fork its init."""
        os.close(self.tests)
        _call(_libc.unshare(CLONE_NEWNS | CLONE_NEWPID), "unshare")
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
        sealed = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
        for name, target, writable in self.config["binds"]:
            if name == "ws":
                continue
            if writable:  # the run's output: an empty folder of the host's own (its HOME, as the tests')
                _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
            else:  # the hidden tests: an empty read-only folder
                _mount("tmpfs", target, "tmpfs", sealed, "mode=0755,size=4k")
        size = f",size={int(self.serve['tmp_mb'])}m" if self.serve.get("tmp_mb") else ""
        for fresh in FRESH:  # the host's own, of the run's size
            _mount("tmpfs", fresh, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777" + size)
        _fork(lambda: self._init(output))
        os.close(self.host)
        if self.effects >= 0:
            os.close(self.effects)

    def _init(self, output: int) -> None:
        """PID 1 of the host's namespace: its ``/proc``; reaps until the host ends."""
        _call(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        pid, _ = _fork(lambda: self._serve(output))
        while os.waitpid(-1, 0)[0] != pid:
            pass

    def _serve(self, output: int) -> None:
        """Become the host: its own session and descriptors, the host user, no privilege; serve."""
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(output, 1)
        os.dup2(output, 2)
        _keep([self.host, *([self.effects] if self.effects >= 0 else [])])
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.chdir(self.config["workdir"])
        bootstrap = sys.modules["bootstrap"]
        bootstrap.drop(self.serve["user"])
        _clear_capabilities()
        if self.serve["user"] is None:
            _call(_libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")
        effects = self.serve.get("effects")
        config = {**self.serve, "fd": HOST_FD, "effects": effects and {**effects, "file": HOST_FD + 1}}
        host = sys.modules["changeup_host"]
        host.prepare(config, bootstrap)
        host.serve(config)


def _full(place: str) -> bool:
    """Whether the mount at ``place`` has no room left (no block or no inode)."""
    status = os.statvfs(place)
    return bool(status.f_blocks) and (status.f_bavail == 0 or status.f_favail == 0)


def _loopback_up() -> None:
    """Bring up ``lo`` in the run's new network namespace (bubblewrap does it for a cold run)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def _clear_capabilities() -> None:
    """No capability in any set (a user namespace keeps them across a uid that does not change),
    no new privileges; checked, so a run never starts with one."""
    _call(_libc.prctl(PR_CAP_AMBIENT, 4, 0, 0, 0), "prctl(PR_CAP_AMBIENT_CLEAR_ALL)")
    for capability in range(64):  # an unknown capability just fails
        _libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0)
    _call(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    header = struct.pack("Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = ctypes.create_string_buffer(24)  # two empty sets of (effective, permitted, inheritable)
    _call(_libc.capset(header, data), "capset")
    with open("/proc/self/status") as status:
        held = [line for line in status if line.startswith("Cap") and int(line.split()[1], 16)]
    if held:
        raise PermissionError(f"capabilities left after dropping them: {held}")


def _load_bootstrap(path: str) -> ModuleType:
    return _load(path, "bootstrap")


def _load(path: str, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {name} from {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _exit(code: int) -> NoReturn:
    """End as an interpreter ends (its threads joined, its ``atexit`` functions run, its output
    flushed) without tearing every module down, which costs a forked pytest ~100 ms."""
    _JOIN_THREADS()
    _RUN_ATEXIT()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    _END(code & 0xFF)


def main() -> None:
    """Make the machinery once; in each run's test process, run the bootstrap with it."""
    config = json.loads(sys.argv[1])
    bootstrap = _load_bootstrap(config["bootstrap"])
    for path, name in config.get("preload") or ():  # isolation's modules: compiled once, here
        _load(path, name)
    machinery = bootstrap.Machinery()
    # Nothing made so far is garbage: kept out of the children's collections, so a collection
    # in a run neither walks it nor copies its pages (the ``gc.freeze`` docs' advice for forking).
    gc.freeze()
    job = Zygote(config).serve()
    sys.argv = [config["bootstrap"], json.dumps(job.settings), "--", *job.args]  # as a cold run's
    try:
        code = int(bootstrap.run(job.settings, job.args, machinery))
    except SystemExit as stop:  # as the interpreter reads sys.exit's argument
        if stop.code is not None and not isinstance(stop.code, int):
            print(stop.code, file=sys.stderr)
        code = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
    except BaseException:  # as the interpreter ends on an uncaught exception
        traceback.print_exc()
        code = 1
    _exit(code)


if __name__ == "__main__":
    main()

"""Runs a command so that its whole process tree dies with it (a script; never imported).

``python -I -S reaper.py [--pids N] -- COMMAND...``

Outside bubblewrap there is no PID namespace to take a test run's or an agent's processes
down with it, and a process group is not enough: ``setsid`` leaves it. So changeup starts
commands under this reaper, which

- becomes a *child subreaper* (``PR_SET_CHILD_SUBREAPER``): anything its command leaves
  behind, even after ``setsid`` and a double fork, is re-parented to it, not to init;
- when the command exits, or the reaper is told to stop (``SIGTERM``), or changeup dies
  (``PR_SET_PDEATHSIG``), kills every process below it until none is left (thawing the v1
  freezer group of one that is frozen, or it would never die), then exits with the command's
  status;
- with ``--pids N`` and when it can (root, a writable pids cgroup), puts itself and so the
  whole tree into a cgroup of at most N processes: ``RLIMIT_NPROC`` does nothing for root.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from pathlib import Path

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def descendants(me: int) -> list[int]:
    """Every process below ``me``, from ``/proc``."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [me]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_all(me: int) -> None:
    """SIGKILL everything below ``me`` and reap it, until nothing is left (forks race the kill)."""
    for _ in range(1000):
        below = descendants(me)
        if not below:
            return
        for pid in below:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
                let_die(pid)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass


def let_die(pid: int) -> None:
    """Thaw the v1 freezer group of ``pid``, sent SIGKILL: a frozen process takes no signal until
    thawed (as ``system/hierarchies.let_die``; this script imports nothing of changeup)."""
    try:
        with open(f"/proc/{pid}/cgroup") as handle:
            path = next(line.split(":", 2)[2].strip() for line in handle if ":freezer:" in line)
        with open("/proc/self/mountinfo") as handle:
            mounts = [line.split() for line in handle if " - cgroup " in line and "freezer" in line]
    except (OSError, StopIteration):
        return
    for fields in mounts:
        root, point = fields[3], fields[4]
        relative = os.path.relpath(path, root) if root != "/" else path.lstrip("/")
        state = os.path.join(point, "" if relative == "." else relative, "freezer.state")
        with contextlib.suppress(OSError):
            with open(state) as handle:
                frozen = handle.read().strip() != "THAWED"
            if frozen:
                with open(state, "w") as handle:
                    handle.write("THAWED")


def limit_processes(count: int) -> None:
    """Join a fresh pids cgroup of at most ``count`` processes, where one can be made (v2 or v1)."""
    me = os.getpid()
    for base in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/pids")):
        if not (base / "cgroup.procs").is_file() or not os.access(base, os.W_OK):
            continue
        if base.name == "cgroup" and "pids" not in (base / "cgroup.controllers").read_text().split():
            continue
        group = base / f"changeup-{me}"
        try:
            group.mkdir()
            (group / "pids.max").write_text(str(count))
            (group / "cgroup.procs").write_text(str(me))
        except OSError:
            with contextlib.suppress(OSError):
                group.rmdir()
            continue
        return


def leave_cgroup() -> None:
    """Remove this reaper's cgroup once it is empty (it is, after ``kill_all``)."""
    me = os.getpid()
    for base in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/pids")):
        group = base / f"changeup-{me}"
        if group.is_dir():
            with contextlib.suppress(OSError):
                (base / "cgroup.procs").write_text(str(me))
                group.rmdir()


def main() -> int:
    """Start the command, wait for it, then make sure nothing of it survives."""
    args = sys.argv[1:]
    split = args.index("--")
    options, command = args[:split], args[split + 1 :]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if "--pids" in options:
        limit_processes(int(options[options.index("--pids") + 1]))
    me = os.getpid()

    def stop(signum: int, frame: object) -> None:
        kill_all(me)
        leave_cgroup()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    child = os.fork()
    if child == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            os.execvp(command[0], command)
        except OSError as error:
            print(f"cannot run {command[0]}: {error.strerror}", file=sys.stderr)
            os._exit(127)
    status = 0
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == child:
            break
    kill_all(me)
    leave_cgroup()
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # killed by a signal: end the same way, so the caller sees what the command saw
        signal.signal(-code, signal.SIG_DFL)
        os.kill(me, -code)
    return code


if __name__ == "__main__":
    sys.exit(main())

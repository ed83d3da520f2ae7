"""The keeper's program (a script; never imported): empties and removes control groups once its
owner is gone.

``python -I -S keeper_program.py OWNER TIMEOUT FOLDER...``

Its standard input is the read end of a pipe whose write end only its owner holds. It reads
until end of file, which comes when the owner closes the pipe or dies (the kernel closes a dead
process's descriptors, whatever killed it). Then, for each group folder (one per hierarchy),
until no process is left in it or below it, or ``TIMEOUT`` seconds have passed:

1. thaw it and every group below (v1 ``freezer.state``, v2 ``cgroup.freeze``): a frozen process
   dies only once it runs, and on v1 a pending SIGKILL waits for the thaw;
2. kill every process in it and below: v2 ``cgroup.kill``; otherwise SIGKILL through a pidfd
   taken before the pid is read again from the group, so a pid reused meanwhile is never hit (a
   process with SIGKILL pending cannot fork, so the rounds end);
3. remove the folders, deepest first.

A group its owner removed already needs nothing. When it found something to do, it says so on
its standard error (its owner's), and exits 1 if something is left. Only the standard library:
it starts in tens of milliseconds and holds a few MB while it waits.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

#: A thaw for each kind of freezer file, by its name.
THAWED = {"freezer.state": "THAWED", "cgroup.freeze": "0"}


def _folders(top: str) -> list[str]:
    """``top`` and every group folder below it, deepest first."""
    found = [folder for folder, _, _ in os.walk(top)]
    return sorted(found, key=lambda folder: -folder.count("/"))


def _write(path: str, value: str) -> bool:
    try:
        with open(path, "w") as handle:
            handle.write(value)
    except OSError:
        return False
    return True


def _pids(folders: list[str]) -> set[int]:
    found: set[int] = set()
    for folder in folders:
        with contextlib.suppress(OSError), open(os.path.join(folder, "cgroup.procs")) as handle:
            found.update(int(pid) for pid in handle.read().split())
    return found


def thaw(folders: list[str]) -> None:
    """Let every process of these groups run (and so die)."""
    for folder in folders:
        for name, value in THAWED.items():
            path = os.path.join(folder, name)
            if os.path.exists(path):
                _write(path, value)


def kill(folders: list[str]) -> int:
    """SIGKILL every process in these groups once; how many were signalled."""
    listed = _pids(folders)
    at_once = [
        os.path.join(f, "cgroup.kill") for f in folders if os.path.exists(os.path.join(f, "cgroup.kill"))
    ]
    if at_once and all(_write(path, "1") for path in at_once):  # v2: a subtree, frozen or not
        return len(listed)
    handles = {}
    for pid in listed:
        with contextlib.suppress(OSError):
            handles[pid] = os.pidfd_open(pid)
    signalled = 0
    try:
        still = _pids(folders)  # a pidfd taken while its pid was in the group names that process
        for pid, handle in handles.items():
            if pid in still:
                with contextlib.suppress(OSError):
                    signal.pidfd_send_signal(handle, signal.SIGKILL)
                    signalled += 1
    finally:
        for handle in handles.values():
            os.close(handle)
    return signalled


def empty(tops: list[str], deadline: float) -> tuple[int, int, str]:
    """Thaw, kill and remove the groups ``tops`` (one per hierarchy: a process is in each) and
    those below them: (processes killed, groups removed, what is left in words, "" if nothing)."""
    killed = removed = 0
    pause = 0.001
    while True:
        folders = [folder for top in tops if os.path.isdir(top) for folder in _folders(top)]
        thaw(folders)
        if not _pids(folders):
            break
        killed += kill(folders)
        thaw(folders)  # what joined a frozen group between the two
        if time.monotonic() >= deadline:
            return killed, removed, f"processes {sorted(_pids(folders))[:10]} in {', '.join(tops)}"
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    # A group whose last process is still exiting refuses rmdir (EBUSY) for a moment: retried
    # until the deadline, as the killing is.
    while True:
        busy = ""
        for top in tops:
            for folder in _folders(top) if os.path.isdir(top) else []:
                try:
                    os.rmdir(folder)
                    removed += 1
                except FileNotFoundError:
                    continue
                except OSError as error:
                    busy = busy or f"{folder}: {error.strerror}"
        if not busy:
            return killed, removed, ""
        if time.monotonic() >= deadline:
            return killed, removed, busy
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def main() -> int:
    """Wait for the owner to go, then empty and remove the groups named on the command line."""
    owner, timeout, *tops = sys.argv[1:]
    with contextlib.suppress(OSError):  # as root: the OOM killer takes anything else first
        _write("/proc/self/oom_score_adj", "-1000")
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's ^C is for its owner, not for it
    while os.read(0, 4096):
        pass
    deadline = time.monotonic() + float(timeout)
    killed, removed, left = empty(tops, deadline)
    if killed or removed or left:
        said = f"changeup keeper: process {owner} ended without removing its control groups: "
        said += f"{killed} processes killed, {removed} groups removed"
        said += f"; left: {left}" if left else ""
        print(said, file=sys.stderr, flush=True)
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())

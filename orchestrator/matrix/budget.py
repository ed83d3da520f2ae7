"""What K sessions at once need of this machine, checked before a local matrix starts any.

Each session holds a few file descriptors (its log, its watcher, its warm test interpreter's
pipes: about 8 at 50 at once, ``benchmarks/concurrency.py``) and one inotify instance (its
watcher). Linux bounds both: ``ulimit -n`` per process (often 1,024) and
``fs.inotify.max_user_instances`` per user (128 by default). Past either, sessions would crash
mid-matrix, each an invalid trial; so :func:`make_room` raises this process's open-file limit
as far as its hard limit allows, and refuses a ``--concurrency`` that still does not fit, saying
what to change.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

from orchestrator.matrix.backends import BackendError

__all__ = ["FDS_PER_SESSION", "inotify_free", "make_room"]

#: Open files a session holds, with room to spare, and those of the driver itself.
FDS_PER_SESSION = 12
_FDS_BASE = 64
_INOTIFY_LIMIT = Path("/proc/sys/fs/inotify/max_user_instances")


def inotify_free() -> tuple[int, int] | None:
    """Inotify instances this user may still create, and the limit (None: not Linux, or unknown)."""
    try:
        limit = int(_INOTIFY_LIMIT.read_text())
    except (OSError, ValueError):
        return None
    used = 0
    uid = os.getuid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != uid:
                continue
            fds = os.scandir(f"/proc/{entry.name}/fd")
        except OSError:
            continue  # gone, or not ours to look into
        with fds:
            for fd in fds:
                try:
                    used += os.readlink(fd.path) == "anon_inode:inotify"
                except OSError:
                    continue
    return max(0, limit - used), limit


def make_room(sessions: int) -> None:
    """Make room for ``sessions`` at once in this process, or raise :class:`BackendError` saying why not."""
    needed = _FDS_BASE + FDS_PER_SESSION * sessions
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            raise BackendError(
                f"--concurrency {sessions} needs about {needed} open files, and this process may have "
                f"at most {hard} (ulimit -Hn): raise the limit, or lower --concurrency "
                f"(about {(hard - _FDS_BASE) // FDS_PER_SESSION} fit)"
            )
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    free = inotify_free()
    if free is not None and sessions > free[0]:
        raise BackendError(
            f"--concurrency {sessions} needs {sessions} inotify instances (one file watcher a "
            f"session); {free[0]} of this user's {free[1]} (fs.inotify.max_user_instances) are free: "
            "raise it (sysctl -w fs.inotify.max_user_instances=1024), or lower --concurrency"
        )

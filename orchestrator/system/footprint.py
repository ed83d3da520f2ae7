"""What processes leave behind in space: disk taken under folders, and private mounts filled.

Both are measured from outside, by a process that does not trust what it measures: folders
are walked without following a link, a file linked many times is counted once, and a sparse
file counts what it holds on disk, not its length.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["disk_usage", "full_mounts"]


def disk_usage(tops: Iterable[Path], *, stop_at: int | None = None) -> int:
    """Bytes on disk of every file and folder under ``tops`` (the tops' own entries aside);
    once the count is past ``stop_at`` it stops there (the walk of a flood is cut short)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    folders = [str(top) for top in tops]
    while folders:
        try:
            entries = os.scandir(folders.pop())
        except OSError:  # gone, or not a folder: nothing of it to count
            continue
        with entries:
            for entry in entries:
                try:
                    status = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if status.st_nlink > 1 and not entry.is_dir(follow_symlinks=False):
                    inode = (status.st_dev, status.st_ino)
                    if inode in seen:
                        continue
                    seen.add(inode)
                total += status.st_blocks * 512
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
        if stop_at is not None and total > stop_at:
            break
    return total


def full_mounts(pids: Iterable[int], places: Sequence[str]) -> dict[str, int]:
    """Which of ``places`` (mount points, e.g. ``/tmp``) are full as processes ``pids`` see
    them (through ``/proc/PID/root``, one process per mount namespace), with the bytes each
    holds. A place a process does not have, or that cannot be looked at, is left out."""
    full: dict[str, int] = {}
    namespaces: set[str] = set()
    with contextlib.suppress(OSError):
        namespaces.add(os.readlink("/proc/self/ns/mnt"))  # our own places are not theirs
    for pid in pids:
        try:
            namespace = os.readlink(f"/proc/{pid}/ns/mnt")
        except OSError:
            continue
        if namespace in namespaces:
            continue
        namespaces.add(namespace)
        for place in places:
            try:
                status = os.statvfs(Path(f"/proc/{pid}/root", place.lstrip("/")))
            except OSError:
                continue
            if status.f_blocks and (status.f_bavail == 0 or status.f_favail == 0):
                full[place] = max(full.get(place, 0), (status.f_blocks - status.f_bfree) * status.f_frsize)
    return full

"""bubblewrap's command line, with no policy: whether it runs here, the namespaces, the mounts
and the capabilities asked for, and the switch to another user (``setpriv``).

What a sandbox shows and to whom is decided above (``grading/sandbox.py`` for hidden test runs,
``grading/agent_sandbox.py`` for agents); this module only turns "bind this there, cover that,
drop to this user" into arguments.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

__all__ = [
    "DROP_TO_USER",
    "NAMESPACES",
    "SandboxUser",
    "bind",
    "bubblewrap_problem",
    "bwrap",
    "capabilities",
    "cover",
    "namespaces",
    "read_only_system",
    "setpriv",
    "tmpfs",
]

#: Namespaces every sandboxed process gets (the network and the user are the caller's choice).
NAMESPACES = ("--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try")


def namespaces(*, network: bool, user: bool, cgroup: bool = True) -> list[str]:
    """The namespaces to unshare: always :data:`NAMESPACES` (the cgroup one unless not ``cgroup``);
    the network's unless the process keeps the ``network``; a user namespace if ``user``."""
    unshared = [n for n in NAMESPACES if cgroup or n != "--unshare-cgroup-try"]
    return [*unshared, *([] if network else ["--unshare-net"]), *(["--unshare-user"] if user else [])]


def bwrap(
    namespaces: Sequence[str], capabilities: Sequence[str], mounts: Sequence[str], *options: str
) -> list[str]:
    """bubblewrap's command line up to ``--chdir``: ``namespaces``, dying with its parent, in a
    session of its own (no terminal to push input into), ``options``, ``capabilities``, ``mounts``."""
    return ["bwrap", *namespaces, "--die-with-parent", "--new-session", *options, *capabilities, *mounts]


@dataclass(frozen=True, slots=True)
class SandboxUser:
    """A separate user processes run as."""

    name: str
    uid: int
    gid: int


def capabilities(*kept: str) -> list[str]:
    """bubblewrap's arguments that drop every capability but ``kept`` (names without ``CAP_``)."""
    return ["--cap-drop", "ALL", *(f for name in kept for f in ("--cap-add", f"CAP_{name}"))]


#: As root: only what dropping to another user takes (:func:`setpriv` then takes these away too).
DROP_TO_USER = capabilities("SETUID", "SETGID", "SETPCAP")


def setpriv(user: SandboxUser | None) -> list[str]:
    """A prefix that runs the command after it as ``user``: no supplementary groups, no
    inheritable capabilities, an empty bounding set, no new privileges (none: no prefix)."""
    if user is None:
        return []
    return [
        "setpriv",
        f"--reuid={user.uid}",
        f"--regid={user.gid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
    ]


def bind(source: Path, dest: PurePath, *, writable: bool = False) -> list[str]:
    """Bind ``source`` at ``dest``, its missing parents made traversable (bubblewrap makes them 0700)."""
    parents = [f for parent in reversed(dest.parents[:-1]) for f in ("--perms", "0755", "--dir", str(parent))]
    return [*parents, "--bind" if writable else "--ro-bind", str(source), str(dest)]


def cover(paths: Sequence[Path]) -> list[str]:
    """An empty folder in memory over each of ``paths`` that is a folder (the rest are skipped)."""
    mounts: list[str] = []
    for path in paths:
        if path.is_dir():
            mounts += ["--tmpfs", str(path)]
    return mounts


def tmpfs(place: str, size: int | None = None) -> list[str]:
    """A fresh folder in memory at ``place``, writable by all (sticky), of ``size`` bytes if given."""
    return ["--perms", "1777", *(["--size", str(size)] if size is not None else []), "--tmpfs", place]


def read_only_system(folders: Sequence[str]) -> list[str]:
    """``folders`` of the machine read-only where they are, its top-level links into ``usr/`` as
    they are, and the target of a linked ``/etc/resolv.conf`` (often in ``/run``)."""
    mounts: list[str] = []
    for entry in sorted(Path("/").iterdir()):
        if entry.is_symlink() and os.readlink(entry).startswith("usr/"):
            mounts += ["--symlink", os.readlink(entry), str(entry)]
    for folder in folders:
        if Path(folder).is_dir() and not Path(folder).is_symlink():
            mounts += ["--ro-bind", folder, folder]
    resolv = Path("/etc/resolv.conf")
    if resolv.is_symlink():
        target = resolv.resolve()
        if target.is_file():
            mounts += ["--ro-bind", str(target), str(target)]
    return mounts


def bubblewrap_problem(probe_user: SandboxUser) -> str:
    """Why bubblewrap cannot confine a process here ("" when it can): not installed, or its
    namespaces (a user namespace unless root; as root, then a switch to ``probe_user``) fail."""
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (Debian package bubblewrap)"
    if os.geteuid() != 0:
        probe_args = ["--unshare-user", "--unshare-all"]
    else:  # as root: the namespaces without a user namespace, then setpriv to an unprivileged user
        probe_args = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
    drop = setpriv(probe_user if os.geteuid() == 0 else None)
    mounts = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    probe = subprocess.run(
        ["bwrap", *probe_args, "--die-with-parent", *mounts, *drop, "true"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if probe.returncode != 0:
        return f"bubblewrap cannot start here: {probe.stderr.strip()[:200]}"
    return ""

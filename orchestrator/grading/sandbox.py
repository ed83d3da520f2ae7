"""Sandboxes for hidden test runs and for agents: bubblewrap where it runs, else a weaker fallback.

With bubblewrap, a hidden test run sees the whole machine read-only, with the run folder and
the challenge folder hidden behind empty mounts, a fresh ``/tmp``, no network, no
capabilities and its own PID namespace; only the snapshot copy is writable and the hidden
tests are read-only. Every process also gets resource limits (address space, processes,
open files, CPU time, file size) through ``prlimit``.

Where bubblewrap cannot run, the fallback (``user``) keeps the resource limits and runs the
tests as a separate user (``nobody``, or ``$CHANGEUP_SANDBOX_USER``) without capabilities,
in a scratch folder outside the run folder: it can write only its own copy of the snapshot
and cannot touch the log, the shadow repository, the workspace or changeup's processes.
That needs changeup to run as root and the grading interpreter to be reachable by that
user; failing either, only the limits remain (``limits-only``). The weaker sandbox and the
reason for it are always logged — never silent.

An agent's sandbox hides the challenge folder (hidden tests, later messages, solutions),
the other runs and the snapshot repository; it keeps the network, which agents need.
"""

from __future__ import annotations

import functools
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Limits", "Sandbox", "SandboxUser", "detect_sandbox"]


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits for every process of a hidden test run."""

    memory_mb: int = 4096
    processes: int = 512
    open_files: int = 1024
    cpu_seconds: int = 600
    file_mb: int = 512

    def prlimit(self, uid: int | None = None) -> list[str]:
        """A ``prlimit`` prefix that applies these limits to the command after it, run as ``uid``."""
        mine = _processes_of(os.getuid() if uid is None else uid)
        return [
            "prlimit",
            f"--as={self.memory_mb * 1024 * 1024}",
            # RLIMIT_NPROC counts every process of the user, so the budget is on top of those.
            f"--nproc={mine + self.processes}",
            f"--nofile={self.open_files}",
            f"--cpu={self.cpu_seconds}",
            f"--fsize={self.file_mb * 1024 * 1024}",
            "--",
        ]


def _processes_of(uid: int) -> int:
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += len(list((entry / "task").iterdir()))
            except OSError:
                continue
    return count


@dataclass(frozen=True, slots=True)
class SandboxUser:
    """The separate user hidden tests run as in the ``user`` fallback."""

    name: str
    uid: int
    gid: int


@dataclass(frozen=True, slots=True)
class Sandbox:
    """How commands are confined: ``bubblewrap``, ``user`` or ``limits-only`` (with the reason why)."""

    kind: str
    reason: str = ""
    limits: Limits = field(default_factory=Limits)
    user: SandboxUser | None = None

    def describe(self) -> dict[str, Any]:
        """For the log and the manifest."""
        described = {"kind": self.kind, "reason": self.reason, "limits": asdict(self.limits)}
        return {**described, "user": self.user.name} if self.user else described

    def workdir(self, scratch: Path) -> Path:
        """A new private folder for one test run: in ``scratch``, or for a separate user, in
        the system's temporary folder (the run folder stays closed to that user)."""
        if self.user is None:
            scratch.mkdir(parents=True, exist_ok=True)
            return Path(tempfile.mkdtemp(prefix="run-", dir=scratch))
        folder = Path(tempfile.mkdtemp(prefix="changeup-tests-"))
        folder.chmod(0o755)  # the test user reads it (pytest lists it), writes only what it is given
        return folder

    def hand_over(self, folder: Path, writable: Sequence[Path]) -> None:
        """Before a run as a separate user: ``writable`` (inside ``folder``) becomes that user's,
        and the rest of ``folder`` (copies made for this run) readable by it, never writable."""
        if self.user is None:
            return
        owned = tuple(str(path) for path in writable)
        inside = tuple(f"{path}{os.sep}" for path in owned)
        for root, dirs, files in os.walk(folder):
            for name in [*dirs, *files]:
                path = os.path.join(root, name)
                if os.path.islink(path):
                    continue  # the link's target is not ours to change
                if path in owned or path.startswith(inside):
                    os.chown(path, self.user.uid, self.user.gid)
                else:  # readable by all, writable by changeup alone
                    mode = os.stat(path).st_mode & ~0o022
                    os.chmod(path, mode | (0o555 if os.path.isdir(path) else 0o444))

    def tests(
        self,
        argv: Sequence[str],
        *,
        writable: Sequence[Path],
        readable: Sequence[Path],
        hide: Sequence[Path],
    ) -> list[str]:
        """``argv`` confined as a hidden test run: only ``writable`` may change, nothing may call out."""
        if self.kind == "none":
            return list(argv)
        if self.user is not None:
            user = self.user
            return [
                *self.limits.prlimit(user.uid),
                "setpriv",
                f"--reuid={user.uid}",
                f"--regid={user.gid}",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--no-new-privs",
                "--",
                *argv,
            ]
        command = self.limits.prlimit()
        if self.kind != "bubblewrap":
            return [*command, *argv]
        mounts = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        for path in hide:
            if path.exists():
                mounts += ["--tmpfs", str(path)]
        for path in writable:
            mounts += ["--bind", str(path), str(path)]
        for path in readable:
            if path.exists():
                mounts += ["--ro-bind", str(path), str(path)]
        return [
            *command,
            "bwrap",
            "--unshare-all",  # no network, own PID namespace, ...
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            *mounts,
            "--chdir",
            str(writable[0]),
            "--",
            *argv,
        ]

    def agent(self, argv: Sequence[str], *, workspace: Path, folder: Path, hide: Sequence[Path]) -> list[str]:
        """``argv`` confined as an agent: its workspace and notes writable, the challenge unseen."""
        if self.kind != "bubblewrap":
            return list(argv)
        # The machine as it is (agents keep their tools, caches and /tmp), minus what is hidden.
        mounts = ["--bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        for path in hide:
            if path.exists():
                mounts += ["--tmpfs", str(path)]
        mounts += ["--bind", str(workspace), str(workspace), "--bind", str(folder), str(folder)]
        return [
            "bwrap",
            "--unshare-pid",
            "--unshare-ipc",
            "--die-with-parent",
            *mounts,
            "--chdir",
            str(workspace),
            "--",
            *argv,
        ]


@functools.cache
def detect_sandbox(python: str = sys.executable) -> Sandbox:
    """bubblewrap if it is installed and can start a confined process here; else the fallback.

    ``python`` is the grading interpreter: the separate-user fallback needs it reachable.
    ``CHANGEUP_SANDBOX=user`` skips bubblewrap for the fallback; ``=none`` keeps only limits.
    """
    choice = os.environ.get("CHANGEUP_SANDBOX", "")
    if choice == "none":
        return Sandbox("limits-only", "CHANGEUP_SANDBOX=none was set: resource limits only")
    if shutil.which("prlimit") is None:
        return Sandbox("none", "prlimit (util-linux) is not installed: no resource limits")
    why = "CHANGEUP_SANDBOX=user was set" if choice == "user" else _bubblewrap_problem()
    if not why:
        return Sandbox("bubblewrap")
    return _separate_user(python, why)


def _bubblewrap_problem() -> str:
    """Why bubblewrap cannot confine a process here ("" when it can)."""
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (Debian package bubblewrap)"
    probe = subprocess.run(
        [
            "bwrap",
            "--unshare-all",
            "--die-with-parent",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "true",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if probe.returncode != 0:
        return f"bubblewrap cannot start here: {probe.stderr.strip()[:200]}"
    return ""


def _separate_user(python: str, why: str) -> Sandbox:
    """The fallback: limits and a separate user where that can work, else limits only."""
    if os.geteuid() != 0:
        return Sandbox("limits-only", f"{why}; not root, so no separate user: resource limits only")
    name = os.environ.get("CHANGEUP_SANDBOX_USER", "nobody")
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return Sandbox("limits-only", f"{why}; no user {name!r} to run the tests as: resource limits only")
    if shutil.which("setpriv") is None or entry.pw_uid == 0:
        missing = "setpriv (util-linux) is not installed" if entry.pw_uid else f"{name!r} is root"
        return Sandbox("limits-only", f"{why}; {missing}: resource limits only")
    user = SandboxUser(name, entry.pw_uid, entry.pw_gid)
    sandbox = Sandbox("user", f"{why}: tests run as user {name}, with resource limits", user=user)
    probe = subprocess.run(
        sandbox.tests([python, "-I", "-c", "import pytest"], writable=[], readable=[], hide=[]),
        cwd="/",
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if probe.returncode != 0:
        said = (probe.stderr.strip().splitlines() or ["no output"])[-1][:200]
        return Sandbox(
            "limits-only",
            f"{why}; user {name} cannot run the grading interpreter {python} ({said}): resource limits only",
        )
    return sandbox

"""Sandboxes for hidden test runs and for agents: bubblewrap where it runs, else a weaker fallback.

With bubblewrap, a hidden test run sees the whole machine read-only, with the run folder and
the challenge folder hidden behind empty mounts, a fresh ``/tmp``, no network, no
capabilities and its own PID namespace; only the snapshot copy is writable and the hidden
tests are read-only. Every process also gets resource limits (address space, processes,
open files, CPU time, file size) through ``prlimit``. Where bubblewrap cannot run, the
fallback keeps the resource limits and says so in the log — never silently.

An agent's sandbox hides the challenge folder (hidden tests, later messages, solutions),
the other runs and the snapshot repository; it keeps the network, which agents need.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Limits", "Sandbox", "detect_sandbox"]


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits for every process of a hidden test run."""

    memory_mb: int = 4096
    processes: int = 512
    open_files: int = 1024
    cpu_seconds: int = 600
    file_mb: int = 512

    def prlimit(self) -> list[str]:
        """A ``prlimit`` prefix that applies these limits to the command after it."""
        mine = _processes_of_this_user()
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


def _processes_of_this_user() -> int:
    uid = os.getuid()
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
class Sandbox:
    """How commands are confined: ``bubblewrap``, or ``limits-only`` (with the reason why)."""

    kind: str
    reason: str = ""
    limits: Limits = field(default_factory=Limits)

    def describe(self) -> dict[str, Any]:
        """For the log and the manifest."""
        return {"kind": self.kind, "reason": self.reason, "limits": asdict(self.limits)}

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
def detect_sandbox() -> Sandbox:
    """bubblewrap if it is installed and can start a confined process here; else the fallback."""
    if os.environ.get("CHANGEUP_SANDBOX") == "none":
        return Sandbox("limits-only", "CHANGEUP_SANDBOX=none was set: resource limits only")
    if shutil.which("prlimit") is None:
        return Sandbox("none", "prlimit (util-linux) is not installed: no resource limits")
    if shutil.which("bwrap") is None:
        return Sandbox("limits-only", "bubblewrap is not installed (Debian package bubblewrap)")
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
        return Sandbox("limits-only", f"bubblewrap cannot start here: {probe.stderr.strip()[:200]}")
    return Sandbox("bubblewrap")

"""Sandboxes for hidden test runs and for agents: bubblewrap where it runs, else a weaker fallback.

**Hidden tests** (bubblewrap). A pytest run's root is empty but for its private runtime
(``runtime.py``: the interpreter, its standard library and the libraries they load, and the
tools and system data the challenge declares, copied where no agent can look), the grading
environment (read-only), the hidden tests (read-only), the harness, and the snapshot copy
and an output folder (writable), all under ``/changeup``; no network, no IPC, its own PID
namespace, a fresh ``/tmp``. Nothing the test process can open is a file an agent process can
see, so nothing it does to files is observable. As root, the bootstrap drops to the test user
(uid 65532) before it imports anything, so the process limit holds; not as root, bubblewrap
maps the caller's user and drops every capability. A test *command* (a phase with
``command:``) has the same view, its programs being the challenge's declared tools; as root,
``launch.py`` drops it to the test user. A *verifier* command (``verifier.py``) also gets the
run's folders where its task expects them (:class:`Mount`), which only bubblewrap can make.

A session's pytest runs are forks of its **warm interpreter** (``zygote.py``, started by
:meth:`Sandbox.warm`): the same view, with each run's folders mounted by its own child in
namespaces of its own, so a run sees exactly what a cold run sees.

**Agents** have a sandbox of their own, an allow-list (``agent_sandbox.py``); it shares this
module's kinds. Both decide what a sandbox shows; the bubblewrap and ``setpriv`` arguments that
make it are built by ``orchestrator/system/bubblewrap.py``, which decides nothing.

Every process also gets resource limits (address space, processes, open files, CPU time,
file size) through ``prlimit`` (a warm run sets them itself), and dies with its run:
bubblewrap's PID namespace (a warm run's own), or the reaper outside it (``processes.py``).
Where the machine has control groups, a whole run is in one too (``bounds.py``): its memory,
processes and CPUs together, its ``/tmp`` and ``/dev/shm`` of a size.

**Fallbacks.** Where bubblewrap cannot run, hidden tests run as a separate user (``user``:
``nobody`` or ``$CHANGEUP_SANDBOX_USER``, through ``setpriv``) in a folder outside the run
folder, or with the limits alone (``limits-only``); agents run as they are, with a private
HOME. The weaker sandbox and the reason for it are always logged — never silent.
"""

from __future__ import annotations

import functools
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePath, PurePosixPath
from typing import Any

from orchestrator.system.bubblewrap import (
    DROP_TO_USER,
    SandboxUser,
    bind,
    bubblewrap_problem,
    bwrap,
    capabilities,
    namespaces,
    setpriv,
    tmpfs,
)
from orchestrator.system.processes import reaped
from orchestrator.system.runtime import TEST_USER, Runtime
from orchestrator.system.venvs import Environment

__all__ = [
    "INSIDE",
    "Limits",
    "Mount",
    "Places",
    "Sandbox",
    "detect_sandbox",
    "mount_problem",
    "pids_cgroup",
]

#: Where a hidden test run's folders are, inside bubblewrap.
INSIDE = Path("/changeup")
#: What the warm interpreter keeps: making each run's namespaces and mounts (SYS_ADMIN), bringing
#: up its loopback (NET_ADMIN), and dropping its test process to the test user.
WARM_CAPABILITIES = ("SYS_ADMIN", "NET_ADMIN", "SETUID", "SETGID", "SETPCAP")


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits for every process of a hidden test run."""

    memory_mb: int = 4096
    processes: int = 512
    open_files: int = 1024
    cpu_seconds: int = 600
    file_mb: int = 512

    def nproc(self, uid: int | None = None) -> int:
        """The process limit for a run as ``uid``: RLIMIT_NPROC counts every process of the user,
        so the budget is on top of those it has now."""
        return _processes_of(os.getuid() if uid is None else uid) + self.processes

    def prlimit(self, uid: int | None = None) -> list[str]:
        """A ``prlimit`` prefix that applies these limits to the command after it, run as ``uid``."""
        return [
            "prlimit",
            f"--as={self.memory_mb * 1024 * 1024}",
            f"--nproc={self.nproc(uid)}",
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
class Places:
    """A hidden test run's folders and interpreter as the test process sees them."""

    ws: Path
    hidden: Path
    out: Path
    harness: Path
    python: str
    user: tuple[int, int] | None  # the bootstrap drops to this user first (bubblewrap as root)


@dataclass(frozen=True, slots=True)
class Mount:
    """A folder of the run bound where a test command expects it (a verifier's ``/app``)."""

    source: Path
    dest: PurePosixPath
    writable: bool = False


@dataclass(frozen=True, slots=True)
class Sandbox:
    """How commands are confined: ``bubblewrap``, ``user`` or ``limits-only`` (with the reason why)."""

    kind: str
    reason: str = ""
    limits: Limits = field(default_factory=Limits)
    user: SandboxUser | None = None  # the ``user`` fallback's test user

    @property
    def as_root(self) -> bool:
        """Whether changeup runs as root (then sandboxed processes get users of their own)."""
        return os.geteuid() == 0

    def describe(self) -> dict[str, Any]:
        """For the log and the manifest."""
        described = {"kind": self.kind, "reason": self.reason, "limits": asdict(self.limits)}
        return {**described, "user": self.user.name} if self.user else described

    # --- hidden tests ---------------------------------------------------------------------

    def _test_user(self) -> SandboxUser | None:
        if self.kind == "bubblewrap" and self.as_root:
            return SandboxUser("tests", *TEST_USER)
        return self.user

    def test_uid(self) -> int:
        """The uid hidden tests run as (whose processes the process limit counts)."""
        user = self._test_user()
        return user.uid if user else os.getuid()

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
        user = self._test_user()
        if user is None:
            return
        owned = tuple(str(path) for path in writable)
        inside = tuple(f"{path}{os.sep}" for path in owned)
        folder.chmod(0o755)
        for root, dirs, files in os.walk(folder):
            for name in [*dirs, *files]:
                path = os.path.join(root, name)
                if os.path.islink(path):
                    continue  # the link's target is not ours to change
                if path in owned or path.startswith(inside):
                    os.chown(path, user.uid, user.gid)
                else:  # readable by all, writable by changeup alone
                    mode = os.stat(path).st_mode & ~0o022
                    os.chmod(path, mode | (0o555 if os.path.isdir(path) else 0o444))

    def places(self, folder: Path, environment: Environment) -> Places:
        """Where a test run in ``folder`` finds its folders, as the test process sees them."""
        if self.kind == "bubblewrap":
            user = TEST_USER if self.as_root else None
            python = str(INSIDE / "env" / "bin" / "python")
            return Places(INSIDE / "ws", INSIDE / "hidden", INSIDE / "out", INSIDE / "harness", python, user)
        return Places(
            folder / "ws", folder / "hidden", folder / "out", folder / "harness", environment.python, None
        )

    def tests(
        self,
        argv: Sequence[str],
        folder: Path,
        environment: Environment,
        *,
        runtime: Runtime | None,
        mounts: Sequence[Mount] = (),
        workdir: PurePath | None = None,
        tmp_mb: int | None = None,
        join: Sequence[str] = (),
    ) -> list[str]:
        """``argv`` (given in :meth:`places` terms) confined as a hidden test run in ``folder``.

        Under bubblewrap the run sees only its ``runtime`` (required there) and its own folders;
        as root, ``argv`` drops to the test user itself (the bootstrap, or ``launch.py`` for a
        test command). A test command's ``mounts`` (bubblewrap only: check each place with
        :func:`mount_problem` first) come last, and it starts in ``workdir`` (by default the
        snapshot's copy; made, empty, when no mount holds it). Its ``/tmp`` and ``/dev/shm`` hold
        ``tmp_mb`` each; ``join`` (a control group's launcher) goes first, so the whole run is in
        that group.
        """
        if mounts and self.kind != "bubblewrap":
            raise ValueError(f"mounts for a test command need bubblewrap, not the {self.kind} sandbox")
        if self.kind == "none":
            return [*join, *argv]
        user = self._test_user()
        if self.kind != "bubblewrap":
            limits = self.limits.prlimit(user.uid if user else None)
            # As root the reaper caps the tree in a pids cgroup of its own, unless it is in the run's.
            pids = self.limits.processes if self.as_root and user is None and not join else None
            return [*join, *limits, *reaped([*setpriv(user), *argv], pids=pids)]
        if runtime is None:
            raise ValueError("a hidden test run under bubblewrap sees its private runtime: none was given")
        # As root, the bootstrap or the launcher drops to the test user, which takes these away.
        kept = DROP_TO_USER if self.as_root else capabilities()
        view = [*_runtime_mounts(runtime), *_hidden_view(environment, tmp_mb)]
        for name, writable in (("hidden", False), ("harness", False), ("ws", True), ("out", True)):
            view += bind(folder / name, INSIDE / name, writable=writable)
        for mount in mounts:
            view += bind(mount.source, mount.dest, writable=mount.writable)
        start = PurePosixPath(workdir or INSIDE / "ws")
        if not any(start.is_relative_to(p) for p in (INSIDE, *(m.dest for m in mounts))):
            view += ["--perms", "0755", "--dir", str(start)]
        view += ["--remount-ro", "/"]  # after every mount point is made in it
        return [
            *join,
            *self.limits.prlimit(user.uid if user else None),
            *self._bubblewrap(kept, view),
            "--chdir",
            str(start),
            "--",
            *argv,
        ]

    def host(
        self,
        argv: Sequence[str],
        folder: Path,
        environment: Environment,
        *,
        runtime: Runtime | None,
        user: SandboxUser | None,
        tmp_mb: int | None = None,
        join: Sequence[str] = (),
    ) -> list[str]:
        """``argv`` confined as a cold workspace host (``isolation.py``) for a test run in ``folder``.

        Under bubblewrap it sees what a hidden run sees but the hidden tests and the run's
        output: the private runtime, the grading environment and the harness read-only, the
        snapshot copy writable, an empty folder of its own where the output would be, in
        namespaces of its own (it drops to ``user`` itself, as the bootstrap does). Otherwise it
        runs as ``user`` (the separate-user fallback) or as it is. ``tmp_mb`` and ``join`` as
        :meth:`tests` takes them.
        """
        if self.kind == "none":
            return [*join, *argv]
        if self.kind != "bubblewrap":
            limits = self.limits.prlimit(user.uid if user else None)
            pids = self.limits.processes if self.as_root and user is None and not join else None
            return [*join, *limits, *reaped([*setpriv(user), *argv], pids=pids)]
        if runtime is None:
            raise ValueError("a workspace host under bubblewrap needs the private runtime")
        kept = DROP_TO_USER if self.as_root else capabilities()
        view = [*_runtime_mounts(runtime), *_hidden_view(environment, tmp_mb)]
        view += bind(folder / "harness", INSIDE / "harness")
        view += bind(folder / "ws", INSIDE / "ws", writable=True)
        view += ["--perms", "1777", "--tmpfs", str(INSIDE / "out")]
        return [
            *join,
            *self.limits.prlimit(user.uid if user else None),
            *self._bubblewrap(kept, view),
            "--chdir",
            str(INSIDE / "ws"),
            "--",
            *argv,
        ]

    def warm(
        self,
        folder: Path,
        environment: Environment,
        runtime: Runtime,
        zygote: str,
        preload: Sequence[tuple[str, str]] = (),
        cgroups: Mapping[str, Path] | None = None,
    ) -> list[str]:
        """The warm interpreter's command line (``zygote.py``, named in :meth:`places` terms);
        ``preload``: scripts of the harness (path, module name) it imports once, for every run.

        Its sandbox is a hidden run's (the private runtime, the grading environment, no
        network, a PID namespace of its own) with ``folder/harness`` read-only and every run
        folder (``folder/runs``) beside it; each run's child mounts its own folders where a
        cold run has them and covers the rest. The zygote keeps what it needs to make each
        child's namespaces and to drop to the test user; the root and ``/dev`` are read-only.
        Its limits are set by each run for itself (``zygote.py``), not here. ``cgroups`` (each
        hierarchy's group of the session's test runs) are bound under ``/changeup/cgroup``,
        where each run's child joins its run's group; the zygote stays in changeup's own cgroup
        namespace, so that group is in reach of it (each run gets a namespace of its own).
        """
        kept = capabilities(*WARM_CAPABILITIES)
        mounts = [*_runtime_mounts(runtime), *_hidden_view(environment)]
        mounts += bind(folder / "harness", INSIDE / "harness")
        mounts += bind(folder / "runs", INSIDE / "runs", writable=True)
        for name in ("hidden", "ws", "out"):  # where each run's child mounts its own
            mounts += ["--dir", str(INSIDE / name)]
        for key, path in (cgroups or {}).items():
            mounts += bind(path, INSIDE / "cgroup" / key, writable=True)
        mounts += ["--remount-ro", "/dev", "--remount-ro", "/"]
        config = {
            "bootstrap": str(INSIDE / "harness" / "bootstrap.py"),
            "runs": str(INSIDE / "runs"),
            "binds": [[name, str(INSIDE / name), name != "hidden"] for name in ("hidden", "ws", "out")],
            "workdir": str(INSIDE / "ws"),
            "user": list(TEST_USER) if self.as_root else None,
            "limits": asdict(self.limits),
            "preload": [list(pair) for pair in preload],
            "cgroups": str(INSIDE / "cgroup") if cgroups else None,
        }
        # The zygote is PID 1 itself: when it ends, the kernel ends every process of its
        # sandbox before bubblewrap (which then exits) sees it end, not some time after.
        return [
            *self._bubblewrap(kept, mounts, "--as-pid-1", cgroup_namespace=False),
            "--chdir",
            "/",
            "--",
            str(INSIDE / "env" / "bin" / "python"),
            "-I",
            "-B",
            zygote,
            json.dumps(config),
        ]

    def _bubblewrap(
        self, kept: list[str], mounts: list[str], *options: str, cgroup_namespace: bool = True
    ) -> list[str]:
        """bubblewrap with a hidden run's namespaces: no network; a user namespace unless root."""
        unshared = namespaces(network=False, user=not self.as_root, cgroup=cgroup_namespace)
        return bwrap(unshared, kept, mounts, *options)


def _hidden_view(environment: Environment, tmp_mb: int | None = None) -> list[str]:
    """What every hidden run sees besides its root: devices, its ``/proc``, a fresh ``/tmp`` (and
    ``/dev/shm``, each of ``tmp_mb`` when given), and the grading environment (read-only) at
    ``/changeup/env`` and at its own path, where its scripts' ``#!`` lines name its interpreter
    (the runtime holds the mount point)."""
    size = tmp_mb * 1024 * 1024 if tmp_mb is not None else None
    mounts = ["--dev", "/dev", "--proc", "/proc", *tmpfs("/tmp", size)]
    if size is not None:
        mounts += tmpfs("/dev/shm", size)
    own = ["--ro-bind", str(environment.prefix), str(environment.prefix)]
    return mounts + bind(environment.prefix, INSIDE / "env") + own


def _runtime_mounts(runtime: Runtime) -> list[str]:
    mounts: list[str] = []
    for name, what in runtime.tops():
        mounts += ["--symlink", what, name] if isinstance(what, str) else ["--ro-bind", str(what), name]
    return mounts


#: Top folders of a hidden run's view that bubblewrap makes itself: no mount goes in them.
_MADE_BY_THE_SANDBOX = ("changeup", "dev", "proc")


def mount_problem(dest: PurePosixPath, runtime: Runtime) -> str:
    """Why a test command's view, built on ``runtime``, cannot have a mount at ``dest`` ("" when it can).

    The view is the runtime's top folders, read-only, over an empty root, and a mount needs a
    mount point: bubblewrap makes one (and its missing parents, :func:`bind`) in that root or
    in the fresh ``/tmp``, but not inside a read-only folder of the runtime. So ``dest`` is under
    a top folder the runtime does not have (``/app``, ``/logs/verifier``) or under ``/tmp``.
    """
    if not dest.is_absolute() or len(dest.parts) < 2 or ".." in dest.parts:
        return f"{dest} is not an absolute folder below /"
    top = dest.parts[1]
    if top in _MADE_BY_THE_SANDBOX:
        return f"{dest} is inside /{top}, which the sandbox makes itself"
    if top == "tmp":  # a fresh tmpfs of its own
        return ""
    held = sorted(name for name, _ in runtime.tops())
    if f"/{top}" not in held:
        return ""
    return (
        f"{dest} is inside /{top}, a read-only folder of the tests' private root: no mount point can be "
        f"made there (use a path whose top folder is none of {', '.join(held)}, e.g. /app)"
    )


#: Whom the probe of bubblewrap switches to, as root: the test user, as a hidden run would.
PROBE_USER = SandboxUser("probe", *TEST_USER)


@functools.cache
def detect_sandbox(python: str = sys.executable) -> Sandbox:
    """bubblewrap if it is installed and can start a confined process here; else the fallback.

    ``python`` is the grading interpreter: the separate-user fallback needs it reachable.
    ``CHANGEUP_SANDBOX=user`` skips bubblewrap for the fallback; ``=none`` keeps only limits.
    """
    choice = os.environ.get("CHANGEUP_SANDBOX", "")
    if choice == "none":
        return _limits_only("CHANGEUP_SANDBOX=none was set")
    if shutil.which("prlimit") is None:
        return Sandbox("none", "prlimit (util-linux) is not installed: no resource limits")
    why = "CHANGEUP_SANDBOX=user was set" if choice == "user" else bubblewrap_problem(PROBE_USER)
    if not why:
        return Sandbox("bubblewrap")
    return _separate_user(python, why)


def _limits_only(why: str) -> Sandbox:
    """Resource limits alone; as root, the process limit holds only where a pids cgroup can be made."""
    reason = f"{why}: resource limits only"
    if os.geteuid() == 0 and not pids_cgroup():
        reason += " (and no writable pids cgroup: the process limit does not hold for root)"
    return Sandbox("limits-only", reason)


def pids_cgroup() -> bool:
    """Whether the reaper can put a tree in a pids cgroup here (v2, or v1's pids hierarchy)."""
    v2 = Path("/sys/fs/cgroup")
    if (v2 / "cgroup.controllers").is_file():
        return "pids" in (v2 / "cgroup.controllers").read_text().split() and os.access(v2, os.W_OK)
    return os.access(v2 / "pids", os.W_OK) and (v2 / "pids" / "cgroup.procs").is_file()


def _separate_user(python: str, why: str) -> Sandbox:
    """The fallback: limits and a separate user where that can work, else limits only."""
    if os.geteuid() != 0:
        return _limits_only(f"{why}; not root, so no separate user")
    name = os.environ.get("CHANGEUP_SANDBOX_USER", "nobody")
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return _limits_only(f"{why}; no user {name!r} to run the tests as")
    if shutil.which("setpriv") is None or entry.pw_uid == 0:
        missing = "setpriv (util-linux) is not installed" if entry.pw_uid else f"{name!r} is root"
        return _limits_only(f"{why}; {missing}")
    user = SandboxUser(name, entry.pw_uid, entry.pw_gid)
    sandbox = Sandbox("user", f"{why}: tests run as user {name}, with resource limits", user=user)
    probe = subprocess.run(
        [*setpriv(user), python, "-I", "-c", "import pytest"],
        cwd="/",
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if probe.returncode != 0:
        said = (probe.stderr.strip().splitlines() or ["no output"])[-1][:200]
        return _limits_only(f"{why}; user {name} cannot run the grading interpreter {python} ({said})")
    return sandbox

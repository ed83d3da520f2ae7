"""The agent's sandbox: an allow-list, not the machine with some folders covered.

With bubblewrap an agent sees the system (``/usr``, ``/etc``, ``/opt``) read-only. It may
write only its workspace, the run's agent folder (message files, transcripts, a CLI's
history), a private HOME (seeded from the agent CLI's own config and credentials: each
preset's ``home_files``; the copies are removed when the run ends) and private ``/tmp``,
``/var/tmp`` and ``/dev/shm`` (memory of a size each, fresh for each sandbox: a ``command:``
agent's turn). It may read its own Python environment, its CLI's installation (see
:func:`program_shares`) and anything given with ``--agent-share``. Not there at all:
changeup's own installation, the grading environments and the cache, the challenge, every
run folder (where one of them lies under a system folder, it is covered). As root, the agent
runs as its own unprivileged user (uid 65533, through ``setpriv``: no groups, no
capabilities, an empty bounding set, no new privileges); not as root, in a user namespace
with no capabilities. The network stays, unless ``--agent-network none`` (a network namespace
of its own, with only its loopback) or ``model``: that too, and in it the model gateway at the
port it has on the machine, relayed by a forwarder (``system/forwarder.py``, started before the
agent, as root where changeup is: the agent cannot signal it) to the gateway's Unix socket,
bound read-only at :data:`MODEL_FOLDER`. No other port of the machine, no other address.

Every process of the sandbox, every turn, is in the agent's control group (``bounds.py``),
joined before the sandbox starts: its memory, processes and CPUs are limited there, and
:meth:`AgentSandbox.frozen` holds all of it still while a hidden test runs.

Without bubblewrap an agent runs as it is, under the reaper, with a private HOME and
temporary folder only: nothing is hidden from it, and the run says so.
"""

from __future__ import annotations

import contextlib
import shlex
import shutil
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from orchestrator.grading.bounds import MB, Bounds
from orchestrator.grading.sandbox import Sandbox
from orchestrator.system.agentfiles import AgentFolder
from orchestrator.system.bubblewrap import (
    DROP_TO_USER,
    SandboxUser,
    bind,
    bwrap,
    capabilities,
    cover,
    namespaces,
    read_only_system,
    setpriv,
    tmpfs,
)
from orchestrator.system.cgroups import Cgroup
from orchestrator.system.forwarder import forwarded
from orchestrator.system.processes import reaped

__all__ = [
    "AGENT_HOME",
    "AGENT_USER",
    "MODEL_FOLDER",
    "AgentSandbox",
    "AgentView",
    "Frozen",
    "Share",
    "program_shares",
]


#: The agent's ids, as root (a user of its own: nothing on the machine belongs to it).
AGENT_USER = (65533, 65533)


#: The agent's HOME, inside bubblewrap.
AGENT_HOME = Path("/home/agent")


#: What an agent sees of the machine, read-only.
SYSTEM = ("/usr", "/etc", "/opt")

#: Its private folders in memory, each of ``tmp_mb``.
IN_MEMORY = ("/tmp", "/var/tmp", "/dev/shm")

#: Where the model gateway's Unix socket is seen, with ``--agent-network model``.
MODEL_FOLDER = Path("/run/changeup-model")

#: How long the agent may take to freeze; past it, its processes are killed instead.
FREEZE_LIMIT = 10.0
#: Tries within that time: a v1 freezer can stick half-way (a parent waiting on its vfork child,
#: the child already frozen), which thawing and freezing again undoes.
FREEZE_TRIES = 3


@dataclass(frozen=True, slots=True)
class Share:
    """A path of the machine an agent may see (read-only unless ``writable``)."""

    path: Path
    writable: bool = False


@dataclass(frozen=True, slots=True)
class AgentView:
    """What an agent's sandbox is made of, as folders of the machine."""

    workspace: Path
    notes: Path  # the run's agent/ folder: message files, transcripts, a CLI's history
    home: Path  # the private HOME
    tmp: Path  # the sandbox's passwd and group; without bubblewrap, the agent's temporary folder
    shares: tuple[Share, ...] = ()
    hide: tuple[Path, ...] = ()  # never seen, even where a share or the system would show it
    network: bool = True
    model_only: bool = False  # the model gateway is its only way out (``network`` is False)
    python: str = "python3"  # an interpreter the sandbox shows: runs the gateway's forwarder


@dataclass(slots=True)
class Frozen:
    """One span the agent was held still: for how long, and whether it had to be killed instead
    (it would not freeze in time). ``held`` is False where there is no freezer."""

    held: bool = False
    seconds: float = 0.0
    killed: bool = False


class AgentSandbox:
    """One run's agent sandbox: the command line each agent process gets, its environment, its
    bounds (``cgroup``: the agent's control group, None where there is none)."""

    def __init__(
        self, sandbox: Sandbox, view: AgentView, bounds: Bounds, cgroup: Cgroup | None = None
    ) -> None:
        self.sandbox = sandbox
        self.view = view
        self.bounds = bounds
        self.cgroup = cgroup
        self.confined = sandbox.kind == "bubblewrap"
        self._seeded: list[str] = []
        self._given: dict[str, str] = {}
        self._withheld: tuple[str, ...] = ()
        self._model: tuple[Path, int] | None = None
        self._clocks: list[anyio.CancelScope] = []  # deadlines that frozen time does not count for

    @property
    def home(self) -> Path:
        """The agent's HOME, as it sees it."""
        return AGENT_HOME if self.confined else self.view.home

    def describe(self) -> dict[str, Any]:
        """For the log: how confined the agent is, what it sees besides its own folders."""
        return {
            "confined": self.confined,
            "user": "agent" if self.confined and self.sandbox.as_root else None,
            "network": "model" if self.view.model_only else "full" if self.view.network else "none",
            "shares": [{"path": str(s.path), "writable": s.writable} for s in self.view.shares],
        }

    def disk(self) -> list[Path]:
        """The folders of the machine's disk the agent can fill (measured against its disk limit)."""
        view = self.view
        return [view.workspace, view.home, view.notes, *([] if self.confined else [view.tmp])]

    def prepare(self, home_files: Sequence[str]) -> list[str]:
        """Make the private folders (as root, the agent user's) and the sandbox's passwd, and seed
        the private HOME with ``home_files`` of the real one; returns those that were there."""
        view = self.view
        for folder in (view.home, view.tmp / "tmp", view.tmp / "var-tmp", view.notes):
            folder.mkdir(parents=True, exist_ok=True)
        view.home.chmod(0o700)
        self._seeded = _seed(view.home, home_files)
        if self.confined and self.sandbox.as_root:
            self._own()
        return self._seeded

    def forget_seeded(self) -> None:
        """Remove the seeded configuration and credentials (what the agent wrote itself stays).

        The agent may have put links on the way (``.config`` → a host folder): nothing is
        followed. With changeup's own rights, so a folder the agent made read-only cannot keep a
        credential in the run folder; with no link followed, they reach only what is in HOME."""
        home = AgentFolder(self.view.home, as_owner=False)
        for name in self._seeded:
            with contextlib.suppress(OSError):
                home.remove(name)

    def _own(self) -> None:
        """As root: the agent's folders become the agent user's; its passwd names it."""
        view = self.view
        uid, gid = AGENT_USER
        for top in (view.workspace, view.home, view.tmp, view.notes):
            AgentFolder(top).give_to(uid, gid)  # a link is changed itself, never what it points to
        passwd = Path("/etc/passwd").read_text() if Path("/etc/passwd").is_file() else ""
        group = Path("/etc/group").read_text() if Path("/etc/group").is_file() else ""
        (view.tmp / "passwd").write_text(
            f"{passwd.rstrip()}\nagent:x:{uid}:{gid}:agent:{AGENT_HOME}:/bin/sh\n"
        )
        (view.tmp / "group").write_text(f"{group.rstrip()}\nagent:x:{gid}:\n")

    def give(self, variables: Mapping[str, str], withheld: Sequence[str]) -> None:
        """From now on every agent process gets ``variables``, and no variable whose value holds
        one of ``withheld`` (the model gateway's: its base URLs and token in, the real keys out)."""
        self._given = dict(variables)
        self._withheld = tuple(value for value in withheld if value)

    def env(self, env: dict[str, str]) -> dict[str, str]:
        """``env`` as the agent gets it: its private HOME and temporary folder (and what it was
        given, less what is withheld: :meth:`give`)."""
        tmp = "/tmp" if self.confined else str(self.view.tmp / "tmp")
        kept = {name: value for name, value in env.items() if not any(s in value for s in self._withheld)}
        env = {**kept, **self._given, "HOME": str(self.home), "TMPDIR": tmp}
        if self.confined and self.sandbox.as_root:
            env.update(USER="agent", LOGNAME="agent")
        return env

    def reach_model(self, unix: Path, port: int) -> None:
        """With a model-only network, from now on every agent process reaches the gateway listening
        on the Unix socket ``unix`` at ``127.0.0.1:port`` (until then it reaches nothing)."""
        self._model = (unix, port)

    @contextlib.asynccontextmanager
    async def frozen(self) -> AsyncIterator[Frozen]:
        """Hold every process of the agent still for the block (and any that starts meanwhile), then
        let them go. One that will not freeze within ``FREEZE_LIMIT`` is killed instead (its turn
        ends): nothing of the agent runs during the block either way. Without a freezer, nothing
        is held (``held`` False)."""
        span = Frozen()
        group = self.cgroup
        if group is None or not group.can_freeze:
            yield span
            return
        span.held = True
        start = anyio.current_time()
        try:
            if not await _freeze(group):
                span.killed = True
                await group.kill()
                await group.freeze(FREEZE_LIMIT)  # empty: at once, and what joins it stays still
            yield span
        finally:
            with anyio.CancelScope(shield=True):
                group.thaw()
                span.seconds = anyio.current_time() - start
                for clock in self._clocks:
                    clock.deadline += span.seconds

    @contextlib.contextmanager
    def excluding_frozen(self, clock: anyio.CancelScope) -> Iterator[None]:
        """For the block, ``clock``'s deadline moves on by every span the agent is frozen."""
        self._clocks.append(clock)
        try:
            yield
        finally:
            self._clocks.remove(clock)

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` confined as the agent (in its control group, if it has one)."""
        join = self.cgroup.launcher() if self.cgroup is not None else []
        if not self.confined:
            return [*join, *reaped(argv)]
        view, as_root = self.view, self.sandbox.as_root
        # As root, setpriv drops to the agent's user, which takes these away; else no capability.
        kept = DROP_TO_USER if as_root else capabilities()
        drop = setpriv(SandboxUser("agent", *AGENT_USER)) if as_root else []
        mounts = read_only_system(SYSTEM)
        mounts += cover([path for path in view.hide if _in_system(path)])
        mounts += ["--dev", "/dev", "--proc", "/proc"]
        for place in IN_MEMORY:
            mounts += tmpfs(place, self.bounds.tmp_mb * MB)
        if self.sandbox.as_root:
            mounts += ["--ro-bind", str(view.tmp / "passwd"), "/etc/passwd"]
            mounts += ["--ro-bind", str(view.tmp / "group"), "/etc/group"]
        mounts += bind(view.home, AGENT_HOME, writable=True)
        for share in view.shares:
            if share.path.exists():
                mounts += bind(share.path, share.path, writable=share.writable)
        for folder in (view.workspace, view.notes):
            mounts += bind(folder, folder, writable=True)
        relay: list[str] = []
        if view.model_only and self._model is not None:
            unix, port = self._model
            mounts += bind(unix.parent, MODEL_FOLDER)
            relay = forwarded(view.python, MODEL_FOLDER / unix.name, port)
        return [
            *join,
            *bwrap(namespaces(network=view.network, user=not as_root), kept, mounts),
            "--chdir",
            str(view.workspace),
            "--",
            *relay,
            *drop,
            *argv,
        ]


def program_shares(program: str, path: str | None = None) -> list[Share]:
    """What an agent must see to run ``program``: a program named by its path is shown itself
    (the file, not its folder); one found on ``path`` with its installation (its folder, or the
    prefix above its ``bin``). Either way, where it is a script of an interpreter outside the
    system folders, that interpreter's installation (a virtual environment and its base) too."""
    found = shutil.which(program, path=path) if "/" not in program else None
    prefixes: set[Path] = set()
    todo, seen = [Path(found).absolute()] if found else [], set()
    if "/" in program and Path(program).is_file():
        script = Path(program).absolute()
        prefixes.add(script)
        interpreter = _shebang(script.resolve())
        todo += [interpreter] if interpreter is not None else []
    while todo:
        where = todo.pop()
        if where in seen or not where.exists():
            continue
        seen.add(where)
        real = where.resolve()
        for folder in {where.parent, real.parent} - {p for p in (where.parent, real.parent) if _in_system(p)}:
            prefix = folder.parent if folder.name == "bin" else folder
            prefixes.add(prefix)
            home = _venv_home(prefix)
            if home is not None:
                todo.append(home / "python3")
        interpreter = _shebang(real)
        if interpreter is not None:
            todo.append(interpreter)
    return [Share(prefix) for prefix in sorted(prefixes)]


def _venv_home(prefix: Path) -> Path | None:
    """The base interpreter's folder of the virtual environment at ``prefix`` (None: not one)."""
    config = prefix / "pyvenv.cfg"
    if not config.is_file():
        return None
    for line in config.read_text().splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home":
            return Path(value.strip())
    return None


def _in_system(path: Path) -> bool:
    return any(path == Path(folder) or Path(folder) in path.parents for folder in SYSTEM) or path in (
        Path("/bin"),
        Path("/sbin"),
    )


def _shebang(path: Path) -> Path | None:
    try:
        with path.open("rb") as handle:
            first = handle.read(256).split(b"\n", 1)[0]
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = shlex.split(first[2:].decode("utf-8", "replace"))
    if not words or not words[0].startswith("/") or Path(words[0]).name == "env":
        return None
    return Path(words[0])


def _seed(home: Path, names: Sequence[str]) -> list[str]:
    """Copy each of ``names`` (relative to the real HOME; files or folders) into ``home``."""
    real = Path.home()
    seeded = []
    for name in names:
        source = real / name
        if not source.exists() or Path(name).is_absolute() or ".." in Path(name).parts:
            continue
        target = home / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, symlinks=False, dirs_exist_ok=True)
        else:
            shutil.copyfile(source, target)
            target.chmod(0o600)
        seeded.append(name)
    return seeded


async def _freeze(group: Cgroup) -> bool:
    """Freeze ``group`` within ``FREEZE_LIMIT``, in ``FREEZE_TRIES`` tries: a try that sticks is
    thawed, so the process it caught half-way runs on, then tried again; False if none held."""
    for _ in range(FREEZE_TRIES):
        if await group.freeze(FREEZE_LIMIT / FREEZE_TRIES):
            return True
        group.thaw()
        await anyio.sleep(0.05)
    return False

"""Control groups: a tree of processes under memory, process and CPU limits, frozen and thawed whole.

A :class:`Cgroup` is one group in every hierarchy this process can use: with cgroup v2 (the
unified hierarchy, its controllers delegated) one folder; with v1 (a hierarchy a controller)
one folder in each of ``memory``, ``pids``, ``cpu`` and ``freezer``. It can

- take limits (:meth:`~Cgroup.limit`): memory (swap included where there is swap), tasks
  (processes and threads) and CPUs (a CFS quota);
- take processes before they run anything (:meth:`~Cgroup.launcher`: a shell that joins every
  hierarchy, then execs the command), or by pid (:meth:`~Cgroup.add`);
- freeze and thaw (:meth:`~Cgroup.freeze` waits until the kernel says it is frozen, with a
  time limit);
- say what was hit (:meth:`~Cgroup.usage`: the memory peak, OOM kills, forks refused, the
  tasks' peak, shared memory still charged to it);
- end every process in it (:meth:`~Cgroup.kill`) and go (:meth:`~Cgroup.remove`).

Where groups can be made is found by ``hierarchies.py``. Policy (which limits, which
processes, what going over means) is the caller's.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:  # only read: hierarchies.py imports this module
    from orchestrator.system.hierarchies import Support

__all__ = [
    "CONTROLLERS",
    "JOIN_FAILED",
    "LIMITERS",
    "PERIOD_US",
    "V1_JOIN",
    "Cgroup",
    "CgroupError",
    "Usage",
    "enable_controllers",
    "remove_groups",
]

#: What a group can do here: three limits and the freezer.
CONTROLLERS = ("memory", "pids", "cpu", "freezer")
#: The controllers that limit (the freezer holds still).
LIMITERS = ("memory", "pids", "cpu")
#: The CFS period a CPU quota is given in (the kernel's default): a CPU is this much a period.
PERIOD_US = 100_000
#: Joins through each file named (``$1`` of them, :attr:`Cgroup.joins`), then runs the command:
#: nothing of the command runs outside the group. The freezer comes last, so a frozen group
#: stops it there. ``0`` is the writer itself (the shell, one thread: ``echo`` is built in).
_JOIN = (
    'n=$1; shift; while [ "$n" -gt 0 ]; do echo 0 > "$1" || exit 125; shift; n=$((n - 1)); done; exec "$@"'
)
#: The file a process writes ``0`` to, to move itself into a v1 group: ``tasks`` moves the writing
#: thread alone, which for a process of one thread (a fresh fork, a shell) is the whole process,
#: and its children are born inside. The kernel takes no machine-wide lock for that: moving by
#: ``cgroup.procs`` takes one whose first taking waits out an RCU grace period, 10-13 ms here, on
#: the way of every agent turn and every test run. v2 has only ``cgroup.procs``.
V1_JOIN = "tasks"
#: The exit of :meth:`Cgroup.launcher` when it cannot join its group.
JOIN_FAILED = 125


class CgroupError(OSError):
    """A group could not be made, limited, frozen, emptied or removed; the message says which and why."""


@dataclass(frozen=True, slots=True)
class Usage:
    """What a group's processes used and hit (None: this kernel does not say)."""

    memory_peak: int | None = None  # bytes
    oom_kills: int = 0  # processes the OOM killer ended at the group's memory limit
    tasks_peak: int | None = None
    forks_refused: int = 0  # forks and clones refused at the group's task limit
    shmem: int = 0  # bytes of shared memory (tmpfs, memfd, System V) still charged to the group


class Cgroup:
    """One control group (a folder in each hierarchy it spans)."""

    def __init__(self, version: int, paths: Mapping[str, Path], controllers: Iterable[str]) -> None:
        self.version = version
        self.paths = dict(paths)  # hierarchy (v1 controller, or "unified") → folder
        self.controllers = frozenset(controllers)

    def __repr__(self) -> str:
        return f"Cgroup(v{self.version}, {sorted(str(p) for p in self.paths.values())})"

    @classmethod
    def create(cls, where: Support, name: str) -> Cgroup:
        """A new group ``name`` in ``where``'s bases."""
        if where.version is None:
            raise CgroupError(f"no control groups here: {where.missing}")
        group = cls(where.version, {key: base / name for key, base in where.bases}, where.controllers)
        group._make()
        return group

    def child(self, name: str, controllers: Iterable[str] | None = None) -> Cgroup:
        """A new group ``name`` below this one (``controllers``: a subset of this one's)."""
        chosen = self.controllers if controllers is None else self.controllers & frozenset(controllers)
        if self.version == 2:
            paths = {key: path / name for key, path in self.paths.items()}
        else:
            paths = {key: path / name for key, path in self.paths.items() if key in chosen}
        group = Cgroup(self.version, paths, chosen)
        group._make()
        return group

    def _make(self) -> None:
        made: list[Path] = []
        try:
            for path in self.paths.values():
                if self.version == 2:
                    enable_controllers(path.parent, self.controllers & frozenset(LIMITERS))
                path.mkdir()
                made.append(path)
        except OSError as error:
            for path in made:
                with contextlib.suppress(OSError):
                    path.rmdir()
            if isinstance(error, CgroupError):
                raise
            why = f"cannot make the control group {error.filename}: {error.strerror}"
            raise CgroupError(error.errno, why) from None

    # --- limits and members -------------------------------------------------------------

    def limit(
        self, *, memory: int | None = None, tasks: int | None = None, cpus: float | None = None
    ) -> None:
        """At most ``memory`` bytes (swap included), ``tasks`` processes and threads, ``cpus`` CPUs."""
        if memory is not None and "memory" in self.controllers:
            if self.version == 1:
                _write(self._file("memory", "memory.limit_in_bytes"), str(memory))
                _write_if(self._file("memory", "memory.memsw.limit_in_bytes"), str(memory))
            else:
                _write(self._file("memory", "memory.max"), str(memory))
                _write_if(self._file("memory", "memory.swap.max"), "0")  # no swap beyond the limit
        if tasks is not None and "pids" in self.controllers:
            _write(self._file("pids", "pids.max"), str(tasks))
        if cpus is not None and "cpu" in self.controllers:
            quota = max(1000, round(cpus * PERIOD_US))
            if self.version == 1:
                _write(self._file("cpu", "cpu.cfs_period_us"), str(PERIOD_US))
                _write(self._file("cpu", "cpu.cfs_quota_us"), str(quota))
            else:
                _write(self._file("cpu", "cpu.max"), f"{quota} {PERIOD_US}")

    @property
    def procs(self) -> list[Path]:
        """Each hierarchy's ``cgroup.procs`` (the freezer's last): writing a pid there moves it in."""
        keys = sorted(self.paths, key=lambda key: key == "freezer")
        return [self.paths[key] / "cgroup.procs" for key in keys]

    @property
    def join_file(self) -> str:
        """The name of the file in each of the group's folders that a process of one thread writes
        ``0`` to, to move itself in (see :data:`V1_JOIN`)."""
        return V1_JOIN if self.version == 1 else "cgroup.procs"

    @property
    def joins(self) -> list[Path]:
        """Each hierarchy's :attr:`join_file` (the freezer's last)."""
        return [path.with_name(self.join_file) for path in self.procs]

    def launcher(self) -> list[str]:
        """An argument prefix that puts the command after it in this group before it runs (it
        exits ``JOIN_FAILED``, saying so, when it cannot)."""
        joins = self.joins
        return ["/bin/sh", "-c", _JOIN, "join", str(len(joins)), *map(str, joins)]

    def add(self, pid: int) -> None:
        """Move process ``pid`` (all its threads) into this group."""
        for procs in self.procs:
            _write(procs, str(pid))

    def pids(self) -> set[int]:
        """The processes in this group and every group below it."""
        found: set[int] = set()
        for path in self.paths.values():
            for folder, _, _ in os.walk(path):
                with contextlib.suppress(OSError):
                    found.update(int(pid) for pid in Path(folder, "cgroup.procs").read_text().split())
        return found

    # --- freezing -------------------------------------------------------------------------

    @property
    def can_freeze(self) -> bool:
        """Whether this group has a freezer."""
        return "freezer" in self.controllers

    async def freeze(self, timeout: float) -> bool:
        """Freeze every process of the group; True once the kernel says it is frozen, False if
        that took longer than ``timeout`` seconds (it stays freezing: thaw or kill it)."""
        if not self.can_freeze:
            raise CgroupError(f"{self!r} has no freezer")
        if self.version == 1:
            _write(self._file("freezer", "freezer.state"), "FROZEN")
        else:
            _write(self._file("freezer", "cgroup.freeze"), "1")
        deadline = anyio.current_time() + timeout
        pause = 0.0005
        while not self._frozen():
            if anyio.current_time() >= deadline:
                return False
            await anyio.sleep(pause)
            pause = min(pause * 2, 0.05)
        return True

    def thaw(self) -> None:
        """Let every process of the group run again."""
        if self.version == 1:
            _write(self._file("freezer", "freezer.state"), "THAWED")
        else:
            _write(self._file("freezer", "cgroup.freeze"), "0")

    def _frozen_state(self) -> str:
        return _read(self._file("freezer", "freezer.state")).strip()

    def _frozen(self) -> bool:
        if self.version == 1:
            return self._frozen_state() == "FROZEN"
        return _keyed(self._file("freezer", "cgroup.events")).get("frozen") == 1

    # --- what happened ----------------------------------------------------------------------

    def usage(self) -> Usage:
        """What the group's processes used and hit so far (its subtree's, where the kernel adds up)."""
        memory: dict[str, int] = {}
        pids: dict[str, int] = {}
        peak = tasks = None
        shmem = 0
        if "memory" in self.controllers:
            stat = _keyed(self._file("memory", "memory.stat"))
            if self.version == 1:
                peak = _number(self._file("memory", "memory.max_usage_in_bytes"))
                memory = _keyed(self._file("memory", "memory.oom_control"))
                shmem = stat.get("total_shmem", stat.get("shmem", 0))
            else:
                peak = _number(self._file("memory", "memory.peak"))
                memory = _keyed(self._file("memory", "memory.events"))
                shmem = stat.get("shmem", 0)
        if "pids" in self.controllers:
            tasks = _number(self._file("pids", "pids.peak"))
            pids = _keyed(self._file("pids", "pids.events"))
        return Usage(peak, memory.get("oom_kill", 0), tasks, pids.get("max", 0), shmem)

    # --- the end ----------------------------------------------------------------------------

    async def kill(self, timeout: float = 10.0) -> None:
        """SIGKILL every process of the group and below, until none is left (a frozen group
        stays frozen: empty, and still for whatever joins it)."""
        if not self.pids():
            return
        deadline = anyio.current_time() + timeout
        kill_file = self.paths.get("unified", Path("/nonexistent")) / "cgroup.kill"
        frozen = self.version == 1 and self.can_freeze and self._frozen_state() != "THAWED"
        while self.pids():
            if kill_file.is_file():
                _write(kill_file, "1")  # v2 kills the subtree, frozen or forking, at once
            else:  # v1: stop the forks, kill what is there, let the killed run to their end
                if self.can_freeze:
                    _write(self._file("freezer", "freezer.state"), "FROZEN")
                for pid in self.pids():
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                if self.can_freeze:
                    self.thaw()
            if anyio.current_time() >= deadline:
                raise CgroupError(f"processes {sorted(self.pids())[:10]} of {self!r} outlived {timeout:g}s")
            await anyio.sleep(0.005)
        if frozen:  # as it was: whatever joins it now stays still
            _write(self._file("freezer", "freezer.state"), "FROZEN")

    async def settle(self, timeout: float) -> bool:
        """Wait until no process is left in the group and no shared memory is charged to it (a
        namespace's shared memory goes some time after its last process); False if either is
        still there after ``timeout`` seconds."""
        deadline = anyio.current_time() + timeout
        while self.pids() or self.usage().shmem:
            if anyio.current_time() >= deadline:
                return False
            await anyio.sleep(0.002)
        return True

    async def remove(self, timeout: float = 10.0) -> None:
        """Kill what is left in the group and below (thawed first: a frozen process dies only
        once it runs), then remove it and every group below it."""
        if self.can_freeze:
            name, thawed = ("freezer.state", "THAWED") if self.version == 1 else ("cgroup.freeze", "0")
            for folder, _, _ in os.walk(self._file("freezer", "")):
                with contextlib.suppress(OSError):
                    _write(Path(folder, name), thawed)
        await self.kill(timeout)
        self.rmdir()

    def rmdir(self) -> None:
        """Remove this group and every group below it (each must hold no process by now)."""
        for path in self.paths.values():
            remove_groups(path)

    def _file(self, controller: str, name: str) -> Path:
        return self.paths["unified" if self.version == 2 else controller] / name


def enable_controllers(parent: Path, controllers: frozenset[str]) -> None:
    """Give ``parent``'s new children ``controllers`` (v2: its ``cgroup.subtree_control``)."""
    enabled = set(_read(parent / "cgroup.subtree_control").split())
    wanted = sorted(controllers - enabled)
    if wanted:
        _write(parent / "cgroup.subtree_control", " ".join(f"+{name}" for name in wanted))


def remove_groups(top: Path) -> None:
    """Remove the group folder ``top`` and those below it, deepest first (each must be empty)."""
    if not top.is_dir():
        return
    for folder, _, _ in sorted(os.walk(top), key=lambda entry: -len(Path(entry[0]).parts)):
        try:
            os.rmdir(folder)
        except FileNotFoundError:
            continue
        except OSError as error:
            why = f"cannot remove the control group {folder}: {error.strerror}"
            raise CgroupError(error.errno, why) from None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as error:
        raise CgroupError(error.errno, f"cannot read {path}: {error.strerror}") from None


def _write(path: Path, value: str) -> None:
    try:
        with open(path, "w") as handle:  # one write(2): cgroup files take a value a write
            handle.write(value)
    except OSError as error:
        raise CgroupError(error.errno, f"cannot write {value!r} to {path}: {error.strerror}") from None


def _write_if(path: Path, value: str) -> None:
    """Write ``value`` where the kernel has the file (swap accounting is optional)."""
    if path.exists():
        _write(path, value)


def _number(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _keyed(path: Path) -> dict[str, int]:
    """A flat keyed file (``key value`` a line), as numbers; empty where it is missing."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return {}
    pairs = (line.split() for line in lines)
    return {pair[0]: int(pair[1]) for pair in pairs if len(pair) == 2 and pair[1].lstrip("-").isdigit()}

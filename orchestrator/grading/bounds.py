"""Bounds on both sides: the agent's and each hidden test run's limits, and their control groups.

A session's processes are held in control groups (``orchestrator/system/cgroups.py``)::

    changeup-<pid>-<token>/   the session
        agent/                every process of the agent's sandbox, every turn: its memory,
                              processes and CPUs limited; frozen while a hidden test runs
        tests/
            run-<n>/          one hidden test run (every batch and command of it): its own
                              memory, processes and CPUs; gone before the run is reported

The limits come from the challenge's ``limits:`` (:func:`agent_bounds`, :func:`test_bounds`),
resolved for this machine where a default is a share of it. Besides the groups, the agent's
``/tmp``, ``/var/tmp`` and ``/dev/shm`` and a test run's ``/tmp`` and ``/dev/shm`` are
size-limited mounts, and the disk the agent can fill is watched (``session/agent_limits.py``).

A freeze cannot outlive changeup: each session's groups have a keeper (``system/keeper.py``), a
small process outside them that, once changeup is gone however it went (``SIGKILL`` included),
thaws the groups, kills every process in them and removes them. Without a keeper the agent is
not frozen. The freezer is on wherever there is one; ``CHANGEUP_FREEZE=off`` turns it off (the
run says so).

Where the machine has no control groups changeup can write (not root, no delegation), the
session goes on with the mounts' sizes, the disk watch and a test run's per-process limits
(``sandbox.Limits``), and says so: :meth:`SessionGroups.describe` carries the warnings into
the log (``agent.sandboxed``) and the report.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from dataclasses import asdict, dataclass
from typing import Any

from orchestrator.challenge.model import Limits
from orchestrator.system.cgroups import Cgroup, CgroupError
from orchestrator.system.hierarchies import Support, support, sweep
from orchestrator.system.keeper import Keeper, KeeperError

__all__ = ["Bounds", "RunGroup", "SessionGroups", "agent_bounds", "test_bounds"]

MB = 1024 * 1024
#: The session groups' names start with this (then changeup's pid: a dead one's are swept).
PREFIX = "changeup-"
#: How long a finished run's shared memory may take to go (a namespace's goes after its processes).
SHARED_MEMORY_GRACE = 0.25


@dataclass(frozen=True, slots=True)
class Bounds:
    """One side's limits, resolved: memory and mount sizes in MB; ``disk_mb`` only for the agent."""

    memory_mb: int
    processes: int
    cpus: float
    tmp_mb: int
    disk_mb: int | None = None


def machine_memory_mb() -> int:
    """This machine's memory, in MB."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // MB


def machine_cpus() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0))


def agent_bounds(limits: Limits) -> Bounds:
    """The agent's bounds: a quarter of the machine's memory (at least 1 GiB) and half its CPUs
    (at least one) unless the challenge says otherwise."""
    memory = limits.agent_memory_mb or max(1024, machine_memory_mb() // 4)
    cpus = limits.agent_cpus or max(1.0, machine_cpus() / 2)
    return Bounds(
        int(memory), limits.agent_processes, cpus, int(limits.agent_tmp_mb), int(limits.agent_disk_mb)
    )


def test_bounds(limits: Limits) -> Bounds:
    """Each hidden test run's bounds: half the machine's CPUs (at least one) unless the challenge
    says otherwise."""
    cpus = limits.test_cpus or max(1.0, machine_cpus() / 2)
    return Bounds(int(limits.test_memory_mb), limits.test_processes, cpus, int(limits.test_tmp_mb))


class RunGroup:
    """One hidden test run's group: made with the run's limits, gone (its processes and shared
    memory first) by :meth:`close`."""

    def __init__(self, cgroup: Cgroup, bounds: Bounds) -> None:
        self.cgroup = cgroup
        self.bounds = bounds

    async def close(self) -> str:
        """Wait for the run to be gone, remove its group; what it went over, in words ("" if nothing)."""
        with contextlib.suppress(CgroupError):
            await self.cgroup.settle(SHARED_MEMORY_GRACE)
        usage = self.cgroup.usage()
        await self.cgroup.remove()
        over = []
        if usage.oom_kills:
            over.append(
                f"over its memory limit ({self.bounds.memory_mb} MB): the kernel ended "
                f"{usage.oom_kills} of its processes"
            )
        if usage.forks_refused:
            over.append(
                f"over its process limit ({self.bounds.processes}): {usage.forks_refused} forks were refused"
            )
        return "; ".join(over)


class SessionGroups:
    """A session's control groups, or why it has none (then every group is None)."""

    def __init__(
        self,
        where: Support,
        agent_side: Bounds,
        test_side: Bounds,
        session: Cgroup | None = None,
        problem: str = "",
    ) -> None:
        self.where = where
        self.agent_bounds = agent_side
        self.test_bounds = test_side
        self.session = session
        self.problem = problem or where.missing
        self.agent: Cgroup | None = None
        self.tests: Cgroup | None = None
        #: empties and removes the session's groups once changeup is gone (None: no groups, or none
        #: could be started, and then the agent is not frozen)
        self.keeper: Keeper | None = None
        self._runs = 0

    @classmethod
    def make(cls, agent_side: Bounds, test_side: Bounds) -> SessionGroups:
        """The session's groups with the agent's limits; never raises: without groups, says why."""
        where = support()
        if where.version is None:
            return cls(where, agent_side, test_side)
        sweep(where, PREFIX)
        session: Cgroup | None = None
        try:
            session = Cgroup.create(where, f"{PREFIX}{os.getpid()}-{secrets.token_hex(4)}")
            groups = cls(where, agent_side, test_side, session)
            try:
                groups.keeper = Keeper.start(list(session.paths.values()))
            except KeeperError as error:
                groups.problem = str(error)
            # A freeze only where a keeper would thaw it if changeup died during it.
            freezing = _freezing() and groups.keeper is not None
            groups.agent = session.child("agent", None if freezing else ("memory", "pids", "cpu"))
            groups.agent.limit(
                memory=agent_side.memory_mb * MB, tasks=agent_side.processes, cpus=agent_side.cpus
            )
            groups.tests = session.child("tests", ("memory", "pids", "cpu"))
        except CgroupError as error:
            if session is not None:
                with contextlib.suppress(CgroupError):
                    session.rmdir()  # nothing ran in it yet
            return cls(where, agent_side, test_side, problem=str(error))
        return groups

    def _keep(self) -> None:
        """A keeper again if the session's died (nothing but root or the OOM killer ends one)."""
        if self.session is not None and self.keeper is not None and not self.keeper.alive:
            self.keeper.close()
            try:
                self.keeper = Keeper.start(list(self.session.paths.values()))
            except KeeperError as error:  # rare (no Python could start): said from now on
                self.keeper, self.problem = None, str(error)

    def run(self) -> RunGroup | None:
        """A new group for the next hidden test run, with its limits (None: no groups here)."""
        if self.tests is None:
            return None
        self._keep()
        self._runs += 1
        bounds = self.test_bounds
        group = self.tests.child(f"run-{self._runs}")
        # Its tasks include changeup's own few (a warm run's leader and init): the group's limit is
        # the one a run meets first, so going over it is counted (RLIMIT_NPROC counts per user).
        group.limit(memory=bounds.memory_mb * MB, tasks=bounds.processes, cpus=bounds.cpus)
        return RunGroup(group, bounds)

    def warnings(self) -> list[str]:
        """What is not bounded here, in words (none when everything is)."""
        if self.session is None:
            return [
                f"no control groups ({self.problem}): the agent's memory, processes and CPUs are not "
                "limited, a hidden test run has only its per-process limits, and the agent is not frozen "
                "while hidden tests run, so machine-wide counters and timing stay a channel from a "
                "running test to a running agent"
            ]
        said = []
        missing = {"memory": "memory", "pids": "processes", "cpu": "CPUs"}
        for controller, what in missing.items():
            if controller not in self.where.controllers:
                said.append(
                    f"no {controller} control group: the agent's and the test runs' {what} are not limited"
                )
        if self.agent is not None and not self.agent.can_freeze:
            if not _freezing():
                why = "the freezer is off (CHANGEUP_FREEZE=off was set)"
            elif self.keeper is None:
                why = "no keeper process could be started (a freeze could outlive changeup)"
            else:
                why = "no cgroup freezer"
            said.append(
                f"{why}: the agent is not frozen while hidden tests run, so machine-wide "
                "counters and timing stay a channel from a running test to a running agent"
            )
        if said and self.problem:
            said.append(f"(why: {self.problem})")
        return said

    def describe(self) -> dict[str, Any]:
        """For the log: the limits of both sides, the control groups, and what is not bounded."""
        return {
            "cgroups": self.where.version if self.session is not None else None,
            "controllers": sorted(self.where.controllers) if self.session is not None else [],
            "frozen_during_tests": self.agent is not None and self.agent.can_freeze,
            "agent": asdict(self.agent_bounds),
            "tests": asdict(self.test_bounds),
            "warnings": self.warnings(),
        }

    async def aclose(self) -> None:
        """End every process left in the session's groups, and remove them; then let the keeper go."""
        try:
            if self.session is not None:
                await self.session.remove()
        finally:
            if self.keeper is not None:  # what is left (a removal failed), the keeper tries too
                self.keeper.close()


def _freezing() -> bool:
    """Whether the agent is to be frozen while hidden tests run: unless ``CHANGEUP_FREEZE=off``."""
    return os.environ.get("CHANGEUP_FREEZE", "") != "off"

"""The agent's limits, watched: its control group's counters, its full mounts, the disk it fills.

The kernel holds the agent to its memory, process and CPU limits (``grading/bounds.py``): at
the memory limit it ends the largest process of the agent's group, at the process limit a
fork fails, and a full ``/tmp`` answers "no space". The agent lives with that as it would on
a machine that size, and the session goes on; this watch says it happened
(``agent.over_limits``): when it first does, then at most once a minute while it goes on.

The disk the agent can fill on the host (its workspace, HOME and agent folder) has no kernel
limit. It is measured every few seconds (more seldom when a measure takes long, so the watch
costs little), off the event loop; over ``agent_disk_mb`` the session ends: the agent is
stopped and its exit reported, so the engine grades what is there and ends.
"""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import anyio

from orchestrator.grading.agent_sandbox import IN_MEMORY
from orchestrator.grading.bounds import MB, Bounds
from orchestrator.log.records import AgentOverLimits
from orchestrator.system.cgroups import Cgroup
from orchestrator.system.footprint import disk_usage, full_mounts

__all__ = ["ENDS_SESSION", "AgentLimitsWatch"]

#: How often the group's counters are read (cheap: a few small files).
EVERY = 1.0
#: How often the disk is measured at most; a measure that takes long spaces them further.
DISK_EVERY = 5.0
#: A measure of the disk takes at most this share of the time.
DISK_SHARE = 0.1
#: The least time between two records of the same kind of over-use.
REPEAT = 60.0
#: What the session does over the disk limit (an over-use's ``action``).
ENDS_SESSION = "ended the session"


class AgentLimitsWatch:
    """Watches an agent's bounds: its group's counters (``cgroup``, None where there is none)
    and the disk under ``disk`` (its workspace, HOME, agent folder)."""

    def __init__(self, bounds: Bounds, cgroup: Cgroup | None, disk: Sequence[Path]) -> None:
        self.bounds = bounds
        self.cgroup = cgroup
        self.disk = list(disk)
        self._said: dict[str, tuple[float, int]] = {}  # resource → (when, count) last recorded
        self._full: set[str] = set()  # the mounts full at the last look
        self._filled = 0

    async def overuses(self) -> AsyncIterator[AgentOverLimits]:
        """Every over-use worth a record, as it is seen; ends after the disk's (the session ends then)."""
        next_disk = anyio.current_time()
        while True:
            for overuse in self._counters():
                yield overuse
            if anyio.current_time() >= next_disk:
                limit = (self.bounds.disk_mb or 0) * MB
                measure = functools.partial(disk_usage, self.disk, stop_at=limit or None)
                started = time.perf_counter()  # the measure's real cost, whatever the session's clock
                used = await anyio.to_thread.run_sync(measure)
                took = time.perf_counter() - started
                next_disk = anyio.current_time() + max(DISK_EVERY, took / DISK_SHARE)
                if limit and used > limit:
                    yield AgentOverLimits(
                        "disk",
                        used,
                        limit,
                        1,
                        f"the agent keeps over {used // MB} MB in its workspace, HOME and agent folder, "
                        f"over its {self.bounds.disk_mb} MB",
                        ENDS_SESSION,
                    )
                    return
            await anyio.sleep(EVERY)

    def unsaid(self) -> list[AgentOverLimits]:
        """Over-uses seen since their kind's last record (held back so as not to repeat it too
        often): for the session's end, so the log has every count as it ended."""
        return [
            overuse for overuse in self._seen() if overuse.count > self._said.get(overuse.resource, (0, 0))[1]
        ]

    def _counters(self) -> list[AgentOverLimits]:
        """Over-uses worth a record now: the first of its kind, or a grown count a while after
        the last record of its kind."""
        now = anyio.current_time()
        found = []
        for overuse in self._seen():
            when, count = self._said.get(overuse.resource, (-REPEAT, 0))
            if overuse.count > count and now - when >= REPEAT:
                self._said[overuse.resource] = (now, overuse.count)
                found.append(overuse)
        return found

    def _seen(self) -> list[AgentOverLimits]:
        """Every kind of over-use the group's counters and mounts show so far."""
        if self.cgroup is None:
            return []
        usage = self.cgroup.usage()
        bounds = self.bounds
        seen = []
        if usage.oom_kills:
            said = f"the kernel ended {usage.oom_kills} of the agent's processes at its memory limit"
            used = usage.memory_peak or bounds.memory_mb * MB
            seen.append(AgentOverLimits("memory", used, bounds.memory_mb * MB, usage.oom_kills, said))
        if usage.forks_refused:
            said = f"{usage.forks_refused} forks of the agent's were refused at its process limit"
            used = usage.tasks_peak or bounds.processes
            seen.append(AgentOverLimits("processes", used, bounds.processes, usage.forks_refused, said))
        full = full_mounts(self.cgroup.pids(), IN_MEMORY)
        self._filled += len(set(full) - self._full)  # each time a mount fills up
        self._full = set(full)
        if self._filled:
            places = ", ".join(sorted(full)) or "a mount"
            said = f"the agent filled its {places} ({bounds.tmp_mb} MB each) {self._filled} time(s)"
            seen.append(
                AgentOverLimits("tmp", max(full.values(), default=0), bounds.tmp_mb * MB, self._filled, said)
            )
        return seen

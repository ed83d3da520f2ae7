"""System plumbing: mechanisms with no policy (files, control groups, pipes), below everything of changeup.

Nothing here imports the rest of ``orchestrator``; every layer above may import it. Each module
does one thing to the machine and says plainly when the machine will not let it.

- :mod:`orchestrator.system.agentfiles`: files an agent can reach, handled at arm's length.
- :mod:`orchestrator.system.folderwatch`: inotify on exactly the folders of a tree, no link followed.
- :mod:`orchestrator.system.pipes`: a results pipe only the runner holds.
- :mod:`orchestrator.system.cgroups`: a control group for a tree of processes.
- :mod:`orchestrator.system.footprint`: disk taken under folders, full private mounts.
- :mod:`orchestrator.system.forkserver`: a process that has done its imports, forking a child per request.
"""

from __future__ import annotations

from orchestrator.system.cgroups import Cgroup, CgroupError, Support, Usage, support
from orchestrator.system.footprint import disk_usage, full_mounts
from orchestrator.system.pipes import ResultPipe

__all__ = [
    "Cgroup",
    "CgroupError",
    "ResultPipe",
    "Support",
    "Usage",
    "agentfiles",
    "disk_usage",
    "folderwatch",
    "forkserver",
    "full_mounts",
    "support",
]

"""System plumbing: mechanisms with no policy (control groups, ...), below everything else.

Nothing here imports the rest of ``orchestrator``: each module does one thing to the machine
and says plainly when the machine will not let it.
"""

from __future__ import annotations

from orchestrator.system.cgroups import Cgroup, CgroupError, Usage
from orchestrator.system.footprint import disk_usage, full_mounts
from orchestrator.system.hierarchies import Support, support, sweep

__all__ = ["Cgroup", "CgroupError", "Support", "Usage", "disk_usage", "full_mounts", "support", "sweep"]

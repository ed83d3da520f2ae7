"""System plumbing: mechanisms with no policy (processes, ...), below everything of changeup.

Nothing here imports the rest of ``orchestrator``; every layer above may import it.

- :mod:`orchestrator.system.forkserver`: a process that has done its imports, forking a child per request.
"""

from __future__ import annotations

__all__ = ["forkserver"]

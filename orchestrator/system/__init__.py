"""System plumbing: mechanisms with no policy (files, processes, pipes), below everything of changeup.

Nothing here imports the rest of ``orchestrator``; every layer above may import it.

- :mod:`orchestrator.system.agentfiles`: files an agent can reach, handled at arm's length.
- :mod:`orchestrator.system.folderwatch`: inotify on exactly the folders of a tree, no link followed.
- :mod:`orchestrator.system.pipes`: a results pipe only the runner holds.
"""

from __future__ import annotations

from orchestrator.system.pipes import ResultPipe

__all__ = ["ResultPipe", "agentfiles", "folderwatch"]

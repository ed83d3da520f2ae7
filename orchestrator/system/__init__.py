"""System plumbing: mechanisms with no policy (files, processes), below everything of changeup.

Nothing here imports the rest of ``orchestrator``; every layer above may import it.

- :mod:`orchestrator.system.agentfiles`: files an agent can reach, handled at arm's length.
- :mod:`orchestrator.system.folderwatch`: inotify on exactly the folders of a tree, no link followed.
"""

from __future__ import annotations

__all__ = ["agentfiles", "folderwatch"]

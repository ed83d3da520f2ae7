"""Watching the workspace: debounced batches of file changes, and a hint when git moved.

The real watcher watches the workspace's own folders and nothing else
(:class:`~orchestrator.system.folderwatch.FolderWatch`): no link is followed, so a link to
``/`` moved into the workspace is a changed file, not a tree to watch, and a name of any
bytes is reported (undecodable bytes as :func:`os.fsdecode` gives them). The ignored folders
(caches, environments, ``.changeup``) are not watched at all; of the agent's ``.git`` only
what a commit changes is (``HEAD``, ``logs/HEAD``, ``refs/``), which sets :attr:`Batch.git`
so the session can look for new commits.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from orchestrator.seams import Batch
from orchestrator.session.workspace import BYTECODE, IGNORED
from orchestrator.system.agentfiles import AgentFolder
from orchestrator.system.folderwatch import Changed, FolderWatch
from triggers import FileChange

__all__ = ["FsWatcher", "classify", "watched"]

_GIT_SIGNALS = (".git/HEAD", ".git/logs/HEAD")


def watched(relative: str) -> bool:
    """Whether the workspace folder ``relative`` is watched: none under an ignored name, and of
    ``.git`` only itself, ``logs`` and ``refs/`` (where a commit shows)."""
    parts = relative.split("/")
    if parts[0] == ".git":
        return len(parts) == 1 or parts[1] == "refs" or relative == ".git/logs"
    return not any(part in IGNORED for part in parts)


def classify(changes: Sequence[tuple[str, Changed]]) -> Batch:
    """Workspace-relative changes as a :class:`Batch`: ignored and bytecode files left out, and
    of ``.git`` only whether a commit may have landed."""
    kept = []
    git = False
    for relative, change in changes:
        if relative.startswith(".git/") or relative == ".git":
            git = git or relative in _GIT_SIGNALS or relative.startswith(".git/refs/")
            continue
        if any(part in IGNORED for part in relative.split("/")) or relative.endswith(BYTECODE):
            continue
        kept.append(FileChange(relative, change))
    return Batch(tuple(kept), git)


class FsWatcher:
    """File-system watcher over a workspace, debounced.

    ``step`` is how long the workspace must stay quiet to close a batch; ``debounce`` caps
    how long one batch may grow while the agent keeps writing. The workspace is listed when
    the watcher is made: the first batch reports what changed between then and when watching
    began, so an agent that writes at once loses nothing.
    """

    def __init__(self, root: Path, *, step: float = 0.03, debounce: float = 0.3) -> None:
        self.root = root.resolve()
        self.step = step
        self.debounce = debounce
        self._watch = FolderWatch(AgentFolder(self.root), watched=watched, step=step, debounce=debounce)
        self._watch.survey()

    def stop(self) -> None:
        """Make the watching return at its next step instead of its next time-out."""
        self._watch.stop()

    async def batches(self) -> AsyncIterator[Batch]:
        """Yield a batch for every burst of changes that touches something we track."""
        async for changes in self._watch.changes():
            batch = classify(changes)
            if batch.changes or batch.git:
                yield batch

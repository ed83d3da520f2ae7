"""Watching the workspace: debounced batches of file changes, and a hint when git moved.

The real watcher wraps watchfiles' ``awatch`` (a Rust notify backend). Changes under the
ignored folders (caches, environments, ``.changeup``) are dropped; changes to the agent's
``.git`` are dropped too, except the ones a commit makes (``HEAD``, ``logs/HEAD``,
``refs/``), which set :attr:`Batch.git` so the session can look for new commits.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import anyio
from watchfiles import Change, awatch

from orchestrator.session.workspace import BYTECODE, IGNORED
from triggers import FileChange

__all__ = ["Batch", "FsWatcher", "classify"]

_GIT_SIGNALS = (".git/HEAD", ".git/logs/HEAD")


@dataclass(frozen=True, slots=True)
class Batch:
    """One debounced batch: the files that changed, and whether a commit may have landed."""

    changes: tuple[FileChange, ...]
    git: bool = False


def classify(root: Path, raw: set[tuple[Change, str]]) -> Batch:
    """Turn watchfiles' raw changes into a :class:`Batch` of workspace-relative paths."""
    added: set[str] = set()
    touched: set[str] = set()
    git = False
    for change, absolute in raw:
        path = Path(absolute)
        try:
            relative = path.relative_to(root).as_posix()
        except ValueError:
            continue
        if relative.startswith(".git/") or relative == ".git":
            git = git or relative in _GIT_SIGNALS or relative.startswith(".git/refs/")
            continue
        if any(part in IGNORED for part in relative.split("/")) or relative.endswith(BYTECODE):
            continue
        if path.is_dir():
            continue
        touched.add(relative)
        if change == Change.added:
            added.add(relative)
    changes = []
    for relative in sorted(touched):
        if not (root / relative).exists():
            changes.append(FileChange(relative, "deleted"))
        else:
            changes.append(FileChange(relative, "added" if relative in added else "modified"))
    return Batch(tuple(changes), git)


class FsWatcher:
    """File-system watcher over a workspace, debounced.

    ``step`` is how long the workspace must stay quiet to close a batch; ``debounce`` caps
    how long one batch may grow while the agent keeps writing.
    """

    def __init__(self, root: Path, *, step: float = 0.03, debounce: float = 0.3) -> None:
        self.root = root.resolve()
        self.step = step
        self.debounce = debounce
        self._stop = anyio.Event()

    def stop(self) -> None:
        """Make the notify thread return at its next step instead of its next time-out."""
        self._stop.set()

    async def batches(self) -> AsyncIterator[Batch]:
        """Yield a batch for every burst of changes that touches something we track."""
        async for raw in awatch(
            self.root,
            step=max(1, int(self.step * 1000)),
            debounce=max(1, int(self.debounce * 1000)),
            watch_filter=None,
            recursive=True,
            stop_event=self._stop,
            rust_timeout=1000,
        ):
            batch = classify(self.root, raw)
            if batch.changes or batch.git:
                yield batch

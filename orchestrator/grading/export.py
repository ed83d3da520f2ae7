"""A test run's copy of its snapshot, made from the copy the run before had, checked first.

A whole export costs as much as copying the workspace, while two snapshots in a row usually
differ by a file or two; so each run's copy is kept for the next, which gets it updated by
the difference of the two trees. The code under test may write into its copy: before reuse
every entry is compared with what was recorded when the copy was handed out.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import anyio

from orchestrator.seams import Repository
from orchestrator.system.git import EMPTY_TREE

__all__ = ["KeptExport"]


#: What any change to an entry alters. No process can set the change time (ctime): every
#: write, chmod, chown, link, rename or extended attribute moves it to the present, and a
#: test process starts long after the facts were taken (since Linux 6.13, a change after a
#: ``stat`` gets a later time whatever the clock's tick).
Facts = tuple[int, int, int, int, int, int, int, int]


def _facts(info: os.stat_result) -> Facts:
    return (
        info.st_ino,
        info.st_mode,
        info.st_uid,
        info.st_gid,
        info.st_nlink,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
    )


def _unchanged(root: Path, facts: dict[str, Facts]) -> bool:
    """Whether every entry recorded in ``facts`` (``""``: ``root`` itself) still has its facts.

    Nothing is listed: adding, removing or renaming an entry moves its folder's change time,
    so an entry that is not recorded shows in its folder's facts.
    """
    top = str(root)
    try:
        return all(
            _facts(os.lstat(f"{top}/{path}" if path else top)) == known for path, known in facts.items()
        )
    except OSError:
        return False


@dataclass(slots=True)
class _Copy:
    """An export of ``tree`` kept in ``path``, and its entries' facts as it was handed out."""

    path: Path
    tree: str
    facts: dict[str, Facts]


class KeptExport:
    """Each test run's copy of its snapshot, made from the copy the run before had.

    A whole export costs as much as copying the workspace, while two snapshots in a row
    usually differ by a file or two. So the copy a run had is kept (in ``home``) and the next
    run gets it updated by the difference of the two trees (:meth:`Workspace.export`).

    The code under test may write into its copy, so before reuse every entry is compared
    with the facts taken when the copy was handed out (see :data:`Facts`): anything a run
    added, removed or changed, its modes and owners included, sends the next run to a fresh
    export, and one run's code never reaches the next. A stale fact can only cause a
    mismatch, never a reuse.
    """

    def __init__(self, repo: Repository, home: Path | None) -> None:
        self.repo = repo
        self.home = home  # None: nothing is kept, every run exports whole
        self._kept: _Copy | None = None
        self._lent: _Copy | None = None

    async def take(self, tree: str, dest: Path, owner: tuple[int, int]) -> None:
        """Make ``dest`` (not there yet) hold snapshot ``tree``'s files, each entry owned by ``owner``."""
        copy, self._kept = self._kept, None  # lent once, whatever happens next
        if copy is not None and not await anyio.to_thread.run_sync(_unchanged, copy.path, copy.facts):
            await anyio.to_thread.run_sync(_discard, copy.path)
            copy = None
        if copy is None:
            copy = _Copy(self._fresh(dest), EMPTY_TREE, {})
        try:
            touched = await self.repo.export(tree, copy.path, base=copy.tree)
            await anyio.to_thread.run_sync(_settle, copy, touched, owner)
            if copy.path != dest:
                copy.path.rename(dest)
            copy.facts[""] = _facts(os.lstat(dest))
        except BaseException:
            _discard(copy.path)  # half made: never kept
            raise
        copy.tree = tree
        self._lent = copy if self.home is not None else None

    def give_back(self, dest: Path) -> None:
        """Keep ``dest``, the copy a run had, for the next run (checked again when it is taken)."""
        copy, self._lent = self._lent, None
        try:
            if copy is None or _facts(os.lstat(dest)) != copy.facts[""]:
                return  # the run's folder goes, and this copy with it
            dest.rename(copy.path)
        except OSError:
            return
        copy.facts[""] = _facts(os.lstat(copy.path))
        if self._kept is not None:  # a run that overlapped this one kept its copy first
            _discard(self._kept.path)
        self._kept = copy

    def _fresh(self, dest: Path) -> Path:
        if self.home is None:
            return dest
        self.home.mkdir(parents=True, exist_ok=True)
        # A new name each time: a discarded copy that could not be deleted is never written into.
        path = Path(tempfile.mkdtemp(prefix="ws-", dir=self.home))
        path.chmod(0o755)
        return path


def _settle(copy: _Copy, touched: list[str], owner: tuple[int, int]) -> None:
    """Give the ``touched`` entries of ``copy`` and their folders to ``owner``; take their facts anew."""
    paths = {""}
    for path in touched:
        parts = path.split("/")
        paths.update("/".join(parts[:end]) for end in range(1, len(parts) + 1))
    for path in paths:
        full = copy.path / path
        try:
            info = os.lstat(full)
        except FileNotFoundError:
            copy.facts.pop(path, None)
            continue
        if (info.st_uid, info.st_gid) != owner:
            os.lchown(full, *owner)
            info = os.lstat(full)
        copy.facts[path] = _facts(info)


def _discard(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)

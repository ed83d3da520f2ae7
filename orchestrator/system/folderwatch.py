"""Watching a tree an agent writes: inotify on exactly its folders, no link followed, any name.

watchfiles' recursive watch follows links to folders (a link to ``/`` moved into a workspace put
watches on the host's ``/usr`` and reported its files as the workspace's) and has no option
not to; and a name that is not UTF-8 stops its watcher for good. So :class:`FolderWatch` uses
watchfiles' notify backend (``RustNotify``) folder by folder, not recursively:

- the folders are found by a walk that follows no link (:func:`~orchestrator.system.agentfiles.walk_at`),
  each opened ``O_PATH`` and handed to notify as ``/proc/self/fd/N``: each watch is on exactly
  the folder that was walked, whatever its path has become. Without ``/proc``, or with more
  folders than descriptors to spare, folders are watched by path, and every event's folder is
  checked to still be the one walked;
- when a folder is added, removed, moved or replaced, or notify fails (on a name that is not
  UTF-8), the folders are watched again and the tree is listed and compared with the last
  listing, so nothing that happened meanwhile is lost, and a name of any bytes is reported
  (as :func:`os.fsdecode` gives it: undecodable bytes as lone surrogates);
- notify's thread starts with the ids of the tree's owner (as :class:`AgentFolder` works).

A batch names entries that are not folders: files, links (as themselves), and any other kind,
relative to the tree, each ``added``, ``modified`` or ``deleted``.
"""

from __future__ import annotations

import contextlib
import os
import resource
import stat
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from functools import partial
from typing import Literal

import anyio
import structlog
from watchfiles._rust_notify import RustNotify, WatchfilesRustInternalError

from orchestrator.system.agentfiles import AgentFolder, walk_at

__all__ = ["Changed", "FolderWatch"]

Changed = Literal["added", "modified", "deleted"]

#: What a listing keeps of an entry: mode, inode, size, modification and change times.
_Signature = tuple[int, int, int, int, int]
_FOLDER = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_BY_DESCRIPTOR = "/proc/self/fd/"
_SPARE_DESCRIPTORS = 256
#: How long to wait before watching again after notify could not start.
_RETRY_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class _Watch:
    """One notify watcher and what its paths are."""

    notify: RustNotify
    folders: dict[str, str]  # the path notify was given → the folder, relative to the tree
    identity: dict[str, tuple[int, int]]  # the folder → (device, inode) when it was walked


class FolderWatch:
    """Debounced batches of changes below ``folder``, in the folders ``watched`` accepts.

    ``watched(relative)`` says whether a folder is watched and walked into (the tree itself
    always is). ``step`` is how long the tree must stay quiet to close a batch; ``debounce``
    caps how long one batch may grow.
    """

    def __init__(
        self, folder: AgentFolder, *, watched: Callable[[str], bool], step: float, debounce: float
    ) -> None:
        self.folder = folder
        self.watched = watched
        self.step = step
        self.debounce = debounce
        #: How many times the folders were watched anew (each time with a new listing).
        self.restarts = 0
        self._stop = threading.Event()  # read by notify's loop in a worker thread
        self._listing: dict[str, _Signature] | None = None  # None: not listed yet
        self._log = structlog.get_logger().bind(watching=str(folder.path))

    def survey(self) -> None:
        """Take the listing the first batch is compared with (else: the tree when watching starts)."""
        self._listing = self.folder.call(self._list)

    def stop(self) -> None:
        """Make :meth:`changes` return at notify's next step."""
        self._stop.set()

    async def changes(self) -> AsyncIterator[list[tuple[str, Changed]]]:
        """Yield each non-empty batch of changes, sorted by path, until stopped."""
        watch: _Watch | None = None
        # notify's wait holds a worker thread up to a second at a time: a thread of its own, so
        # sessions by the dozen in one process never queue for the shared pool's 40 threads.
        waiting = anyio.CapacityLimiter(1)
        try:
            while not self._stop.is_set():
                if watch is None:
                    watch, started = await self._start()
                    if started:
                        yield started
                    continue
                try:
                    raw = await anyio.to_thread.run_sync(
                        watch.notify.watch,
                        max(1, int(self.debounce * 1000)),
                        max(1, int(self.step * 1000)),
                        1000,
                        self._stop,
                        abandon_on_cancel=True,
                        limiter=waiting,
                    )
                except WatchfilesRustInternalError as error:
                    # A name that is not UTF-8 (notify then fails for good), or notify failed.
                    self._log.info("watching anew", reason=str(error)[:300])
                    raw = None
                if raw == "stop":
                    return
                if isinstance(raw, str):  # a time-out: nothing happened
                    continue
                update = partial(self._update, watch, raw) if raw is not None else None
                changed = await self.folder.run(update) if update is not None else None
                if changed is None:  # the folders changed: watch them anew
                    watch.notify.close()
                    watch = None
                elif changed:
                    yield changed
        finally:
            self._stop.set()
            if watch is not None:
                watch.notify.close()

    # --- watching anew ----------------------------------------------------------------------------

    async def _start(self) -> tuple[_Watch | None, list[tuple[str, Changed]]]:
        """Watch every folder, then list the tree: what changed since the last listing."""
        self.restarts += 1

        def start(top: int) -> tuple[_Watch, dict[str, _Signature]]:
            watch = self._watch(top)
            return watch, self._list(top)

        try:
            watch, listing = await self.folder.run(lambda: self.folder.call(start))
        except (OSError, RuntimeError) as error:  # notify could not start: say so, and try again
            self._log.warning("cannot watch the folders", error=str(error)[:300])
            await anyio.sleep(_RETRY_SECONDS)
            return None, []
        changed = _difference(self._listing, listing) if self._listing is not None else []
        self._listing = listing
        unwatched = [
            path
            for path, signature in listing.items()
            if stat.S_ISDIR(signature[0]) and path not in watch.identity and self.watched(path)
        ]
        if unwatched:  # made while the folders were being watched: watch again
            watch.notify.close()
            return None, changed
        return watch, changed

    def _watch(self, top: int) -> _Watch:
        """A notify watcher on every folder below ``top`` that is watched, each by descriptor
        (by path when there are more folders than descriptors to spare)."""
        opened: dict[str, int] = {}
        try:
            opened[""] = os.open(".", _FOLDER, dir_fd=top)
            root = os.fstat(opened[""])
            identity = {"": (root.st_dev, root.st_ino)}
            budget = _descriptor_budget()

            def visit(fd: int, name: str, relative: str, info: os.stat_result) -> None:
                if stat.S_ISDIR(info.st_mode) and self.watched(relative):
                    # Kept even if it cannot be opened (gone, or a link since it was listed): the
                    # next batch or listing tells; watching anew at once could go on for ever.
                    identity[relative] = (info.st_dev, info.st_ino)
                    if len(identity) <= budget:
                        with contextlib.suppress(OSError):
                            opened[relative] = os.open(name, _FOLDER, dir_fd=fd)

            walk_at(top, visit, self.watched)
            for relative, fd in opened.items():
                info = os.fstat(fd)
                identity[relative] = (info.st_dev, info.st_ino)
            if len(identity) <= budget:
                folders = {f"{_BY_DESCRIPTOR}{fd}": relative for relative, fd in opened.items()}
            else:
                folders = _by_path(str(self.folder.path), list(identity))
                self._log.warning("watching folders by path", folders=len(identity))
            notify = RustNotify(list(folders), False, False, 300, False, True)
        finally:
            for fd in opened.values():
                os.close(fd)
        return _Watch(notify, folders, identity)

    def _list(self, top: int) -> dict[str, _Signature]:
        """Every entry in the watched folders below ``top``, folders included."""
        listing: dict[str, _Signature] = {}

        def visit(fd: int, name: str, relative: str, info: os.stat_result) -> None:
            listing[relative] = _signature(info)

        walk_at(top, visit, self.watched)
        return listing

    # --- one batch --------------------------------------------------------------------------------

    def _update(self, watch: _Watch, raw: set[tuple[int, str]]) -> list[tuple[str, Changed]] | None:
        """The changes of one notify batch, the listing brought up to date; None when the folders
        changed (then everything is listed anew)."""
        touched: set[str] = set()
        for _, path in raw:
            if path in watch.folders:
                return None  # a watched folder itself went away or moved
            head, _, name = path.rpartition("/")
            folder = watch.folders.get(head)
            if folder is not None:
                touched.add(f"{folder}/{name}" if folder else name)
        for folder in {path.rpartition("/")[0] for path in touched} - {""}:
            info = self.folder.stat(folder)
            if info is None or (info.st_dev, info.st_ino) != watch.identity.get(folder):
                return None  # not the folder that was walked (moved, or replaced by a link)
        changed: list[tuple[str, Changed]] = []
        listing = self._listing if self._listing is not None else {}
        self._listing = listing
        for path in sorted(touched):
            info = self.folder.stat(path)
            if path in watch.identity:  # a watched folder, gone or replaced
                if info is None or not stat.S_ISDIR(info.st_mode):
                    return None
                continue
            if info is not None and stat.S_ISDIR(info.st_mode):
                if self.watched(path):
                    return None  # a new folder: watch it too
                continue
            before = listing.get(path)
            if before is not None and stat.S_ISDIR(before[0]):
                return None
            if info is None:
                listing.pop(path, None)
                changed.append((path, "deleted"))
            else:
                listing[path] = _signature(info)
                changed.append((path, "added" if before is None else "modified"))
        return changed


def _signature(info: os.stat_result) -> _Signature:
    return (info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _difference(before: dict[str, _Signature], after: dict[str, _Signature]) -> list[tuple[str, Changed]]:
    """What changed between two listings, folders left out (their entries speak for them)."""
    changed: list[tuple[str, Changed]] = []
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path), after.get(path)
        old = None if old is None or stat.S_ISDIR(old[0]) else old
        new = None if new is None or stat.S_ISDIR(new[0]) else new
        if old is None and new is not None:
            changed.append((path, "added"))
        elif new is None and old is not None:
            changed.append((path, "deleted"))
        elif old != new:
            changed.append((path, "modified"))
    return changed


def _descriptor_budget() -> int:
    """How many folders may be held open at once to be watched by descriptor (0: no ``/proc``)."""
    if not os.path.isdir(_BY_DESCRIPTOR):
        return 0
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return max(0, soft - len(os.listdir(_BY_DESCRIPTOR)) - _SPARE_DESCRIPTORS)


def _by_path(root: str, folders: list[str]) -> dict[str, str]:
    """Watch paths for ``folders`` below ``root``; a name notify cannot take (not UTF-8) is left
    out, its changes seen when the folders are next watched anew."""
    paths = {}
    for relative in folders:
        path = os.path.join(root, relative) if relative else root
        try:
            path.encode("utf-8")
        except UnicodeEncodeError:
            continue
        paths[path] = relative
    return paths

"""Files an agent can reach, handled at arm's length: no link followed, regular files only, bounded.

Where an agent writes (its workspace and ``.git``, the run's ``agent/`` folder, its private HOME
and temporary folders, the inbox), anything can stand at a name changeup is about to use: a
link to a host file, a FIFO, a socket, a device node, a hard link, a file of any size, a name of
any bytes. Every host-side read and write there goes through :class:`AgentFolder`, one such
folder (made by changeup, so its own path is trusted; everything below it is the agent's):

- a path below it is opened one component at a time, relative to the folder before, each with
  ``O_NOFOLLOW``: no link is followed anywhere in a path (one is refused, never resolved);
- only a regular file is read: its entry is first opened with ``O_PATH`` (which opens nothing
  for I/O, so a device is never opened and a FIFO never blocks) and looked at with ``fstat``,
  then opened ``O_NONBLOCK`` and checked to be the same inode;
- a read takes at most ``limit`` bytes and says when it stopped there (:class:`Content`);
- a write creates a new file (``O_CREAT|O_EXCL|O_NOFOLLOW``) under a temporary name in the
  parent folder and renames it into place: a link or a hard link at the name is replaced, never
  written through, and a reader never sees half a file;
- folders are made, walked, handed over (``chown``) and removed without following links;
- as root, in a folder owned by another user (the agent's, when it runs as its own user), each
  operation runs with that user's file-system ids (``setfsuid``/``setfsgid``, which Linux keeps
  per thread): no more privilege than the agent's, and what changeup creates there is the
  agent's. Called on the main thread, such an operation runs in a thread of its own, so the
  event loop's thread never changes ids;
- :meth:`AgentFolder.run` does an operation in a worker thread under a time limit, for code on
  the event loop.

Switching ids costs 4.5 µs a call in a worker thread, 50 µs with a new thread; a process of the
agent's user would cost 2.4 ms (``setpriv cat``) to 10 ms (a Python) (measured here).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import shutil
import stat
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import BinaryIO, Literal, TypeVar

import anyio

__all__ = ["MAX_DEPTH", "TIMEOUT", "AgentFileError", "AgentFolder", "Content", "Kind", "kind_of", "walk_at"]

_T = TypeVar("_T")

#: Seconds an operation may take before the caller stops waiting for it.
TIMEOUT = 30.0
#: Folders deeper than this are not walked into (each level holds one descriptor open).
MAX_DEPTH = 256

Kind = Literal["file", "folder", "link", "FIFO", "socket", "character device", "block device", "other"]

_FOLDER = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LISTED = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_ENTRY = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1 << 20

_LIBC = ctypes.CDLL(None, use_errno=True)
#: Whether this system has per-thread file-system ids (Linux).
_FS_IDS = hasattr(_LIBC, "setfsuid") and hasattr(_LIBC, "setfsgid")


class AgentFileError(OSError):
    """An entry changeup will not read or write as asked: the message says where, what is there,
    and what would be accepted."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(code, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, slots=True)
class Content:
    """What a read got: at most ``limit`` bytes; ``capped`` when the file held more."""

    data: bytes
    capped: bool
    size: int  # the file's size when it was opened

    def text(self) -> str:
        """The bytes as UTF-8, with what is not UTF-8 replaced."""
        return self.data.decode("utf-8", "replace")


def kind_of(mode: int) -> Kind:
    """What an entry of this ``st_mode`` is, in words."""
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    return "other"


class AgentFolder:
    """A folder changeup made that an agent writes in; every path given is relative to it.

    ``as_owner`` (the default) runs each operation, as root, with the ids of the folder's owner.
    """

    def __init__(self, path: Path, *, timeout: float = TIMEOUT, as_owner: bool = True) -> None:
        self.path = path
        self.timeout = timeout
        self.as_owner = as_owner

    # --- reading ------------------------------------------------------------------------------

    def read(self, relative: str, *, limit: int, offset: int = 0) -> Content:
        """The regular file at ``relative``, from ``offset``, at most ``limit`` bytes.

        Raises :class:`FileNotFoundError` when nothing is there and :class:`AgentFileError`
        when something other than a regular file is (or a link stands on the way)."""
        parts = self._parts(relative)
        return self.call(lambda top: self._read(top, parts, limit, offset))

    def stat(self, relative: str) -> os.stat_result | None:
        """The entry at ``relative`` itself (a link is not followed); None when there is none
        reachable without following a link."""
        parts = self._parts(relative)
        return self.call(lambda top: self._stat(top, parts))

    def kind(self, relative: str) -> Kind | None:
        """What stands at ``relative`` (None: nothing reachable without following a link)."""
        return None if (info := self.stat(relative)) is None else kind_of(info.st_mode)

    def walk(
        self,
        visit: Callable[[str, os.stat_result], None],
        *,
        descend: Callable[[str], bool] = lambda relative: True,
    ) -> int:
        """Call ``visit(relative, stat)`` for every entry below the folder, parents first, never
        through a link; folders for which ``descend(relative)`` is false are not walked into.
        Returns how many folders were left out (too deep, unreadable, or replaced meanwhile)."""

        def each(fd: int, name: str, relative: str, info: os.stat_result) -> None:
            visit(relative, info)

        return self.call(lambda top: walk_at(top, each, descend))

    # --- writing ------------------------------------------------------------------------------

    def write(self, relative: str, data: bytes, *, mode: int = 0o644) -> None:
        """Make ``relative`` a new regular file holding ``data`` (its folders are made too).

        Whatever stood at the name (a file, a link, a hard link) is replaced, not written
        through; a folder there is an :class:`AgentFileError`."""
        parts = self._parts(relative)
        self.call(lambda top: self._write(top, parts, data, mode))

    def create(self, relative: str, *, mode: int = 0o644) -> BinaryIO:
        """A new, empty regular file in place at ``relative``, open for writing (as :meth:`write`)."""
        parts = self._parts(relative)
        return self.call(lambda top: self._create(top, parts, mode))

    def make_folders(self, relative: str, *, mode: int = 0o755) -> None:
        """Make the folder ``relative`` and those above it that are missing; a link on the way
        is an :class:`AgentFileError`."""
        parts = self._parts(relative)
        self.call(lambda top: os.close(self._folder(top, parts, make=mode)))

    def remove(self, relative: str) -> bool:
        """Remove the entry at ``relative`` (a folder with everything in it; a link, not what it
        points to); False when there is none."""
        parts = self._parts(relative)
        return self.call(lambda top: self._remove(top, parts))

    def give_to(self, uid: int, gid: int) -> None:
        """Make the folder and everything in it belong to ``uid``:``gid``; a link is changed
        itself, never what it points to. Run with changeup's own ids (it needs them)."""

        def chown(top: int) -> None:
            os.fchown(top, uid, gid)

            def visit(fd: int, name: str, relative: str, info: os.stat_result) -> None:
                os.chown(name, uid, gid, dir_fd=fd, follow_symlinks=False)

            walk_at(top, visit, lambda relative: True)

        self._at_top(chown, as_owner=False)

    def call(self, operation: Callable[[int], _T]) -> _T:
        """``operation(fd)``, ``fd`` the folder opened, with the ids of its owner as every
        operation here has them: for work of one's own below it (as :func:`walk_at`)."""
        return self._at_top(operation, as_owner=self.as_owner)

    # --- off the event loop -------------------------------------------------------------------

    async def run(self, operation: Callable[[], _T]) -> _T:
        """``operation`` (calls on this folder) in a worker thread, so the event loop never
        waits on the file system; after ``timeout`` seconds of real time it is abandoned (it
        finishes on its own) and :class:`AgentFileError` is raised."""
        work = partial(_in_thread, operation, self.timeout, str(self.path))
        return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)

    # --- the mechanism ------------------------------------------------------------------------

    def _parts(self, relative: str) -> list[str]:
        parts = relative.split("/")
        if any(part in ("", ".", "..") or "\0" in part for part in parts):
            raise AgentFileError(
                errno.EINVAL,
                f"{self.path}: {relative!r} is not a path inside the folder "
                "(relative, with no empty, '.' or '..' parts)",
            )
        return parts

    def _where(self, parts: Sequence[str]) -> str:
        return os.path.join(self.path, *parts)

    def _at_top(self, operation: Callable[[int], _T], *, as_owner: bool) -> _T:
        """``operation(fd of the folder)``, with the ids of the folder's owner when asked (as root)."""
        top = os.open(self.path, _LISTED)  # the folder itself is changeup's: its path is trusted
        try:
            info = os.fstat(top)
            owner = (info.st_uid, info.st_gid)
            if not (as_owner and _FS_IDS and os.geteuid() == 0 and info.st_uid != 0):
                return operation(top)
            if threading.current_thread() is threading.main_thread():
                # Never on the event loop's thread: its ids stay changeup's whatever happens. The
                # thread has a descriptor of its own: one left behind at the time limit must not
                # find this one closed and its number reused.
                own = os.dup(top)

                def work() -> _T:
                    try:
                        return _as_owner(owner, operation, own)
                    finally:
                        os.close(own)

                return _in_thread(work, self.timeout, str(self.path))
            return _as_owner(owner, operation, top)
        finally:
            os.close(top)

    def _folder(self, top: int, parts: Sequence[str], *, make: int | None = None) -> int:
        """A new descriptor (``O_PATH``) of the folder ``parts`` below ``top``; no link followed."""
        fd = os.open(".", _FOLDER, dir_fd=top)
        try:
            for index, part in enumerate(parts):
                if make is not None:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, make, dir_fd=fd)
                try:
                    child = os.open(part, _FOLDER, dir_fd=fd)
                except OSError as error:
                    raise self._refusal(fd, parts[: index + 1], error, "folder") from None
                os.close(fd)
                fd = child
            return fd
        except BaseException:
            os.close(fd)
            raise

    def _refusal(self, fd: int, parts: Sequence[str], error: OSError, wanted: Kind) -> OSError:
        """Why the entry ``parts[-1]`` in ``fd`` could not be opened as a ``wanted``, for people."""
        where, name = self._where(parts), parts[-1]
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return FileNotFoundError(errno.ENOENT, f"{where}: nothing there")
        except OSError:
            return AgentFileError(error.errno or errno.EIO, f"{where}: {error.strerror or error}")
        kind = kind_of(info.st_mode)
        if kind == "link":
            try:
                target = os.readlink(name, dir_fd=fd)[:200]
            except OSError:
                target = "?"
            return AgentFileError(
                errno.ELOOP, f"{where} is a link (to {target!r}); changeup never follows links here"
            )
        if kind == wanted:
            return AgentFileError(error.errno or errno.EIO, f"{where}: {error.strerror or error}")
        return AgentFileError(errno.EINVAL, f"{where} is a {kind}, not a {wanted}")

    def _entry(self, parent: int, parts: Sequence[str]) -> os.stat_result:
        """The entry ``parts[-1]`` in ``parent``, which must be a regular file."""
        try:
            probe = os.open(parts[-1], _ENTRY, dir_fd=parent)
        except FileNotFoundError:
            raise FileNotFoundError(errno.ENOENT, f"{self._where(parts)}: nothing there") from None
        try:
            info = os.fstat(probe)
        finally:
            os.close(probe)
        if not stat.S_ISREG(info.st_mode):  # a link, a FIFO, a device...: said as such
            raise self._refusal(parent, parts, OSError(errno.EINVAL, "not a regular file"), "file")
        return info

    def _read(self, top: int, parts: list[str], limit: int, offset: int) -> Content:
        parent = self._folder(top, parts[:-1])
        try:
            info = self._entry(parent, parts)
            fd = os.open(parts[-1], _READ, dir_fd=parent)
            try:
                now = os.fstat(fd)
                if (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino) or not stat.S_ISREG(now.st_mode):
                    raise AgentFileError(errno.EAGAIN, f"{self._where(parts)} was replaced as it was opened")
                chunks, taken, position = [], 0, offset
                while taken <= limit:
                    chunk = os.pread(fd, min(_CHUNK, limit + 1 - taken), position)
                    if not chunk:
                        break
                    chunks.append(chunk)
                    taken += len(chunk)
                    position += len(chunk)
                data = b"".join(chunks)
                return Content(data[:limit], len(data) > limit, now.st_size)
            finally:
                os.close(fd)
        finally:
            os.close(parent)

    def _stat(self, top: int, parts: list[str]) -> os.stat_result | None:
        try:
            parent = self._folder(top, parts[:-1])
        except OSError:
            return None  # missing, or not reachable without following a link
        try:
            return os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
        except OSError:
            return None
        finally:
            os.close(parent)

    def _new(self, parent: int, parts: Sequence[str], mode: int) -> tuple[int, str]:
        """A new file under a temporary name in ``parent``: its descriptor and that name."""
        temporary = f".changeup-{secrets.token_hex(8)}.new"
        fd = os.open(temporary, _NEW, mode, dir_fd=parent)
        os.fchmod(fd, mode)  # as asked, whatever the umask
        return fd, temporary

    def _place(self, parent: int, temporary: str, parts: Sequence[str]) -> None:
        """Rename ``temporary`` to ``parts[-1]`` in ``parent``; on failure remove it and say why."""
        try:
            os.rename(temporary, parts[-1], src_dir_fd=parent, dst_dir_fd=parent)
        except OSError as error:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=parent)
            if error.errno in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
                raise AgentFileError(
                    error.errno, f"{self._where(parts)} is a folder; changeup writes only files there"
                ) from None
            raise

    def _write(self, top: int, parts: list[str], data: bytes, mode: int) -> None:
        parent = self._folder(top, parts[:-1], make=0o755)
        try:
            fd, temporary = self._new(parent, parts, mode)
            try:
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view) :]
                finally:
                    os.close(fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary, dir_fd=parent)
                raise
            self._place(parent, temporary, parts)
        finally:
            os.close(parent)

    def _create(self, top: int, parts: list[str], mode: int) -> BinaryIO:
        parent = self._folder(top, parts[:-1], make=0o755)
        try:
            fd, temporary = self._new(parent, parts, mode)
            try:
                self._place(parent, temporary, parts)
            except BaseException:
                os.close(fd)
                raise
            return os.fdopen(fd, "wb")
        finally:
            os.close(parent)

    def _remove(self, top: int, parts: list[str]) -> bool:
        try:
            parent = self._folder(top, parts[:-1])
        except OSError:
            return False
        try:
            try:
                info = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                return False
            if stat.S_ISDIR(info.st_mode):
                shutil.rmtree(parts[-1], dir_fd=parent)  # descriptor-based: follows no link
            else:
                os.unlink(parts[-1], dir_fd=parent)
            return True
        finally:
            os.close(parent)


def _as_owner(owner: tuple[int, int], operation: Callable[[int], _T], top: int) -> _T:
    """``operation(top)`` with this thread's file-system ids set to ``owner``, then set back."""
    uid, gid = owner
    before_gid = _LIBC.setfsgid(gid)
    before_uid = _LIBC.setfsuid(uid)
    try:
        # setfsuid answers the previous id, never an error: ask again (-1 changes nothing).
        if _LIBC.setfsuid(-1) != uid or _LIBC.setfsgid(-1) != gid:
            raise AgentFileError(errno.EPERM, f"could not act as {uid}:{gid} on the agent's files")
        return operation(top)
    finally:
        _LIBC.setfsuid(before_uid)
        _LIBC.setfsgid(before_gid)
        if _LIBC.setfsuid(-1) != before_uid or _LIBC.setfsgid(-1) != before_gid:
            raise SystemError("a thread could not take back changeup's file-system ids")


def _in_thread(work: Callable[[], _T], timeout: float, where: str) -> _T:
    """``work()`` in a thread of its own; at most ``timeout`` seconds of waiting for it."""
    outcome: list[_T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            outcome.append(work())
        except BaseException as error:
            failure.append(error)

    thread = threading.Thread(target=target, name="changeup-agent-files", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise AgentFileError(errno.ETIMEDOUT, f"{where}: a file operation took more than {timeout:g} s")
    if failure:
        raise failure[0]
    return outcome[0]


def walk_at(
    top: int,
    visit: Callable[[int, str, str, os.stat_result], None],
    descend: Callable[[str], bool],
) -> int:
    """:meth:`AgentFolder.walk` from the folder descriptor ``top``: ``visit(fd, name, relative,
    stat)`` gets, with each entry, the descriptor of the folder it is in (open while it runs).

    Depth first, one descriptor open per level; returns how many folders were left out."""
    stack: list[tuple[int, str, os._ScandirIterator[str]]] = []

    def enter(parent: int, name: str, prefix: str) -> int:
        """Push the folder ``name`` of ``parent``; 1 if it could not be (a link put there since)."""
        try:
            fd = os.open(name, _LISTED, dir_fd=parent)
        except OSError:
            return 1
        try:
            stack.append((fd, prefix, os.scandir(fd)))
        except OSError:
            os.close(fd)
            return 1
        return 0

    left_out = enter(top, ".", "")
    try:
        while stack:
            fd, prefix, entries = stack[-1]
            entry = next(entries, None)
            if entry is None:
                stack.pop()
                entries.close()
                os.close(fd)
                continue
            relative = prefix + entry.name
            try:
                info = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # gone since the folder was listed
            visit(fd, entry.name, relative, info)
            if stat.S_ISDIR(info.st_mode) and descend(relative):
                left_out += 1 if len(stack) >= MAX_DEPTH else enter(fd, entry.name, relative + "/")
    finally:
        for fd, _, entries in stack:
            entries.close()
            os.close(fd)
    return left_out

"""The agent's workspace, its git repository, and snapshots in a shadow repository.

The workspace is a fresh copy of the challenge's ``workspace/`` template with a git
repository holding one baseline commit, so the agent sees a normal project and nothing of
later phases. Snapshots live in a separate bare repository (``shadow.git``) whose work
tree is the workspace: ``git add`` + ``git write-tree`` turns the workspace into a tree id
without touching the agent's ``.git``. Equal trees have equal ids, which is how an
unchanged workspace is never tested twice. An export writes a snapshot's files into a
folder; given the snapshot that folder already holds, it writes only the difference.

A snapshot is the workspace as it is, minus :data:`IGNORED` (tool state, caches,
environments) and bytecode, whatever the agent's ``.gitignore`` says: the hidden tests grade
the source the agent wrote. Before each snapshot the workspace is measured against the
challenge's limits; a workspace over them is not snapshotted (:class:`OverLimits`).

Every git call goes through the neutral git (``orchestrator.system.git``): nothing the
agent configured runs on the host. The agent's commits are read through the shadow
repository, from a ``HEAD`` read off the agent's files, bounded as they are read: the newest
:data:`~triggers.bounds.ITEMS` of them, each subject cut to :data:`~triggers.bounds.NAME` bytes
as git prints it, git's heap and time limited (:data:`HISTORY_MEMORY`, :data:`HISTORY_TIME`).
"""

from __future__ import annotations

import io
import os
import posixpath
import shutil
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import anyio
import structlog

from orchestrator.system.agentfiles import AgentFolder
from orchestrator.system.git import EMPTY_TREE, GitError, git, git_sync, read_head
from triggers import CommitMade
from triggers.bounds import ITEMS, NAME

__all__ = [
    "BYTECODE",
    "HISTORY_MEMORY",
    "HISTORY_TIME",
    "IGNORED",
    "GitError",
    "OverLimits",
    "Size",
    "Workspace",
]

_log = structlog.get_logger()

#: Never part of a snapshot or a file-change event: tool state, caches, environments.
IGNORED = (
    ".git",
    ".changeup",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".venv",
    "venv",
    "node_modules",
    ".hypothesis",
    ".aider.tags.cache.v4",  # Aider's repository-map cache (0.86), written into the workspace
)
BYTECODE = (".pyc", ".pyo")

#: git's heap when it reads the agent's history: a commit object bigger than this (a subject of
#: hundreds of MiB compresses to almost nothing in the agent's store) fails to read, as git says.
HISTORY_MEMORY = 256 * 1024 * 1024
#: Seconds one read of the agent's history may take: a few commits take milliseconds, and a FIFO
#: where an object should be would hold git (and the watcher waiting on it) for good.
HISTORY_TIME = 20.0
#: Bytes of root commit ids one read takes (a history with more roots reads as none).
_ROOTS = 64 * 1024

_ABSENT, _FOLDER = "000000", "040000"  # git modes in a tree difference
_ARGUMENTS = 100_000  # bytes of paths one command line takes

_EPOCH = "2000-01-01T00:00:00Z"
_IDENTITY = {
    "GIT_AUTHOR_NAME": "changeup",
    "GIT_AUTHOR_EMAIL": "changeup@localhost",
    "GIT_COMMITTER_NAME": "changeup",
    "GIT_COMMITTER_EMAIL": "changeup@localhost",
}

#: What ``git add`` takes: everything, ignore files overruled, minus these.
_PATHSPEC = (
    ".",
    *(f":(exclude,glob)**/{name}/**" for name in IGNORED),
    *(f":(exclude,glob)**/*{suffix}" for suffix in BYTECODE),
)


@dataclass(frozen=True, slots=True)
class Size:
    """How big a workspace is: files (links count) and their apparent bytes (sparse or not)."""

    files: int
    bytes: int


class OverLimits(Exception):
    """The workspace is over the challenge's limits; no snapshot was taken."""

    def __init__(self, size: Size, max_files: int, max_bytes: int) -> None:
        over = []
        if size.files > max_files:
            over.append(f"{size.files:,} files (limit {max_files:,})")
        if size.bytes > max_bytes:
            over.append(f"{size.bytes / 1e6:,.1f} MB (limit {max_bytes / 1e6:,.1f} MB)")
        super().__init__("the workspace is over its limits: " + " and ".join(over))
        self.size = size


def _kept(relative: str) -> bool:
    """Whether a folder's files may be part of a snapshot: none under an ignored name."""
    return relative.rpartition("/")[2] not in IGNORED


class Workspace:
    """A workspace folder with its agent-visible repository and its shadow repository."""

    def __init__(self, path: Path, shadow: Path, *, max_files: int = 0, max_bytes: int = 0) -> None:
        self.path = path
        self.shadow = shadow
        self.max_files = max_files  # 0: no limit
        self.max_bytes = max_bytes
        self._seen_head = read_head(path)
        self._indexing = anyio.Lock()  # one snapshot at a time: they share the shadow's index

    @classmethod
    def create(
        cls, template: Path, path: Path, shadow: Path, *, max_files: int = 0, max_bytes: int = 0
    ) -> Workspace:
        """Copy ``template`` to ``path``, commit it as the baseline, and start the shadow repo."""
        path, shadow = path.resolve(), shadow.resolve()
        shutil.copytree(template, path, ignore=shutil.ignore_patterns(*IGNORED))
        git_sync(["init", "-q", "-b", "main"], cwd=path)
        # So an agent's own `git commit` works on a machine with no global identity.
        git_sync(["config", "user.name", "changeup agent"], cwd=path)
        git_sync(["config", "user.email", "agent@changeup.invalid"], cwd=path)
        git_sync(["add", "-A"], cwd=path)
        # The same template gives the same baseline commit, whoever runs it and when.
        baseline = {**_IDENTITY, "GIT_AUTHOR_DATE": _EPOCH, "GIT_COMMITTER_DATE": _EPOCH}
        git_sync(["commit", "-q", "--allow-empty", "-m", "Starting point"], cwd=path, env=baseline)
        git_sync(["init", "-q", "--bare", str(shadow)], cwd=path)
        return cls(path, shadow, max_files=max_files, max_bytes=max_bytes)

    @classmethod
    def attach(cls, path: Path, shadow: Path) -> Workspace:
        """A workspace created earlier (for re-scoring from its shadow repository)."""
        return cls(path, shadow)

    # -- Repository ------------------------------------------------------------------------

    def files(self) -> list[str]:
        """Workspace-relative paths of the files in the workspace now, sorted (links and other
        entries that are not folders count as files; no link is followed)."""
        out: list[str] = []

        def visit(relative: str, info: os.stat_result) -> None:
            if not stat.S_ISDIR(info.st_mode) and not relative.endswith(BYTECODE):
                out.append(relative)

        AgentFolder(self.path).walk(visit, descend=_kept)
        return sorted(out)

    def size(self) -> Size:
        """The files a snapshot would take, and their bytes (no link is followed: a link to a
        folder is a file of the snapshot). Blocking: call it off the event loop."""
        files = size = 0

        def visit(relative: str, info: os.stat_result) -> None:
            nonlocal files, size
            if not stat.S_ISDIR(info.st_mode) and not relative.endswith(BYTECODE):
                files += 1
                size += info.st_size

        AgentFolder(self.path).walk(visit, descend=_kept)
        return Size(files, size)

    async def snapshot(self) -> str:
        """The workspace into the shadow index, then ``write-tree``: the snapshot's tree id.

        The agent may be writing while the snapshot is taken; git then cannot index a file
        that changes under it. Such a file is retried a few times, and after that the
        snapshot keeps its previous content (the next change batch takes a new snapshot).
        """
        if self.max_files or self.max_bytes:
            size = await anyio.to_thread.run_sync(self.size)
            files_over = self.max_files and size.files > self.max_files
            if files_over or (self.max_bytes and size.bytes > self.max_bytes):
                raise OverLimits(size, self.max_files or size.files, self.max_bytes or size.bytes)
        async with self._indexing:
            for attempt in range(4):
                try:
                    await self._index("add", "-A", "--force", "--ignore-errors", "--", *_PATHSPEC)
                    break
                except GitError as error:
                    if attempt == 3 or "took more than" in str(error):  # stopped at its time limit: no retry
                        _log.warning(
                            "snapshot kept what git could index", workspace=str(self.path), error=str(error)
                        )
                        break
                    await anyio.sleep(0.05 * (attempt + 1))
            return (await self._index("write-tree")).decode().strip()

    async def export(self, tree: str, dest: Path, *, base: str = EMPTY_TREE) -> list[str]:
        """Make ``dest`` hold snapshot ``tree``'s files, writing only what differs from ``base``.

        ``dest`` holds the export of ``base`` (by default the empty tree: ``dest`` is empty or
        missing, and everything is written). Files come out of ``git archive``, so the
        snapshot's ``.gitattributes`` apply as they always did; links out of the snapshot are
        left out. Returns the paths written or removed, folders included.
        """
        changes = await self._difference(base, tree)
        if base != EMPTY_TREE and any(PurePosixPath(c.path).name == ".gitattributes" for c in changes):
            # Attributes shape how every file below them is exported (export-ignore, eol, ...),
            # changed or not: start again from nothing.
            before = await self._difference(EMPTY_TREE, base)
            await anyio.to_thread.run_sync(_empty, dest)
            return sorted({c.path for c in before} | set(await self.export(tree, dest)))
        if base == EMPTY_TREE:
            archives = [await self._shadow("archive", "--format=tar", tree)]
        else:
            files = [c.path for c in changes if c.after not in (_ABSENT, _FOLDER)]
            archives = [
                await self._shadow("--literal-pathspecs", "archive", "--format=tar", tree, "--", *chunk)
                for chunk in _chunks(files)
            ]
        await anyio.to_thread.run_sync(_apply, dest, changes, archives)
        return [c.path for c in changes]

    async def changes(self, before: str, after: str) -> list[tuple[str, str]]:
        """Files that differ between snapshot trees ``before`` and ``after`` (see :class:`Repository`)."""
        out = await self._shadow("diff-tree", "-r", "-z", "--no-renames", "--name-status", before, after)
        fields = out.decode("utf-8", "replace").split("\0")
        words = {"A": "added", "D": "deleted"}
        pairs = zip(fields[0::2], fields[1::2], strict=False)
        return sorted((path, words.get(status, "modified")) for status, path in pairs if status)

    async def new_commits(self) -> list[CommitMade]:
        """Commits reachable from HEAD that were not seen before, oldest first: the newest
        :data:`~triggers.bounds.ITEMS` of them, the first counting the older ones left out."""
        head = await self._head()
        if head is None or head == self._seen_head:
            return []
        span = [head] if self._seen_head is None else [head, f"^{self._seen_head}"]
        self._seen_head = head
        try:
            commits = await self._log(span)
            omitted = await self._count(span) - len(commits) if len(commits) >= ITEMS else 0
        except GitError as error:  # history rewritten, or objects git cannot read: report the new head
            _log.warning("commit read without its subject", workspace=str(self.path), error=str(error)[:500])
            return [CommitMade(0.0, head)]
        made = [CommitMade(0.0, sha, subject) for sha, subject in commits]
        if made and omitted > 0:
            made[0] = CommitMade(0.0, made[0].sha, made[0].message, omitted)
        return made

    async def commits(self) -> list[tuple[str, str]]:
        """Every commit after the baseline (the root commits), oldest first: the newest
        :data:`~triggers.bounds.ITEMS` of them."""
        head = await self._head()
        if head is None:
            return []
        try:
            out = await self._history("rev-list", "--max-parents=0", head, "--", limit=_ROOTS)
            return await self._log([head, *(f"^{root}" for root in out.decode().split())])
        except GitError as error:
            _log.warning(
                "the agent's commits could not be read", workspace=str(self.path), error=str(error)[:500]
            )
            return []

    # -- helpers -----------------------------------------------------------------------------

    async def _head(self) -> str | None:
        """:func:`read_head`, off the event loop (the agent's files may be anything)."""
        folder = AgentFolder(self.path)
        try:
            return await folder.run(lambda: read_head(self.path))
        except OSError:  # it took longer than its time limit
            return None

    async def _log(self, span: list[str]) -> list[tuple[str, str]]:
        """(sha, subject) of the newest :data:`~triggers.bounds.ITEMS` commits of ``span``, oldest
        first; each field is cut as git prints it (a subject of any length is never whole here)."""
        out = await self._history(
            "log",
            "--reverse",
            f"--max-count={ITEMS}",
            "--no-show-signature",
            "--format=%H%x00%s",
            *span,
            "--",
        )
        # A subject holds no line feed (git joins its lines); other line breaks are its own text.
        lines = [line for line in out.decode("utf-8", "replace").split("\n") if line]
        return [(sha, subject) for sha, _, subject in (line.partition("\0") for line in lines)]

    async def _count(self, span: list[str]) -> int:
        """How many commits ``span`` holds."""
        return int(await self._history("rev-list", "--count", *span, "--"))

    async def _history(self, *args: str, limit: int = ITEMS * (NAME + 256)) -> bytes:
        """Read the agent's history: each field cut to a name's bytes, git's heap and time bounded,
        and at most ``limit`` bytes (by default what :data:`~triggers.bounds.ITEMS` cut lines take)."""
        return await self._agent(*args, line=NAME, limit=limit, memory=HISTORY_MEMORY, timeout=HISTORY_TIME)

    async def _agent(self, *args: str, **bounds: Any) -> bytes:
        """Read the agent's objects through the shadow repository (its config is ours), only from
        an object folder that is not a link; ``bounds`` as :func:`~orchestrator.system.git.git`
        takes them."""
        folder = AgentFolder(self.path)
        if await folder.run(lambda: folder.kind(".git/objects")) != "folder":
            raise GitError(f"{self.path / '.git' / 'objects'} is not a folder (a link is not followed)")
        env = {"GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self.path / ".git" / "objects")}
        return await git([f"--git-dir={self.shadow}", *args], cwd=self.shadow, env=env, **bounds)

    async def _shadow(self, *args: str) -> bytes:
        return await git([f"--git-dir={self.shadow}", f"--work-tree={self.path}", *args], cwd=self.path)

    async def _index(self, *args: str) -> bytes:
        """A git that writes the shadow's index. It holds ``index.lock`` while it runs, and one
        killed holding it would leave every later snapshot failing on the lock, the final
        grading's included: so a cancellation (the session ending) waits for it to finish, and
        one stopped at its time limit, gone by then, has the lock it left removed. Only changeup
        writes the shadow repository, one snapshot at a time."""
        with anyio.CancelScope(shield=True):
            try:
                out = await self._shadow(*args)
            except GitError:
                (self.shadow / "index.lock").unlink(missing_ok=True)
                raise
        return out

    async def _difference(self, base: str, tree: str) -> list[_Change]:
        """Every entry, folders included, that differs between trees ``base`` and ``tree``; parents first."""
        out = await self._shadow("diff-tree", "-r", "-t", "-z", "--no-renames", base, tree)
        fields = out.split(b"\0")
        # Each change is ":<mode before> <mode after> <id before> <id after> <status>", then its path.
        return [
            _Change(os.fsdecode(path), *header[1:].decode().split(" ")[:2])
            for header, path in zip(fields[0::2], fields[1::2], strict=False)
            if header
        ]


@dataclass(frozen=True, slots=True)
class _Change:
    """A path whose entry differs between two trees, and its git mode before and after."""

    path: str
    before: str  # 000000: absent; 040000: a folder
    after: str


def _chunks(paths: list[str]) -> list[list[str]]:
    """``paths`` in runs that fit on a command line (Linux takes 128 KiB an argument, 2 MiB in all)."""
    chunks: list[list[str]] = []
    size = _ARGUMENTS
    for path in paths:
        if size + len(path) >= _ARGUMENTS:
            chunks.append([])
            size = 0
        chunks[-1].append(path)
        size += len(path) + 1
    return chunks


def _apply(dest: Path, changes: list[_Change], archives: list[bytes]) -> None:
    """Make the export of one tree in ``dest`` the export of another: remove what ``changes``
    replace or delete, then extract the new files from ``archives``."""
    dest.mkdir(parents=True, exist_ok=True)
    for change in reversed(changes):  # children before their folder
        if change.before != _ABSENT and (change.before, change.after) != (_FOLDER, _FOLDER):
            _remove(dest / change.path)
    for archive in archives:  # new folders come with their files (git archive writes the parents)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(dest, members=_inside(tar.getmembers()), filter="tar")


def _remove(path: Path) -> None:
    """Delete ``path`` if it is there: a file, a link (not what it points to) or a folder."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _empty(folder: Path) -> None:
    """Delete everything in ``folder``, which stays."""
    for entry in folder.iterdir():
        _remove(entry)


def _inside(members: list[tarfile.TarInfo]) -> list[tarfile.TarInfo]:
    """Members whose links stay inside the snapshot (a link out of it would dangle in the sandbox)."""
    kept = []
    for member in members:
        if member.issym() or member.islnk():
            base = PurePosixPath(member.name).parent if member.issym() else PurePosixPath()
            target = posixpath.normpath(str(base / member.linkname))
            if member.linkname.startswith("/") or target == ".." or target.startswith("../"):
                continue
        kept.append(member)
    return kept

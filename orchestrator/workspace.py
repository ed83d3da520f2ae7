"""The agent's workspace, its git repository, and snapshots in a shadow repository.

The workspace is a fresh copy of the challenge's ``workspace/`` template with a git
repository holding one baseline commit, so the agent sees a normal project and nothing of
later phases. Snapshots live in a separate bare repository (``shadow.git``) whose work
tree is the workspace: ``git add -A`` + ``git write-tree`` turns the workspace into a tree
id without touching the agent's ``.git``. Equal trees have equal ids, which is how an
unchanged workspace is never tested twice.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import anyio

__all__ = ["IGNORED", "GitError", "Repository", "Workspace"]

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
)

_IDENTITY = ("-c", "user.name=changeup", "-c", "user.email=changeup@localhost")
_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}


class GitError(RuntimeError):
    """A git command failed; the message carries its stderr."""


class Repository(Protocol):
    """What a session needs from the workspace (real: :class:`Workspace`; tests: a fake)."""

    def files(self) -> list[str]:
        """Workspace-relative paths of the files in the workspace now."""

    async def snapshot(self) -> str:
        """Record the workspace as it is now; returns its tree id."""

    async def export(self, tree: str, dest: Path) -> None:
        """Write the files of snapshot ``tree`` into ``dest``."""

    async def new_commits(self) -> list[tuple[str, str]]:
        """Commits the agent made since the last call, oldest first: (sha, subject)."""


def _git_sync(args: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *_IDENTITY, *args],
        cwd=cwd,
        env={**os.environ, **_GIT_ENV, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise GitError(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


class Workspace:
    """A workspace folder with its agent-visible repository and its shadow repository."""

    def __init__(self, path: Path, shadow: Path) -> None:
        self.path = path
        self.shadow = shadow
        self._seen_head = self._head_sync()

    @classmethod
    def create(cls, template: Path, path: Path, shadow: Path) -> Workspace:
        """Copy ``template`` to ``path``, commit it as the baseline, and start the shadow repo."""
        path, shadow = path.resolve(), shadow.resolve()
        shutil.copytree(template, path, ignore=shutil.ignore_patterns(*IGNORED))
        _git_sync(["init", "-q", "-b", "main"], path)
        # So an agent's own `git commit` works on a machine with no global identity.
        _git_sync(["config", "user.name", "changeup agent"], path)
        _git_sync(["config", "user.email", "agent@changeup.invalid"], path)
        _git_sync(["add", "-A"], path)
        _git_sync(["commit", "-q", "--allow-empty", "-m", "Starting point"], path)
        _git_sync(["init", "-q", "--bare", str(shadow)], path)
        (shadow / "info").mkdir(exist_ok=True)
        (shadow / "info" / "exclude").write_text("".join(f"{name}/\n" for name in IGNORED) + "*.pyc\n")
        return cls(path, shadow)

    @classmethod
    def attach(cls, path: Path, shadow: Path) -> Workspace:
        """A workspace created earlier (for re-scoring from its shadow repository)."""
        return cls(path, shadow)

    # -- Repository ------------------------------------------------------------------------

    def files(self) -> list[str]:
        """Workspace-relative paths of the files in the workspace now, sorted."""
        out = []
        for root, dirs, names in os.walk(self.path):
            dirs[:] = sorted(d for d in dirs if d not in IGNORED)
            base = Path(root).relative_to(self.path)
            out += [(base / name).as_posix() for name in names if not name.endswith(".pyc")]
        return sorted(out)

    async def snapshot(self) -> str:
        """``git add -A`` into the shadow index, then ``write-tree``: the snapshot's tree id.

        The agent may be writing while the snapshot is taken; git then cannot index a file
        that changes under it. Such a file is retried a few times, and after that the
        snapshot keeps its previous content (the next change batch takes a new snapshot).
        """
        for attempt in range(4):
            try:
                await self._shadow("add", "-A", "--ignore-errors", ".")
                break
            except GitError:
                if attempt == 3:
                    break
                await anyio.sleep(0.05 * (attempt + 1))
        return (await self._shadow("write-tree")).strip()

    async def export(self, tree: str, dest: Path) -> None:
        """Extract snapshot ``tree`` into ``dest`` (created if missing)."""
        archive = await self._shadow_bytes("archive", "--format=tar", tree)
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(dest, filter="tar")

    async def new_commits(self) -> list[tuple[str, str]]:
        """Commits reachable from HEAD that were not seen before, oldest first."""
        head = self._head_sync()
        if head is None or head == self._seen_head:
            return []
        span = head if self._seen_head is None else f"{self._seen_head}..{head}"
        done = await anyio.run_process(
            ["git", "log", "--reverse", "--format=%H%x00%s", span],
            cwd=self.path,
            env={**os.environ, **_GIT_ENV},
            check=False,
        )
        self._seen_head = head
        if done.returncode != 0:  # history rewritten: report only the new head
            return [(head, "")]
        lines = done.stdout.decode("utf-8", "replace").splitlines()
        return [(sha, subject) for sha, _, subject in (line.partition("\0") for line in lines)]

    # -- helpers -----------------------------------------------------------------------------

    def _head_sync(self) -> str | None:
        done = subprocess.run(
            ["git", "rev-parse", "-q", "--verify", "HEAD"],
            cwd=self.path,
            env={**os.environ, **_GIT_ENV},
            capture_output=True,
            text=True,
            check=False,
        )
        return done.stdout.strip() or None

    async def _shadow(self, *args: str) -> str:
        return (await self._shadow_bytes(*args)).decode("utf-8", "replace")

    async def _shadow_bytes(self, *args: str) -> bytes:
        done = await anyio.run_process(
            ["git", f"--git-dir={self.shadow}", f"--work-tree={self.path}", *args],
            cwd=self.path,
            env={**os.environ, **_GIT_ENV},
            check=False,
        )
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip()
            raise GitError(f"git {' '.join(args)} failed: {message}")
        return bytes(done.stdout)

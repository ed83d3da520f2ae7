"""A snapshot stopped half-way (the session ending under it, git's time limit) leaves the shadow
repository working: a git killed while it holds the shadow's ``index.lock`` would leave every later
snapshot, the final grading's included, failing on the lock (a run then ended ``invalid``)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from orchestrator.session import workspace as workspace_module
from orchestrator.session.workspace import Workspace
from orchestrator.system import git as git_module
from orchestrator.system.git import git_sync
from tests.cli import REPO

TEMPLATE = REPO / "challenges" / "export-time" / "workspace"

pytestmark = [pytest.mark.slow, pytest.mark.anyio]  # real git


@pytest.fixture
def anyio_backend() -> str:
    """Real time: git is real."""
    return "asyncio"


def busy_workspace(tmp_path: Path) -> Workspace:
    """A workspace whose snapshot takes git a while: 1,500 new files to hash."""
    workspace = Workspace.create(TEMPLATE, tmp_path / "ws", tmp_path / "shadow.git")
    for n in range(1500):
        (workspace.path / "data" / f"{n // 100}").mkdir(parents=True, exist_ok=True)
        (workspace.path / "data" / f"{n // 100}" / f"f{n}.txt").write_text(f"{n}\n" * 500)
    return workspace


def tree_files(workspace: Workspace, tree: str) -> int:
    """How many files snapshot ``tree`` holds."""
    listed = git_sync(
        [f"--git-dir={workspace.shadow}", "ls-tree", "-r", "--name-only", tree], cwd=workspace.path
    )
    return len(listed.splitlines())


async def test_a_snapshot_cancelled_at_any_moment_leaves_the_next_one_whole(tmp_path: Path) -> None:
    """Cancelled after 0 to 150 ms, over and over: the next snapshot still sees every file."""
    workspace = busy_workspace(tmp_path)
    expected = len([p for p in workspace.path.rglob("*") if p.is_file() and ".git" not in p.parts])
    for step in range(16):
        with anyio.move_on_after(step * 0.01):
            await workspace.snapshot()
        (workspace.path / "data" / "moved.txt").write_text(f"{step}\n")  # a change, so git indexes again
        assert not (workspace.shadow / "index.lock").exists(), step
        tree = await workspace.snapshot()
        assert tree_files(workspace, tree) == expected + 1, step


async def test_a_snapshot_stopped_at_its_time_limit_leaves_the_next_one_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's ``add`` stopped by its time limit (a slow disk, a huge file): the snapshot keeps
    what was indexed before and says so, and once time allows, the next one is whole."""
    workspace = busy_workspace(tmp_path)
    slow = git_module.git

    async def hurried(args: list[str], **kwargs: object) -> bytes:
        if "add" in args:
            kwargs["timeout"] = 0.001  # less than git takes to start
        return await slow(args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(workspace_module, "git", hurried)
    stopped = await workspace.snapshot()
    assert not (workspace.shadow / "index.lock").exists()
    monkeypatch.setattr(workspace_module, "git", slow)
    tree = await workspace.snapshot()
    assert tree != stopped
    assert tree_files(workspace, tree) == len(
        [p for p in workspace.path.rglob("*") if p.is_file() and ".git" not in p.parts]
    )

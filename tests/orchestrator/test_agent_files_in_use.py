"""Where changeup touches an agent's files: the watcher, the agent's git, the inbox, the private HOME.

Each with what an agent can leave there: a link to a host folder, FIFOs in .git, a name that is not
UTF-8, a linked exclude file, a linked folder above a seeded credential.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from orchestrator.agents.inbox import INBOX_EXCLUDE, exclude_inbox
from orchestrator.grading.agent_sandbox import AgentSandbox, AgentView
from orchestrator.grading.bounds import Bounds
from orchestrator.grading.sandbox import Sandbox
from orchestrator.seams import Batch
from orchestrator.session import workspace as workspace_module
from orchestrator.session.watcher import FsWatcher
from orchestrator.session.workspace import Workspace
from orchestrator.system import folderwatch
from orchestrator.system.git import git_sync, read_head
from tests.cli import REPO
from triggers import CommitMade, FileChange

TEMPLATE = REPO / "challenges" / "export-time" / "workspace"

pytestmark = [pytest.mark.slow, pytest.mark.anyio]  # real git, real inotify


@pytest.fixture
def anyio_backend() -> str:
    """Real time: the watcher and git are real."""
    return "asyncio"


def workspace_at(tmp_path: Path) -> Workspace:
    """A fresh workspace of the export-time challenge, with its baseline commit."""
    return Workspace.create(TEMPLATE, tmp_path / "ws", tmp_path / "shadow.git")


def inotify_inodes() -> set[int]:
    """The inodes this process's inotify instances watch."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            if "inotify" in os.readlink(f"/proc/self/fd/{fd}"):
                for line in Path(f"/proc/self/fdinfo/{fd}").read_text().splitlines():
                    if line.startswith("inotify wd:"):
                        inodes.add(int(line.split("ino:")[1].split()[0], 16))
        except OSError:
            continue
    return inodes


def folder_inodes(root: Path) -> set[int]:
    """The inodes of ``root`` and its folders (no link followed)."""
    return {os.lstat(folder).st_ino for folder, _, _ in os.walk(root)}


@pytest.mark.parametrize("by", ["descriptor", "path"])
async def test_the_watcher_watches_only_the_workspace_and_reports_any_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by: str
) -> None:
    """A link to / moved in is one changed file, never a tree to watch; a name that is not UTF-8
    comes through (as fsdecode gives it) and so do the changes after it; a folder made and then
    moved has its files reported at their new place; a write before watching began is reported.
    Folders watched by descriptor, and by path (no /proc, or too few descriptors to spare)."""
    if by == "path":
        monkeypatch.setattr(folderwatch, "_descriptor_budget", lambda: 0)
    ws = workspace_at(tmp_path)
    watcher = FsWatcher(ws.path, step=0.03, debounce=0.2)
    (ws.path / "early.py").write_text("before the watch\n")
    batches: list[Batch] = []
    watches: list[set[int]] = []

    async def act() -> None:
        def move_root_in() -> None:
            os.symlink("/", ws.path / ".root.new")
            os.rename(ws.path / ".root.new", ws.path / "root")

        def make_deep() -> None:
            (ws.path / "new" / "deep").mkdir(parents=True)
            (ws.path / "new" / "deep" / "x.py").write_text("")

        steps: list[Callable[[], object]] = [
            move_root_in,
            lambda: os.close(os.open(os.fsencode(ws.path) + b"/\xff\xfe.py", os.O_CREAT | os.O_WRONLY)),
            lambda: (ws.path / "after.py").write_text("after the odd name\n"),
            make_deep,
            lambda: os.rename(ws.path / "new", ws.path / "moved"),
            lambda: (ws.path / "moved" / "deep" / "x.py").write_text("changed\n"),
        ]
        for step in steps:
            await anyio.sleep(0.5)
            step()
            watches.append(inotify_inodes() - folder_inodes(ws.path))
        await anyio.sleep(1.0)
        watcher.stop()

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(act)
            async for batch in watcher.batches():
                batches.append(batch)
    changes = [change for batch in batches for change in batch.changes]
    for expected in [
        FileChange("early.py", "added"),
        FileChange("root", "added"),
        FileChange("\udcff\udcfe.py", "added"),
        FileChange("after.py", "added"),
        FileChange("new/deep/x.py", "added"),
        FileChange("moved/deep/x.py", "added"),
        FileChange("moved/deep/x.py", "modified"),
    ]:
        assert expected in changes, changes
    assert not [c for c in changes if c.path.startswith("root/")]
    assert watches
    assert not any(watches), f"watched inodes outside the workspace: {watches}"


def test_head_and_refs_that_are_fifos_or_links_read_as_no_commit(tmp_path: Path) -> None:
    """A FIFO or a link at .git/HEAD, at the ref it names or at packed-refs: no commit, at once."""
    ws = workspace_at(tmp_path)
    git = ws.path / ".git"
    assert read_head(ws.path) is not None
    secret = tmp_path / "secret"
    secret.write_text("c0ffee" * 6 + "c0ff\n")
    for place in ("HEAD", "refs/heads/main", "packed-refs"):
        for kind in ("fifo", "link"):
            saved = {p: (git / p).read_bytes() for p in ("HEAD", "refs/heads/main") if (git / p).is_file()}
            if (git / place).exists():
                (git / place).unlink()
            if kind == "fifo":
                os.mkfifo(git / place)
            else:
                (git / place).symlink_to(secret)
            if place == "packed-refs":
                (git / "refs/heads/main").unlink()  # so the packed refs are read
            began = time.monotonic()
            assert read_head(ws.path) is None, (place, kind)
            assert time.monotonic() - began < 5
            (git / place).unlink()
            for path, data in saved.items():
                (git / path).write_bytes(data)
    assert read_head(ws.path) is not None


async def test_a_fifo_where_an_object_should_be_stops_git_not_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git log blocks for good on a FIFO in the object store: it is stopped at its time limit, and
    the new commit is still reported (without its subject)."""
    monkeypatch.setattr(workspace_module, "HISTORY_TIME", 1.0)
    ws = workspace_at(tmp_path)
    (ws.path / "new.py").write_text("x = 1\n")
    git_sync(["add", "new.py"], cwd=ws.path)
    git_sync(["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "new"], cwd=ws.path)
    head = read_head(ws.path)
    assert head is not None
    loose = ws.path / ".git" / "objects" / head[:2] / head[2:]
    loose.unlink()
    os.mkfifo(loose)
    with anyio.fail_after(30):
        assert await ws.new_commits() == [CommitMade(0.0, head)]


def test_the_inbox_exclude_is_written_anew_never_through_a_link(tmp_path: Path) -> None:
    """A link at .git/info/exclude is replaced by a file of its own, and so is a FIFO (at once)."""
    ws = workspace_at(tmp_path)
    host = tmp_path / "host-file"
    host.write_text("host\n")
    exclude = ws.path / ".git" / "info" / "exclude"
    exclude.unlink()
    exclude.symlink_to(host)
    exclude_inbox(ws.path)
    assert host.read_text() == "host\n"
    assert not exclude.is_symlink()
    assert INBOX_EXCLUDE in exclude.read_text().splitlines()
    exclude.unlink()
    os.mkfifo(exclude)
    exclude_inbox(ws.path)
    assert exclude.read_text() == INBOX_EXCLUDE + "\n"


def test_seeded_credentials_are_removed_through_no_link(tmp_path: Path) -> None:
    """The agent replaced the folder holding a seeded credential with a link to a host folder: the
    host folder's file of that name stays; the link is what is removed."""
    view = AgentView(tmp_path / "ws", tmp_path / "agent", tmp_path / "home", tmp_path / "tmp")
    host = tmp_path / "host-config"
    host.mkdir()
    (host / "credentials.json").write_text("the host's own\n")
    (view.home / ".config").mkdir(parents=True)
    box = AgentSandbox(Sandbox("limits-only"), view, Bounds(256, 64, 1.0, 16, 64))
    box._seeded = [".config/credentials.json", ".netrc"]
    (view.home / ".config").rmdir()
    (view.home / ".config").symlink_to(host)
    (view.home / ".netrc").symlink_to(host / "credentials.json")
    box.forget_seeded()
    assert (host / "credentials.json").read_text() == "the host's own\n"
    assert not (view.home / ".netrc").is_symlink()

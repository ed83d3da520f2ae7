"""The agent's git history is read bounded: each field cut as git prints it, the newest commits
only, git's heap and time limited (``system/git.py``'s ``git()``, ``session/workspace.py``)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import zlib
from pathlib import Path

import anyio
import pytest

from orchestrator.session.workspace import Workspace
from orchestrator.system.git import GitError, git
from triggers.bounds import ITEMS, NAME

pytestmark = [pytest.mark.slow, pytest.mark.anyio]
GIT = ["git", "-c", "user.name=a", "-c", "user.email=a@example.invalid"]


@pytest.fixture
def anyio_backend() -> str:
    """Real subprocesses: asyncio."""
    return "asyncio"


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    """A workspace with its baseline commit, seen: only what the agent commits is new."""
    (tmp_path / "template").mkdir()
    (tmp_path / "template" / "a.py").write_text("x = 1\n")
    return Workspace.create(tmp_path / "template", tmp_path / "ws", tmp_path / "shadow.git")


def head(ws: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ws, capture_output=True, text=True).stdout.strip()


def commits(ws: Path, *subjects: bytes) -> None:
    """One commit per subject on main, in one fast-import."""
    stream = bytearray()
    for n, subject in enumerate(subjects):
        stream += b"commit refs/heads/main\ncommitter a <a@x> 0 +0000\ndata %d\n%s\n" % (
            len(subject),
            subject,
        )
        stream += b"from %s\n\n" % head(ws).encode() if n == 0 else b"\n"
    subprocess.run([*GIT, "fast-import", "--quiet"], cwd=ws, input=bytes(stream), check=True)


def loose_commit(ws: Path, subject_mb: int) -> str:
    """A commit whose subject is ``subject_mb`` MiB of one letter, as a loose object of a few
    hundred KiB, streamed: never whole in this process's memory."""
    tree = subprocess.run(["git", "rev-parse", "HEAD^{tree}"], cwd=ws, capture_output=True, text=True).stdout
    body = f"tree {tree.strip()}\nparent {head(ws)}\nauthor a <a@x> 0 +0000\ncommitter a <a@x> 0 +0000\n\n"
    mib = b"A" * (1024 * 1024)
    parts = [body.encode(), *(mib for _ in range(subject_mb)), b"\n"]
    parts.insert(0, f"commit {sum(map(len, parts))}\0".encode())
    digest, packer, packed = hashlib.sha1(), zlib.compressobj(9), bytearray()
    for part in parts:
        digest.update(part)
        packed += packer.compress(part)
    packed += packer.flush()
    sha = digest.hexdigest()
    (ws / ".git" / "objects" / sha[:2]).mkdir(exist_ok=True)
    (ws / ".git" / "objects" / sha[:2] / sha[2:]).write_bytes(bytes(packed))
    subprocess.run(["git", "update-ref", "refs/heads/main", sha], cwd=ws, check=True)
    return sha


async def test_git_cuts_each_line_as_it_streams_and_caps_the_whole(workspace: Workspace) -> None:
    """A subject of 3 MiB comes back as its first bytes and a marker of its size; a line within
    the cut is untouched; output over ``limit`` is an error, not a truncated answer."""
    commits(workspace.path, b"short", b"B" * (3 * 1024 * 1024))
    out = await git(["log", "--format=%s"], cwd=workspace.path, line=100)
    long, short, baseline, _ = out.split(b"\n")
    assert long == b"B" * 100 + "… [truncated: 3,145,728 bytes]".encode()
    assert (short, baseline) == (b"short", b"Starting point")
    with pytest.raises(GitError, match="printed more than 1,000 bytes"):
        await git(["log", "--format=%s"], cwd=workspace.path, limit=1000)


async def test_a_read_that_hangs_is_stopped_at_its_time_limit(workspace: Workspace) -> None:
    """The commit HEAD names is a named pipe in the object store: git blocks opening it, and the
    read ends at its time limit, as git's own failure would."""
    sha = head(workspace.path)
    subprocess.run([*GIT, "commit", "-q", "--allow-empty", "-m", "next"], cwd=workspace.path, check=True)
    new = head(workspace.path)
    loose = workspace.path / ".git" / "objects" / new[:2] / new[2:]
    loose.unlink()
    os.mkfifo(loose)
    assert sha != new
    with anyio.fail_after(60), pytest.raises(GitError, match="took more than 2 s"):
        await git(["log", "--format=%s", new], cwd=workspace.path, timeout=2)


async def test_a_batch_of_commits_records_the_newest_and_counts_the_rest(workspace: Workspace) -> None:
    """2,500 new commits: the newest ITEMS as records, oldest first, the first counting the 1,500
    older ones left out; the rubric's list is the newest ITEMS too."""
    commits(workspace.path, *(b"c%d" % n for n in range(2500)))
    made = await workspace.new_commits()
    assert len(made) == ITEMS
    assert [c.message for c in (made[0], made[-1])] == ["c1500", "c2499"]
    assert [c.omitted for c in made[:2]] == [1500, 0]
    assert len(await workspace.commits()) == ITEMS


async def test_subjects_git_would_not_cut_by_width_are_cut_by_bytes(workspace: Workspace) -> None:
    """300,000 zero-width spaces have no width for git's ``%<(N,trunc)``; they are cut here, by
    bytes, as is a subject of 3 MiB, as git prints it. A line separator inside a subject is its
    text, not a second commit."""
    commits(
        workspace.path,
        "\u200b".encode() * 300_000,
        b"C" * (3 * 1024 * 1024),
        "real\u2028".encode() + b"f" * 40,
    )
    first, second, third = await workspace.new_commits()
    assert len(first.message) <= NAME
    assert first.message.endswith("… [truncated: 900,000 bytes]")
    # More than a whole read may hold: only cut as it streams in is it read at all.
    assert second.message.endswith("… [truncated: 3,145,728 bytes]")
    assert third.message == "real\u2028" + "f" * 40


async def test_a_commit_too_big_for_gits_heap_is_the_head_without_a_subject(workspace: Workspace) -> None:
    """A 300 MiB subject in a loose object of a few hundred KiB: git cannot read it within its
    heap limit, so the new head is recorded without a subject, and the rubric sees no commits."""
    sha = loose_commit(workspace.path, 300)
    (made,) = await workspace.new_commits()
    assert (made.sha, made.message) == (sha, "")
    assert await workspace.commits() == []

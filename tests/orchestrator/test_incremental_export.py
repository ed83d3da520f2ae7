"""A test run's copy of its snapshot: made from the previous run's by the difference, never tainted.

Real git throughout. The incremental export is compared with a fresh full export of the
same snapshot, file for file (content, mode, link target), and the fresh one with the
workspace itself; the runner's kept copy is checked against real runs of the hidden tests
whose code writes into its tree.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pytest

from orchestrator.challenge.loader import load_challenge
from orchestrator.grading.sandbox import Sandbox, detect_sandbox
from orchestrator.grading.testrun import PytestRunner
from orchestrator.session.workspace import Workspace
from orchestrator.system.venvs import grading_environment
from tests.cli import REPO

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

Entry = tuple[object, ...]


@pytest.fixture
def anyio_backend() -> str:
    """Real time and real subprocesses: asyncio."""
    return "asyncio"


def listing(root: Path) -> dict[str, Entry]:
    """Every entry under ``root`` but ``.git``: a folder's mode, a file's bytes and mode, a link's target."""
    found: dict[str, Entry] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in dirs + files:
            path = Path(folder, name)
            mode = stat.S_IMODE(path.lstat().st_mode)
            key = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[key] = ("link", os.readlink(path))
            elif path.is_dir():
                found[key] = ("folder", mode)
            else:
                found[key] = ("file", path.read_bytes(), mode)
    return found


def as_git_sees(entries: dict[str, Entry]) -> dict[str, Entry]:
    """What a snapshot keeps of each entry: a file's bytes and executable bit, a link's target."""
    return {
        key: ("file", entry[1], bool(cast(int, entry[2]) & 0o100)) if entry[0] == "file" else entry[:2]
        for key, entry in entries.items()
        if entry[0] != "folder"
    }


def write(root: Path, files: dict[str, str | bytes]) -> None:
    """Write ``files`` under ``root``, making their folders."""
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)


def step_start(ws: Path) -> set[str]:
    """The starting files; nothing is left out of the export."""
    write(ws, {"pkg/core.py": "x = 1\n", "docs/guide.md": "# Guide\n", "data/nested/deep.txt": "deep\n"})
    write(ws, {"run.sh": "#!/bin/sh\necho run\n"})
    (ws / "run.sh").chmod(0o755)
    return set()


def step_edit_add_delete_rename(ws: Path) -> set[str]:
    """A modified, an added, a deleted (its folder goes too) and a renamed file."""
    write(ws, {"pkg/core.py": "x = 2\n", "pkg/new.py": "y = 1\n"})
    shutil.rmtree(ws / "docs")
    (ws / "data" / "nested" / "deep.txt").rename(ws / "data" / "deep.txt")
    (ws / "data" / "nested").rmdir()
    return set()


def step_modes_and_links(ws: Path) -> set[str]:
    """Executable bits flipped; links inside kept, links out of the workspace left out."""
    (ws / "pkg" / "core.py").chmod(0o755)
    (ws / "run.sh").chmod(0o644)
    (ws / "latest").symlink_to("pkg/core.py")
    (ws / "pkg" / "up").symlink_to("../run.sh")
    (ws / "leak").symlink_to("/etc/hostname")
    (ws / "pkg" / "escape").symlink_to("../../outside")
    (ws / "only").mkdir()
    (ws / "only" / "out").symlink_to("/etc")  # a folder whose only entry is left out
    return {"leak", "pkg/escape", "only/out"}


def step_type_changes(ws: Path) -> set[str]:
    """A link becomes a file, a file a folder, a folder a file; a link is retargeted."""
    (ws / "latest").unlink()
    write(ws, {"latest": "now a file\n"})
    (ws / "pkg" / "new.py").unlink()
    write(ws, {"pkg/new.py/inner.txt": "inside\n"})
    shutil.rmtree(ws / "data")
    write(ws, {"data": "now a file\n"})
    (ws / "pkg" / "up").unlink()
    (ws / "pkg" / "up").symlink_to("core.py")
    (ws / "leak").unlink()
    (ws / "leak").symlink_to("pkg")  # the path that was left out now points inside
    return {"pkg/escape", "only/out"}


def step_attributes(ws: Path) -> set[str]:
    """A .gitattributes that leaves files out of every export, unchanged ones included."""
    write(ws, {".gitattributes": "*.txt export-ignore\n", "odd name ü.bin": b"\xff\x00\xfe"})
    return {"pkg/escape", "only/out", "pkg/new.py/inner.txt"}


def step_attributes_gone(ws: Path) -> set[str]:
    """The .gitattributes removed: the files it left out come back."""
    (ws / ".gitattributes").unlink()
    return {"pkg/escape", "only/out"}


STEPS: list[Callable[[Path], set[str]]] = [
    step_start,
    step_edit_add_delete_rename,
    step_modes_and_links,
    step_type_changes,
    step_attributes,
    step_attributes_gone,
]


async def test_an_incremental_export_equals_a_fresh_one(tmp_path: Path) -> None:
    """After every kind of change, updating the previous export gives what a full export gives,
    and that is the workspace minus what an export leaves out (links out of it, export-ignore)."""
    template = tmp_path / "template"
    template.mkdir()
    ws = Workspace.create(template, tmp_path / "workspace", tmp_path / "shadow.git")
    kept = tmp_path / "kept"
    previous = await ws.snapshot()
    await ws.export(previous, kept)
    for number, step in enumerate(STEPS):
        dropped = step(ws.path)
        tree = await ws.snapshot()
        await ws.export(tree, kept, base=previous)
        fresh = tmp_path / f"fresh-{number}"
        await ws.export(tree, fresh)
        assert listing(kept) == listing(fresh), step.__name__
        expected = {k: v for k, v in listing(ws.path).items() if k not in dropped}
        assert as_git_sees(listing(fresh)) == as_git_sees(expected), step.__name__
        previous = tree


# --- the runner's kept copy ----------------------------------------------------------------

#: Appended to the reference: on import (by the hidden tests) it fails every test if an
#: earlier run left a trace in its tree, then leaves one itself (``SCRIBBLES``).
SCRIBBLER = """

import os as _os
import pathlib as _pathlib

_top = _pathlib.Path(__file__).parent
_data = _top / "data"
_SEEN = (_data / "notes.txt").read_text() != "clean\\n" or any(
    (folder / "scribbled").exists() for folder in (_top, _data)
)
{scribble}
if _SEEN:

    def format_export_time(value):
        raise AssertionError("an earlier test run wrote into this tree")
"""

#: Traces a run can leave, each seen by a different check.
SCRIBBLES = {
    # Same size, and the times put back: only the change time tells.
    "edits-in-place": (
        "_times = (_data / 'notes.txt').stat()\n"
        "(_data / 'notes.txt').write_text('dirty\\n')\n"
        "_os.utime(_data / 'notes.txt', ns=(_times.st_atime_ns, _times.st_mtime_ns))"
    ),
    "adds-a-file": "(_data / 'scribbled').write_text('left by an earlier run')",
    "adds-a-file-at-the-top": "(_top / 'scribbled').write_text('left by an earlier run')",
}


async def runner_on(tmp_path: Path, sandbox: Sandbox, module: str) -> tuple[PytestRunner, Workspace]:
    """A real runner of export-time's hidden tests over a workspace whose module is ``module``."""
    challenge = load_challenge(REPO / "challenges" / "export-time")
    ws = Workspace.create(challenge.workspace, tmp_path / "workspace", tmp_path / "shadow.git")
    write(ws.path, {"export_time.py": module, "data/notes.txt": "clean\n"})
    grading = grading_environment(challenge.model.requirements)
    runner = PytestRunner(challenge, ws, tmp_path / "scratch", environment=grading, sandbox=sandbox)
    return runner, ws


def reference() -> str:
    """export-time's reference solution of phase 1."""
    return (REPO / "challenges/export-time/solutions/reference/phase1/export_time.py").read_text()


@pytest.mark.parametrize("scribble", sorted(SCRIBBLES))
@pytest.mark.parametrize("kind", ["detected", "limits-only"])
async def test_a_run_that_writes_into_its_tree_cannot_reach_the_next(
    tmp_path: Path, kind: str, scribble: str
) -> None:
    """Code under test that writes into its tree: each later run still sees the snapshot
    alone (after a one-file change, and on the same snapshot again)."""
    sandbox = detect_sandbox() if kind == "detected" else Sandbox("limits-only", "a test")
    module = reference() + SCRIBBLER.format(scribble=SCRIBBLES[scribble])
    runner, ws = await runner_on(tmp_path, sandbox, module)
    first = await ws.snapshot()
    write(ws.path, {"other.txt": "a one-file change\n"})
    second = await ws.snapshot()
    for tree in (first, second, second):
        run = await runner.run(tree, ("phase1",))
        assert run.status == "ok", run.detail
        assert [(p.passed, p.failed) for p in run.phases] == [(5, 0)], run.phases


async def test_a_clean_run_leaves_its_copy_for_the_next(tmp_path: Path) -> None:
    """A run that writes nothing hands its copy on: the next run's copy is updated, not remade."""
    runner, ws = await runner_on(tmp_path, detect_sandbox(), reference())
    first = await ws.snapshot()
    assert (await runner.run(first, ("phase1",))).status == "ok"
    (kept,) = (tmp_path / "scratch" / "export").iterdir()
    unchanged = (kept / "export_time.py").stat().st_ino
    write(ws.path, {"other.txt": "a one-file change\n"})
    run = await runner.run(await ws.snapshot(), ("phase1",))
    assert [(p.passed, p.failed) for p in run.phases] == [(5, 0)]
    assert [p.name for p in (tmp_path / "scratch").iterdir()] == ["export"]
    assert [p.name for p in (tmp_path / "scratch" / "export").iterdir()] == [kept.name]
    assert (kept / "export_time.py").stat().st_ino == unchanged
    assert (kept / "other.txt").read_text() == "a one-file change\n"

"""Scope findings: changes outside ``allowed_paths``, from real snapshots in a real git."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import anyio
import pytest

from orchestrator.challenge.loader import load_challenge
from orchestrator.log.records import Entry, SessionGraded, SessionScope, WorkspaceCreated
from orchestrator.scoring.scope import outside, scope_record
from orchestrator.session.workspace import Workspace
from tests.cli import REPO
from triggers import TestsResult


def workspace(tmp_path: Path) -> Workspace:
    """A real workspace of three files, its baseline taken."""
    template = tmp_path / "template"
    (template / "src").mkdir(parents=True)
    (template / "src/app.py").write_text("x = 1\n")
    (template / "README.md").write_text("# app\n")
    (template / "old.txt").write_text("old\n")
    return Workspace.create(template, tmp_path / "workspace", tmp_path / "shadow.git")


def test_changes_between_snapshots_name_each_file_and_how_it_changed(tmp_path: Path) -> None:
    """Added, modified and deleted files are told apart; a rename is a deletion and an addition."""
    ws = workspace(tmp_path)

    async def main() -> list[tuple[str, str]]:
        before = await ws.snapshot()
        (ws.path / "src/app.py").write_text("x = 2\n")
        (ws.path / "old.txt").rename(ws.path / "new.txt")
        (ws.path / "docs").mkdir()
        (ws.path / "docs/notes.md").write_text("notes\n")
        (ws.path / "src/__pycache__").mkdir()
        (ws.path / "src/__pycache__/app.cpython-311.pyc").write_bytes(b"\0")
        return await ws.changes(before, await ws.snapshot())

    assert anyio.run(main) == [
        ("docs/notes.md", "added"),
        ("new.txt", "added"),
        ("old.txt", "deleted"),
        ("src/app.py", "modified"),
    ]


def test_unchanged_snapshots_have_no_changes(tmp_path: Path) -> None:
    """Two snapshots of the same files differ in nothing."""
    ws = workspace(tmp_path)

    async def main() -> list[tuple[str, str]]:
        return await ws.changes(await ws.snapshot(), await ws.snapshot())

    assert anyio.run(main) == []


@pytest.mark.parametrize(
    ("allowed", "expected"),
    [
        (["*.py"], ["README.md", "docs/x.txt"]),
        (["src/**"], ["README.md", "docs/x.txt"]),
        (["**/*.py", "*.md"], ["docs/x.txt"]),
        (["docs/"], ["README.md", "src/app.py"]),
        (["app.py"], ["README.md", "docs/x.txt"]),  # no '/': the last segment at any depth
        (["README.md", "docs/*", "src/*.py"], []),
    ],
)
def test_outside_keeps_the_changes_no_glob_allows(allowed: list[str], expected: list[str]) -> None:
    """A change is a finding when it matches none of the globs (gitignore rules)."""
    changes = [("README.md", "modified"), ("docs/x.txt", "added"), ("src/app.py", "deleted")]
    assert [f["path"] for f in outside(allowed, changes)] == expected


def test_the_scope_record_compares_the_baseline_with_the_last_graded_tree(tmp_path: Path) -> None:
    """The record names every change outside allowed_paths between baseline and final grading."""
    challenge = load_challenge(REPO / "challenges" / "export-time")
    ws = Workspace.create(challenge.workspace, tmp_path / "workspace", tmp_path / "shadow.git")

    async def main() -> SessionScope | None:
        baseline = await ws.snapshot()
        (ws.path / "export_time.py").write_text("# changed\n")
        middle = await ws.snapshot()
        (ws.path / "notes.txt").write_text("scratch\n")
        final = await ws.snapshot()
        entries = [
            Entry(1, 0.0, WorkspaceCreated(baseline, "python", {})),
            Entry(2, 1.0, TestsResult(1.0, 1, middle, ())),
            Entry(3, 2.0, SessionGraded(snapshot=final)),
        ]
        return await scope_record(challenge, ws, entries)

    record = anyio.run(main)
    assert record == SessionScope(
        tuple(challenge.model.allowed_paths), 2, ({"path": "notes.txt", "change": "added"},)
    )


def test_no_allowed_paths_no_record(tmp_path: Path) -> None:
    """A challenge that declares no scope gets no scope record, whatever changed."""
    challenge = load_challenge(REPO / "challenges" / "export-time")
    unscoped = dataclasses.replace(challenge, model=challenge.model.model_copy(update={"allowed_paths": []}))
    ws = Workspace.create(challenge.workspace, tmp_path / "workspace", tmp_path / "shadow.git")

    async def main() -> SessionScope | None:
        baseline = await ws.snapshot()
        (ws.path / "notes.txt").write_text("scratch\n")
        entries = [
            Entry(1, 0.0, WorkspaceCreated(baseline, "python", {})),
            Entry(2, 1.0, SessionGraded(snapshot=await ws.snapshot())),
        ]
        return await scope_record(unscoped, ws, entries)

    assert anyio.run(main) is None

"""Broken variants are overlays on the reference: the scripted agent lays them over it.

A broken variant's phase folder holds only what differs from the reference's phase folder,
and a ``.omit`` list of the reference's files it leaves out (docs/authoring.md).
"""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

import pytest

from orchestrator.agents import AgentContext, Message, ScriptedAgent
from orchestrator.challenge.loader import load_challenge, validate
from orchestrator.grading.git import git_sync
from orchestrator.session.workspace import Workspace
from tests.cli import REPO
from triggers import AgentOutput, Event, Observation

pytestmark = pytest.mark.anyio

#: Every challenge folder whose broken variants must be overlays.
CHALLENGES = [
    *sorted(p for p in (REPO / "challenges").iterdir() if p.is_dir()),
    REPO / "tests/fixtures/redteam-target",
]


@pytest.fixture
def anyio_backend() -> str:
    """The agent commits with real git: asyncio."""
    return "asyncio"


def write(root: Path, files: dict[str, str]) -> None:
    """Write ``files`` (relative path → text) under ``root``."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


@pytest.fixture
def challenge(tmp_path: Path) -> Path:
    """normalize-tags with a richer reference and a broken variant ``mixed`` that overlays it."""
    root = tmp_path / "normalize-tags"
    shutil.copytree(REPO / "challenges" / "normalize-tags", root)
    solutions = root / "solutions"
    write(solutions / "reference" / "phase1", {"helpers.py": "PHASE1 = 1\n"})
    write(
        solutions / "reference" / "phase2",
        {"NOTES.md": "notes\n", "docs/a.md": "a\n", ".transcript": "Done.\n"},
    )
    mixed = {"tags.py": "OVERLAID = True\n", "extra.py": "EXTRA = 1\n", ".omit": "NOTES.md\ndocs\n"}
    write(solutions / "broken" / "mixed" / "phase2", mixed)
    return root


async def play(root: Path, variant: str, tmp_path: Path) -> tuple[Path, list[str]]:
    """Play both phases of ``variant`` on a fresh real workspace; its folder and what the agent said."""
    loaded = load_challenge(root)
    workspace = Workspace.create(root / "workspace", tmp_path / variant / "ws", tmp_path / variant / "shadow")
    said: list[str] = []

    def emit(item: Event | Observation) -> None:
        if isinstance(item, AgentOutput):
            said.append(item.text)

    ctx = AgentContext(workspace.path, tmp_path / variant / "agent", loaded, emit)
    agent = ScriptedAgent(variant)
    await agent.turn(ctx, [Message(1, "briefing", "briefing", "Start.", phase="phase1")])
    await agent.turn(ctx, [Message(2, "revision", "revision", "Dedupe.", phase="phase2")])
    return workspace.path, said


def files(root: Path) -> dict[str, str]:
    """Every file below ``root`` (``.git`` aside), relative path → text."""
    found = (p for p in root.rglob("*") if p.is_file() and ".git" not in p.relative_to(root).parts)
    return {p.relative_to(root).as_posix(): p.read_text() for p in found}


async def test_an_overlay_replaces_adds_and_omits_reference_files(challenge: Path, tmp_path: Path) -> None:
    """Overlay files win, new ones join, omitted files and folders stay out, the rest stays."""
    workspace, said = await play(challenge, "broken/mixed", tmp_path)
    expected = {"tags.py": "OVERLAID = True\n", "extra.py": "EXTRA = 1\n", "helpers.py": "PHASE1 = 1\n"}
    assert files(workspace) == expected
    assert said == ["Done.\n"]  # the reference's transcript: the overlay did not replace it


async def test_the_reference_plays_as_before(challenge: Path, tmp_path: Path) -> None:
    """The reference itself is no overlay: its phase folders are copied as they are."""
    workspace, said = await play(challenge, "reference", tmp_path)
    reference = challenge / "solutions" / "reference" / "phase2" / "tags.py"
    expected = {
        "tags.py": reference.read_text(),
        "NOTES.md": "notes\n",
        "docs/a.md": "a\n",
        "helpers.py": "PHASE1 = 1\n",
    }
    assert files(workspace) == expected
    assert said == ["Done.\n"]


async def test_a_follow_up_overlays_the_reference_as_a_second_commit(challenge: Path, tmp_path: Path) -> None:
    """A variant splits the reference over two commits: the first omits files, the follow-up
    (only a message) brings the reference's files in, so the end state is the reference's."""
    split = challenge / "solutions" / "broken" / "split" / "phase2"
    write(split, {".omit": "NOTES.md\n", ".followup/.commit-message": "oops, forgot the notes\n"})
    workspace, said = await play(challenge, "broken/split", tmp_path / "split")
    reference, _ = await play(challenge, "reference", tmp_path / "reference")
    assert files(workspace) == files(reference)
    assert said == ["Done.\n", "Done.\n"]  # each commit says the reference's words
    last = git_sync(["show", "--format=%s", "--name-only", "HEAD"], cwd=workspace).split()
    assert last == ["oops,", "forgot", "the", "notes", "NOTES.md"]


def test_a_follow_up_omit_is_checked_against_the_reference(challenge: Path) -> None:
    """A follow-up's ``.omit`` names files of the reference's phase folder, like any overlay's."""
    omit = challenge / "solutions" / "broken" / "mixed" / "phase2" / ".followup" / ".omit"
    write(omit.parent, {".omit": "ZZZ.md\n"})
    assert [str(p) for p in validate(challenge)] == [
        f"{omit}:1:1: 'ZZZ.md' is not in solutions/reference/phase2/, so there is nothing to omit "
        "(one path a line, relative to the phase folder)"
    ]


def test_omitting_a_file_the_reference_lacks_is_named(challenge: Path) -> None:
    """A ``.omit`` line naming no file of the reference's phase folder fails validation, at its line."""
    omit = challenge / "solutions" / "broken" / "mixed" / "phase2" / ".omit"
    omit.write_text("NOTES.md\n\nNOTE.md\n")
    assert [str(p) for p in validate(challenge)] == [
        f"{omit}:3:1: 'NOTE.md' is not in solutions/reference/phase2/, so there is nothing to omit; "
        "did you mean 'NOTES.md'? (one path a line, relative to the phase folder)"
    ]


def test_a_reference_cannot_omit(challenge: Path) -> None:
    """``.omit`` in the reference is refused: the reference is laid over nothing."""
    omit = challenge / "solutions" / "reference" / "phase2" / ".omit"
    omit.write_text("tags.py\n")
    assert [str(p) for p in validate(challenge)] == [
        f"{omit}: .omit belongs in a broken variant's phase folder (solutions/broken/<name>/<phase>/); "
        "the reference is laid over nothing"
    ]


@pytest.mark.parametrize("root", CHALLENGES, ids=lambda p: p.name)
def test_no_broken_file_copies_the_reference(root: Path) -> None:
    """Each broken variant holds only what differs from the reference: no file equals its reference file."""
    broken, reference = root / "solutions" / "broken", root / "solutions" / "reference"
    copies = []
    for file in sorted(p for p in broken.rglob("*") if p.is_file()):
        _, phase, *inside = file.relative_to(broken).parts
        if inside[:1] == [".followup"]:  # a follow-up is an overlay on the same reference folder
            inside = inside[1:]
        same = reference.joinpath(phase, *inside)
        if same.is_file() and filecmp.cmp(file, same, shallow=False):
            copies.append(file.relative_to(root).as_posix())
    assert copies == []

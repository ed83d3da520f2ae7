"""Broken variants are overlays on the reference: the scripted agent lays them over it.

A broken variant's phase folder holds only what differs from the reference's phase folder,
a ``.omit`` list of the reference's files it leaves out and a ``.replace`` list of small
edits of the laid files (docs/authoring.md).
"""

from __future__ import annotations

import difflib
import filecmp
import shutil
from pathlib import Path

import pytest

from orchestrator.agents import ScriptedAgent
from orchestrator.challenge.loader import load_challenge, validate
from orchestrator.seams import AgentContext, Message
from orchestrator.session.workspace import Workspace
from orchestrator.system.git import git_sync
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


@pytest.mark.parametrize(("name", "text"), [(".omit", "tags.py\n"), (".replace", "[]\n")])
def test_a_reference_cannot_omit_or_replace(challenge: Path, name: str, text: str) -> None:
    """``.omit`` and ``.replace`` in the reference are refused: the reference is laid over nothing."""
    listed = challenge / "solutions" / "reference" / "phase2" / name
    listed.write_text(text)
    assert [str(p) for p in validate(challenge)] == [
        f"{listed}: {name} belongs in a broken variant's phase folder (solutions/broken/<name>/<phase>/); "
        "the reference is laid over nothing"
    ]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            '- file: tags.py\n  old: "no such text"\n  new: ""\n',
            "1:1: old: does not occur in tags.py; it must occur exactly once",
        ),
        ('- file: tags.py\n  old: "e"\n  new: ""\n', "1:1: old: occurs"),
        (
            '- file: tag.py\n  old: "x"\n  new: ""\n',
            "1:1: no file 'tag.py' to edit in solutions/reference/phase2/ or this variant; "
            "did you mean 'tags.py'?",
        ),
        (
            '- file: tags.py\n  old: "x"\n',
            "1:1: each edit needs exactly file, old and new, as text (found file, old)",
        ),
        ("file: tags.py\n", "1:1: expected a list of {file, old, new}"),
        ("- [unclosed\n", "2:1: not valid YAML"),
    ],
)
def test_a_bad_replace_list_is_named_at_its_line(challenge: Path, text: str, problem: str) -> None:
    """Each wrong ``.replace`` entry fails validation, at its line, saying what is wrong."""
    edits = challenge / "solutions" / "broken" / "mixed" / "phase2" / ".replace"
    (edits.parent / "tags.py").unlink()
    edits.write_text(text)
    found = [str(p) for p in validate(challenge)]
    assert len(found) == 1
    assert found[0].startswith(f"{edits}:{problem}"), found


def beside_the_reference(root: Path) -> list[tuple[Path, Path]]:
    """Each broken variant's file that has a file at the same place in the reference's phase
    folder, with that file (a follow-up is an overlay on the same reference folder)."""
    broken, reference = root / "solutions" / "broken", root / "solutions" / "reference"
    pairs = []
    for file in sorted(p for p in broken.rglob("*") if p.is_file()):
        _, phase, *inside = file.relative_to(broken).parts
        same = reference.joinpath(phase, *(inside[1:] if inside[:1] == [".followup"] else inside))
        if same.is_file():
            pairs.append((file, same))
    return pairs


@pytest.mark.parametrize("root", CHALLENGES, ids=lambda p: p.name)
def test_no_broken_file_nearly_copies_the_reference(root: Path) -> None:
    """A broken file that differs from its reference file in a few lines is a ``.replace`` edit
    instead: no broken Python file shares more than 80% of its lines with its reference file."""
    near = []
    for file, same in beside_the_reference(root):
        lines = (same.read_text().splitlines(), file.read_text().splitlines())
        ratio = difflib.SequenceMatcher(None, *lines, autojunk=False).ratio()
        if file.suffix == ".py" and ratio > 0.8:
            near.append(f"{file.relative_to(root).as_posix()} ({ratio:.0%} alike)")
    assert near == []


@pytest.mark.parametrize("root", CHALLENGES, ids=lambda p: p.name)
def test_no_broken_file_copies_the_reference(root: Path) -> None:
    """Each broken variant holds only what differs from the reference: no file equals its reference file."""
    copies = [
        file.relative_to(root).as_posix()
        for file, same in beside_the_reference(root)
        if filecmp.cmp(file, same, shallow=False)
    ]
    assert copies == []

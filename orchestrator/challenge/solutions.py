"""A challenge's solutions as files: the folders each phase's commits lay, and laying them.

For each phase, a solution variant (``reference`` or ``broken/<name>``) is one or more folders,
a commit each (``solutions/<variant>/<phase>/``, then its ``.followup/``). Applying one:

1. deletes the workspace files its ``.delete`` file lists (globs, one per line);
2. copies the folder over the workspace (its dot-files stay behind);
3. ``.transcript`` holds what the scripted agent says and ``.commit-message`` the message of its
   commit (default ``Implement <phase>``).

A broken variant is an overlay on the reference (``overlays.py``): where it has a folder for the
phase, the folder applied is the reference's with the variant's laid over it; where it has none,
the reference's is applied. The scripted agent (``agents/scripted.py``) commits what this module
lays; the hidden tests of a later phase are collected against the reference laid here, files only
(``grading/collect.py``).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from orchestrator.challenge.model import Challenge
from orchestrator.challenge.overlays import FOLLOWUP, lay_overlay
from triggers.globs import compile_glob

__all__ = [
    "COMMIT_MESSAGE",
    "DELETE_LIST",
    "TRANSCRIPT",
    "laid_reference",
    "lay",
    "lay_reference",
    "solution_folders",
]

#: In a solution phase folder: globs of workspace files to delete before copying.
DELETE_LIST = ".delete"
#: What the scripted agent "says" when it applies the folder.
TRANSCRIPT = ".transcript"
#: The commit message for the folder.
COMMIT_MESSAGE = ".commit-message"
_NOT_COPIED = (DELETE_LIST, TRANSCRIPT, COMMIT_MESSAGE, FOLLOWUP)


def solution_folders(challenge: Challenge, variant: str, phase: str, scratch: Path) -> list[Path]:
    """The folders to apply for ``phase``, a commit each: the reference's (and its follow-ups),
    or ``variant``'s overlays on it, written in ``scratch``."""
    reference = challenge.solution("reference", phase)
    overlay = challenge.solution(variant, phase)
    if overlay == reference or not overlay.is_dir():
        overlay = reference
    folders = []
    while overlay.is_dir():
        if overlay.is_relative_to(reference):  # the reference's own (follow-up) folder
            folders.append(overlay)
        else:
            folders.append(lay_overlay(reference, overlay, scratch / str(len(folders))))
        overlay = overlay / FOLLOWUP
    return folders


def lay_reference(challenge: Challenge, phases: Sequence[str], workspace: Path) -> None:
    """Lay the reference solution of each of ``phases`` over ``workspace`` as the scripted agent
    does, files only (no commits, so ``workspace`` need not be a repository): what the hidden
    tests of a later phase are collected against (``grading/collect.py``)."""
    for _ in laid_reference(challenge, phases, workspace):
        pass


def laid_reference(challenge: Challenge, phases: Sequence[str], workspace: Path) -> Iterator[str]:
    """Lay each folder of the reference's ``phases`` in turn, yielding its commit message after each."""
    with tempfile.TemporaryDirectory(prefix="changeup-solution-") as scratch:
        for phase in phases:
            for source in solution_folders(challenge, "reference", phase, Path(scratch)):
                yield lay(workspace, source, f"Implement {phase}")


def lay(workspace: Path, source: Path, default_message: str) -> str:
    """Steps 1 and 2 of applying ``source`` (its deletions, then its files); returns its commit message."""
    deletions = source / DELETE_LIST
    if deletions.is_file():
        _delete(workspace, deletions.read_text().split())
    shutil.copytree(source, workspace, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*_NOT_COPIED))
    message_file = source / COMMIT_MESSAGE
    return message_file.read_text().strip() if message_file.is_file() else default_message


def _delete(workspace: Path, patterns: list[str]) -> None:
    compiled = [compile_glob(p) for p in patterns]
    for path in sorted(workspace.rglob("*"), reverse=True):
        relative = path.relative_to(workspace).as_posix()
        if relative.startswith(".git/") or relative == ".git":
            continue
        if any(c.match(relative) for c in compiled):
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()

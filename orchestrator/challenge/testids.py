"""A hidden-test folder read as files: its files, and its pytest tests listed without importing anything.

Test ids are ``<phase>/<file>::<test>`` (or ``<phase>/<file>::<Class>::<test>``), the form
``supersedes:`` and calibration ``fails:`` use. Reading the source with :mod:`ast` means a
challenge can be validated without installing what its tests import.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

__all__ = ["TestFileError", "covers", "hidden_files", "list_tests", "test_files"]


def covers(declared: str, test_id: str) -> bool:
    """``declared`` names ``test_id`` itself, its file or class, or its parametrized cases."""
    return test_id == declared or test_id.startswith((declared + "::", declared + "["))


class TestFileError(ValueError):
    """A hidden test file that is not valid Python."""

    __test__ = False  # not a pytest test class, despite the name

    def __init__(self, path: Path, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.column = column


def test_files(folder: Path) -> list[Path]:
    """The pytest files (``test_*.py``, ``*_test.py``) under ``folder``, sorted."""
    return sorted(
        p
        for p in folder.rglob("*.py")
        if (p.name.startswith("test_") or p.name.endswith("_test.py")) and "__pycache__" not in p.parts
    )


test_files.__test__ = False  # type: ignore[attr-defined]


def list_tests(phase: str, folder: Path) -> dict[str, list[str]]:
    """For each test file (relative path), the ids of the tests it defines."""
    out: dict[str, list[str]] = {}
    for path in test_files(folder):
        relative = path.relative_to(folder).as_posix()
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except SyntaxError as error:
            raise TestFileError(path, error.lineno or 1, error.offset or 1, error.msg) from None
        ids: list[str] = []
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
                ids.append(f"{phase}/{relative}::{node.name}")
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                ids += [
                    f"{phase}/{relative}::{node.name}::{item.name}"
                    for item in node.body
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                    and item.name.startswith("test")
                ]
        out[relative] = ids
    return out


def hidden_files(folder: Path) -> Iterator[tuple[str, bytes]]:
    """Each file of a hidden test folder (relative path, bytes), sorted; links and caches skipped."""
    if not folder.is_dir():
        return
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if "__pycache__" in relative.parts or path.is_symlink() or not path.is_file():
            continue
        yield relative.as_posix(), path.read_bytes()

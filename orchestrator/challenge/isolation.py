"""Whether the workspace's code can reach a challenge's hidden tests inside their own process.

Calibration's impostors (``agents/impostor.py``) return doubles from the reference's functions;
only a test that calls those functions in its own process can be fooled by one. Hidden tests
that see the program only across a process boundary (its output, its files, its exit code)
cannot, so an impostor would reach full marks and prove nothing. A challenge says so with
``testing: isolation: subprocess``; a challenge whose every phase is a test command has the
boundary by construction; and one whose hidden code imports nothing of the workspace is
detected, conservatively: any dynamic import (``importlib``, ``__import__``, ``exec``, a
change of ``sys.path``, ``pytest_plugins``) makes the detection give up.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from orchestrator.challenge.model import Challenge

__all__ = ["process_boundary", "workspace_imports"]

#: Modules that import by name at run time: hidden code using any of them may load workspace code.
_DYNAMIC_MODULES = {"importlib", "imp", "runpy", "pkgutil", "zipimport"}
#: Builtins that run or import code given as data.
_DYNAMIC_CALLS = {"__import__", "exec", "eval", "compile"}


def process_boundary(challenge: Challenge) -> str:
    """Why ``challenge``'s hidden tests never hold the workspace's code in their process, in words;
    ``""`` when they may (calibration then runs its impostors)."""
    if all(phase.command is not None for phase in challenge.phases):
        return "every phase runs a test command, which sees the program only through a process boundary"
    if challenge.model.testing.isolation == "subprocess":
        return (
            "testing.isolation is subprocess: the hidden tests start the program as a child process, "
            "so no double of its results reaches them"
        )
    if workspace_imports(challenge) == set():
        return (
            "detected: no hidden test or support module imports a module of the workspace or the "
            "reference, or imports dynamically (declare testing.isolation: subprocess to say so)"
        )
    return ""


def workspace_imports(challenge: Challenge) -> set[str] | None:
    """The workspace's (and reference's) top-level modules the hidden pytest code imports; None
    when it imports dynamically, so that what it imports cannot be read."""
    modules = _workspace_modules(challenge)
    found: set[str] = set()
    for path in _hidden_code(challenge):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            return None  # unreadable: nothing can be concluded
        imported = _imports(tree)
        if imported is None:
            return None
        found |= imported & modules
    return found


def _workspace_modules(challenge: Challenge) -> set[str]:
    """Top-level module names the starter, a reference or a broken variant may provide."""
    solutions = challenge.root / "solutions"
    roots = [challenge.workspace]
    roots += [p for p in (solutions / "reference").glob("*") if p.is_dir()]
    roots += [p for p in (solutions / "broken").glob("*/*") if p.is_dir()]
    names: set[str] = set()
    for root in roots:
        for entry in root.iterdir() if root.is_dir() else ():
            if entry.is_dir() and entry.name.isidentifier():
                names.add(entry.name)  # a package, or a namespace package
            elif entry.suffix == ".py":
                names.add(entry.stem)
    return names


def _hidden_code(challenge: Challenge) -> Iterator[Path]:
    """The Python files of the pytest phases' hidden tests and of the support folder."""
    folders = [phase.tests for phase in challenge.phases if phase.command is None]
    if challenge.model.testing.support is not None:
        folders.append(challenge.root / challenge.model.testing.support)
    for folder in folders:
        for path in sorted(folder.rglob("*.py")) if folder.is_dir() else ():
            if "__pycache__" not in path.parts:
                yield path


def _imports(tree: ast.Module) -> set[str] | None:
    """The top-level modules ``tree`` imports; None when it imports (or may import) dynamically."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: a module beside the test, never the workspace's
                continue
            names.add((node.module or "").split(".")[0])
        elif _imports_dynamically(node):
            return None
    return None if names & _DYNAMIC_MODULES else names


def _imports_dynamically(node: ast.AST) -> bool:
    """A builtin that runs or imports code given as data, ``pytest_plugins``, or ``sys.path``,
    ``sys.modules`` or ``sys.meta_path`` (what decides where an import comes from)."""
    if isinstance(node, ast.Name):
        return node.id in _DYNAMIC_CALLS or node.id == "pytest_plugins"
    return (
        isinstance(node, ast.Attribute)
        and node.attr in ("path", "modules", "meta_path")
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    )

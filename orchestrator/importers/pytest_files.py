"""What a pytest file declares, read with ``ast`` and never run: its tests and their markers,
and the modules it imports. The importers use it to declare only the groups that have tests
and to name the tests a starter may pass; the groups themselves are marker expressions that
pytest evaluates on each collected case when the tests run, so they stay exact."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from orchestrator.importers.draft import SourceError

__all__ = ["DeclaredTest", "declared_tests", "exit_only_tests", "imported_modules"]


@dataclass(frozen=True)
class DeclaredTest:
    """A test function (``test`` or ``Class::test``) and the markers on it, its class or its module."""

    name: str
    markers: frozenset[str]
    #: some case of it carries marks of its own (``pytest.param(..., marks=...)``)
    case_marks: bool


def _parse(path: Path) -> ast.Module:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as error:
        raise SourceError(path, f"not valid Python: line {error.lineno}: {error.msg}") from None


def _mark_name(node: ast.expr) -> str | None:
    """``pytest.mark.NAME`` or ``mark.NAME``, called or not."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        parent = node.value
        if isinstance(parent, ast.Attribute) and parent.attr == "mark":
            return node.attr
        if isinstance(parent, ast.Name) and parent.id == "mark":
            return node.attr
    return None


def _marks(nodes: list[ast.expr]) -> set[str]:
    names = {_mark_name(node) for node in nodes}
    return {name for name in names if name and name not in ("parametrize", "usefixtures")}


def _module_marks(tree: ast.Module) -> set[str]:
    marks: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            value = node.value
            marks |= _marks(list(value.elts) if isinstance(value, ast.List | ast.Tuple) else [value])
    return marks


def _has_case_marks(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(
        isinstance(node, ast.keyword) and node.arg == "marks"
        for decorator in function.decorator_list
        for node in ast.walk(decorator)
    )


def declared_tests(path: Path) -> list[DeclaredTest]:
    """The tests of the pytest file at ``path``, in file order."""
    tree = _parse(path)
    module = _module_marks(tree)
    tests: list[DeclaredTest] = []

    def add(function: ast.FunctionDef | ast.AsyncFunctionDef, prefix: str, marks: set[str]) -> None:
        if function.name.startswith("test"):
            own = marks | _marks(function.decorator_list)
            tests.append(DeclaredTest(prefix + function.name, frozenset(own), _has_case_marks(function)))

    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            add(node, "", module)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            marks = module | _marks(node.decorator_list)
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    add(item, f"{node.name}::", marks)
    return tests


def imported_modules(path: Path) -> set[str]:
    """The top-level names of the modules the Python file at ``path`` imports."""
    names: set[str] = set()
    for node in ast.walk(_parse(path)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def exit_only_tests(path: Path) -> set[str]:
    """The tests of the pytest file at ``path`` (named as :func:`declared_tests` names them) whose
    every assertion is that a process failed (``result.returncode != 0``, ``== 2``, ``> 0``):
    an empty starter, which cannot run at all, passes them."""
    tree = _parse(path)
    found: set[str] = set()
    functions = [("", n) for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            functions += [
                (f"{node.name}::", n)
                for n in node.body
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            ]
    for prefix, function in functions:
        asserts = [n for n in ast.walk(function) if isinstance(n, ast.Assert)]
        if function.name.startswith("test") and asserts and all(_a_failed_exit(a.test) for a in asserts):
            found.add(prefix + function.name)
    return found


def _a_failed_exit(test: ast.expr) -> bool:
    """``X.returncode != 0``, ``X.returncode == N`` (N not 0), ``X.returncode > 0`` or ``>= 1``."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if not (isinstance(left, ast.Attribute) and left.attr == "returncode"):
        return False
    if not (isinstance(right, ast.Constant) and type(right.value) is int):
        return False
    value = right.value
    return (
        (isinstance(op, ast.NotEq) and value == 0)
        or (isinstance(op, ast.Eq) and value != 0)
        or (isinstance(op, ast.Gt) and value >= 0)
        or (isinstance(op, ast.GtE) and value >= 1)
    )

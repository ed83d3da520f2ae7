"""A test file whose every test skips itself from a later checkpoint on, read with ``ast``.

SlopCodeBench runs a checkpoint's tests again at every later checkpoint, with the *current*
``--checkpoint``, as that checkpoint's regression tests, which its pass policy leaves out. Some
test files say in code that they stop applying at a later checkpoint (its spec changed what
they check)::

    def _skip_for_new_dsl(checkpoint_name):
        return int(checkpoint_name.split("_")[-1]) >= 3

    def test_core(checkpoint_name, ...):
        if _skip_for_new_dsl(checkpoint_name):
            pytest.skip("Checkpoint 3+ uses a different DSL syntax.")

:func:`skipped_from` finds that checkpoint number (here 3) when *every* test of the file
starts with such a guard: an ``if`` whose condition compares something named ``checkpoint``
(directly, or in a function of the same module it calls) with ``>=`` or ``>`` against an
integer, and whose body calls ``pytest.skip``. One guard the reading cannot follow, or two
different numbers, and it finds nothing: the phase then keeps running, as written.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PhaseSkip", "skipped_from"]

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True, slots=True)
class PhaseSkip:
    """Every test of a file skips itself at checkpoint ``number`` and later, saying ``reason``."""

    number: int
    reason: str


def skipped_from(path: Path) -> PhaseSkip | None:
    """The checkpoint from which every test of the file at ``path`` skips itself, if one is clear."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None
    helpers = {node.name: node for node in tree.body if isinstance(node, _FUNCTIONS)}
    tests = [node for node in tree.body if isinstance(node, _FUNCTIONS) and node.name.startswith("test")]
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name.startswith("Test")):
        tests += [n for n in cls.body if isinstance(n, _FUNCTIONS) and n.name.startswith("test")]
    found = {_guard(test, helpers) for test in tests}
    if not tests or len(found) != 1:
        return None
    return found.pop()


def _guard(test: ast.FunctionDef | ast.AsyncFunctionDef, helpers: Mapping[str, ast.stmt]) -> PhaseSkip | None:
    """The skip guard among the test's first statements (after its docstring)."""
    body = [s for s in test.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    for statement in body[:2]:
        if not isinstance(statement, ast.If) or not any(_is_skip(s) for s in statement.body):
            continue
        numbers = _thresholds(statement.test, helpers)
        if len(numbers) == 1:
            reason = next((_reason(s) for s in statement.body if _is_skip(s)), "")
            return PhaseSkip(numbers.pop(), reason)
    return None


def _is_skip(statement: ast.stmt) -> bool:
    """``pytest.skip(...)`` as a statement."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "skip"
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == "pytest"
    )


def _reason(statement: ast.stmt) -> str:
    call = statement.value if isinstance(statement, ast.Expr) else None
    if isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Constant):
        return str(call.args[0].value)
    return ""


def _thresholds(condition: ast.expr, helpers: Mapping[str, ast.stmt]) -> set[int]:
    """The first checkpoint number of each ``checkpoint >= N`` (or ``> N - 1``) the condition
    holds, following calls of the module's own functions one level."""
    places: list[ast.AST] = [condition]
    for node in ast.walk(condition):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in helpers:
            places.append(helpers[node.func.id])
    numbers: set[int] = set()
    for place in places:
        for node in ast.walk(place):
            if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and _names_checkpoint(node.left)):
                continue
            right = node.comparators[0]
            if not (isinstance(right, ast.Constant) and type(right.value) is int):
                continue
            if isinstance(node.ops[0], ast.GtE):
                numbers.add(right.value)
            elif isinstance(node.ops[0], ast.Gt):
                numbers.add(right.value + 1)
    return numbers


def _names_checkpoint(node: ast.expr) -> bool:
    """Whether a name or attribute under ``node`` says ``checkpoint``."""
    for part in ast.walk(node):
        if isinstance(part, ast.Name) and "checkpoint" in part.id.lower():
            return True
        if isinstance(part, ast.Attribute) and "checkpoint" in part.attr.lower():
            return True
    return False

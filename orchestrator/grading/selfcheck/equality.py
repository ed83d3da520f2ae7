"""Equality that cannot lie: the hidden tests' comparisons, checked for an operand that equals everything.

pytest's assertion rewriting is extended (:func:`install`) so that every ``==``, ``!=``,
``in`` and ``not in`` of an ``assert`` in a module pytest rewrites (the hidden test files and
their conftest files) goes through :func:`compare`; ``unittest``'s ``assertEqual``,
``assertNotEqual``, ``assertIn`` and ``assertNotIn`` are checked the same way
(:func:`install_unittest`). The comparison itself is unchanged. Besides, every part of an
operand that is not a plain value of an exact built-in type (exact lists, tuples, dicts and
sets are walked, and so are the contents of their subclasses, iterated as their base type
iterates) is compared with fresh values nothing honest equals: a private object, a random
int, a random str, and a random value of the other operand's type when that is a plain one.
A part that says it equals one of them, or that it is not unequal to it, equals everything:
the assertion fails ("an object that equals everything: <type> from <module>") and the run is
tampered. The bootstrap's check of each test's code compiles with the same rewriting, so the
two agree. Plain values of exact built-in types cost one type check each. Each rewritten
assertion also calls :func:`asserted` once its operands are evaluated, before it decides:
:mod:`.watch` checks there the globals and builtins the asserting code reads.

What it does not see: comparisons pytest does not rewrite (a module the tests import,
``--assert=plain``, inside a comprehension or lambda), and an ``__eq__`` that tells the fresh
values from the expected one by reading its caller's frame or code (the out-of-process mode
is the answer to that), and an operand the test's source builds with ``ANY`` (the tests' own
always-equal matcher, ``unittest.mock.ANY``): it is not checked, and neither is what else it
holds. ``unittest``'s asserts check both operands.
"""

from __future__ import annotations

import ast
import operator
import os
import sys
import types
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["ASSERTED", "SAY", "asserted", "compare", "install", "install_unittest"]

#: Exact types whose ``==`` is the built-in one (``type``: identity, but for a metaclass).
_SCALARS = frozenset({type(None), bool, int, float, complex, str, bytes, type, range})
_CONTAINERS = (list, tuple, set, frozenset, dict)
_MISSING = object()
_urandom = os.urandom  # held before the agent's code runs: it may rebind these
_getframe = sys._getframe


class _Fresh:
    """A value nothing honest equals: the private sentinel of each check."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<a fresh value>"


#: Where a lie is told (the Guard's tampering line), set by each run (:class:`.watch.Watch`).
SAY: list[Callable[[str], None]] = []
#: What checks, after each assertion's operands, the globals its code reads (given the asserting
#: frame's globals and code), set by each run.
ASSERTED: list[Callable[[dict[str, Any], types.CodeType], None]] = []


def _decoys(other: object) -> list[object]:
    """Fresh values nothing honest equals: a private object, a random int and str, and one of
    ``other``'s exact type when it is a plain built-in one (an object that equals every int,
    but not a private object, is caught too)."""
    number = int.from_bytes(_urandom(16), "little") | 1 << 130
    text = _urandom(12).hex()
    values: list[object] = [_Fresh(), number, text]
    kind = type(other)
    if kind is float:
        values.append(float(number % (1 << 52)) + 0.5)
    elif kind is bytes:
        values.append(_urandom(12))
    elif kind is list or kind is tuple or kind is set or kind is frozenset:
        values.append(kind([text]))
    elif kind is dict:
        values.append({text: number})
    return values


def _parts(value: object) -> list[object]:
    """The parts of ``value`` that are not plain values of exact built-in types: itself unless it
    is one, and, through lists, tuples, sets and dicts (and their subclasses), their contents;
    subclasses of those containers last (a lie inside one is named as itself)."""
    found: list[object] = []
    containers: list[object] = []
    stack = [value]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind in _SCALARS:
            continue
        if not issubclass(kind, _CONTAINERS):
            found.append(item)
            continue
        if id(item) in seen:
            continue
        seen.add(id(item))
        if kind not in _CONTAINERS:  # a subclass: its own == may lie, and its contents
            containers.append(item)
        if issubclass(kind, dict):
            elements: Iterable[object] = (*dict.keys(item), *dict.values(item))  # type: ignore[arg-type]
        elif kind in _CONTAINERS:
            elements = item  # type: ignore[assignment]
        else:  # iterated as its base type iterates, not by its own __iter__
            base: Any = next(b for b in _CONTAINERS if issubclass(kind, b))
            elements = tuple(base.__iter__(item))
        if not set(map(type, elements)) <= _SCALARS:  # most often all plain: one pass in C
            stack.extend(element for element in elements if type(element) not in _SCALARS)
    return found + containers


def _truth(compute: Callable[[Any, Any], object], left: object, right: object) -> bool | None:
    """What ``compute(left, right)`` says, as a bool; None when it cannot say (it raised)."""
    try:
        return bool(compute(left, right))
    except Exception:  # an honest __eq__ may refuse a value it does not know
        return None


def _lie(part: object, other: object) -> bool:
    for decoy in _decoys(other):
        if _truth(operator.eq, part, decoy) is True or _truth(operator.ne, part, decoy) is False:
            return True
    return False


def _contains_everything(container: object) -> bool:
    kind = type(container)
    if kind in _SCALARS or issubclass(kind, _CONTAINERS) or not hasattr(kind, "__contains__"):
        return False  # no __contains__: ``in`` iterates, and an iterator is not asked twice
    return any(_truth(operator.contains, container, decoy) is True for decoy in _decoys(None))


def _vouch(op: str, left: object, right: object, matchers: int = 0) -> None:
    """Fail the assertion, and say so, if a part of an operand equals everything (``matchers``:
    1, the left operand is the tests' own matcher, 2, the right one; neither is checked)."""
    __tracebackhide__ = True
    liar: object = _MISSING
    for part in _parts(left) if not matchers & 1 else ():
        if _lie(part, right):
            liar = part
            break
    else:
        for part in _parts(right) if not matchers & 2 else ():
            if _lie(part, left):
                liar = part
                break
        else:
            if op in ("in", "not in") and not matchers & 2 and _contains_everything(right):
                liar = right
    if liar is _MISSING:
        return
    what = "contains everything" if liar is right and op in ("in", "not in") else "equals everything"
    problem = f"an object that {what}: {_describe(type(liar))}"
    for say in SAY:
        say(problem)
    raise AssertionError(problem)


def _describe(kind: type) -> str:
    """``<type> from <module>``, printable and short whatever the class says of itself."""
    try:
        name, module = str(type.__dict__["__qualname__"].__get__(kind)), str(kind.__dict__.get("__module__"))
    except Exception:  # a class that will not say
        name, module = "?", "?"
    return f"{ascii(name)[1:-1][:80]} from {ascii(module)[1:-1][:80]}"


def compare(op: str, left: object, right: object, matchers: int = 0) -> object:
    """``left op right`` for an assertion, checked for a lying operand (see the module;
    ``matchers``: which operands the test's source builds with ``ANY``, left 1, right 2)."""
    __tracebackhide__ = True
    if op == "==":
        result = left == right
    elif op == "!=":
        result = left != right
    elif op == "in":
        result = left in right  # type: ignore[operator]
    else:
        result = left not in right  # type: ignore[operator]
    if type(left) not in _SCALARS or type(right) not in _SCALARS:
        _vouch(op, left, right, matchers)
    return result


def _matcher(operand: ast.expr) -> bool:
    """Whether the test's source builds ``operand`` with ``ANY`` (``unittest.mock.ANY``, equal to
    everything by design): the tests' own matcher, not a value of the agent's."""
    return any(
        (isinstance(node, ast.Name) and node.id == "ANY")
        or (isinstance(node, ast.Attribute) and node.attr == "ANY")
        for node in ast.walk(operand)
    )


def asserted() -> None:
    """Called by each rewritten assertion once its operands are evaluated, before it decides:
    the checks of the globals and builtins the asserting code reads (code of the agent's that
    rebinds one while a test runs, and puts it back before the next test, is seen here)."""
    __tracebackhide__ = True
    frame = _getframe(1)
    for check in ASSERTED:
        check(frame.f_globals, frame.f_code)


_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in"}


def install(rewrite: types.ModuleType) -> None:
    """Make pytest's assertion rewriting (``rewrite``: ``_pytest.assertion.rewrite``) send every
    ``==``, ``!=``, ``in`` and ``not in`` it explains through :func:`compare`, and call
    :func:`asserted` in each assertion before it decides.

    The rewriter turns each link of a comparison into ``@py_assertN = left OP right``; that
    statement becomes ``@py_assertN = @pytest_ar._changeup_compare(OP, left, right)``, so the
    operands are evaluated as before, in the same order.
    """
    rewriter = rewrite.AssertionRewriter
    original = rewriter.visit_Compare

    def visit_Compare(self: Any, comparison: ast.Compare) -> tuple[ast.expr, str]:
        statements = self.statements
        start = len(statements)
        result = original(self, comparison)
        links = [  # one a link, in order (those of comparisons inside an operand are calls by now)
            statement
            for statement in statements[start:]
            if type(statement) is ast.Assign
            and type(statement.value) is ast.Compare
            and len(statement.value.ops) == 1
        ]
        operands = [comparison.left, *comparison.comparators]
        matchers = [_matcher(operand) for operand in operands] if len(links) == len(comparison.ops) else []
        for index, statement in enumerate(links):
            value: Any = statement.value
            op = _OPS.get(type(value.ops[0]))
            if op is None:
                continue
            mask = (1 if matchers and matchers[index] else 0) | (2 if matchers and matchers[index + 1] else 0)
            arguments = (ast.Constant(op), value.left, value.comparators[0], ast.Constant(mask))
            statement.value = ast.copy_location(self.helper("_changeup_compare", *arguments), value)
        return result  # type: ignore[no-any-return]

    def visit_Assert(self: Any, assertion: ast.Assert) -> list[ast.stmt]:
        statements: list[ast.stmt] = original_assert(self, assertion)
        for index, statement in enumerate(statements):  # the ``if not <condition>: raise`` it decides by
            test = getattr(statement, "test", None)
            if type(statement) is ast.If and type(test) is ast.UnaryOp and type(test.op) is ast.Not:
                check = ast.Expr(self.helper("_changeup_asserted"))
                for node in ast.walk(check):
                    ast.copy_location(node, assertion)
                statements.insert(index, check)
                break
        return statements

    original_assert = rewriter.visit_Assert
    rewriter.visit_Compare = visit_Compare
    rewriter.visit_Assert = visit_Assert
    rewrite._changeup_compare = compare  # type: ignore[attr-defined]
    rewrite._changeup_asserted = asserted  # type: ignore[attr-defined]


def install_unittest(case: types.ModuleType) -> None:
    """Check the operands of ``unittest``'s ``assertEqual``, ``assertNotEqual``, ``assertIn`` and
    ``assertNotIn`` (``case``: ``unittest.case``) as :func:`compare` checks an ``assert``'s."""
    for name, op in (
        ("assertEqual", "=="),
        ("assertNotEqual", "!="),
        ("assertIn", "in"),
        ("assertNotIn", "not in"),
    ):
        setattr(case.TestCase, name, _vouching(getattr(case.TestCase, name), op))


def _vouching(method: Callable[..., Any], op: str) -> Callable[..., Any]:
    def checked(self: Any, first: object, second: object, msg: object = None) -> Any:
        __tracebackhide__ = True
        result = method(self, first, second, msg)
        if type(first) not in _SCALARS or type(second) not in _SCALARS:
            _vouch(op, first, second)
        return result

    checked.__name__ = checked.__qualname__ = method.__name__
    checked.__doc__ = method.__doc__
    return checked

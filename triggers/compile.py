"""Compile resolved conditions into closures over :class:`~triggers.facts.Facts`.

A compiled condition also knows which facts it depends on (so the engine re-evaluates it
only when one of them changes; a phase's pass, ``tests:<phase>``, is a fact apart from its
counts, ``counts:<phase>``, which change on nearly every run) and, for comparisons involving
time, the instants at which its value can flip as time passes (so the engine can wake it
exactly then). Durations are ``t - anchor``; a comparison ``t - anchor > c`` is evaluated
as ``t > anchor + c`` so the instant computed for a wake-up and the evaluation at that
instant agree bit for bit.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass

from triggers.facts import Facts
from triggers.syntax import (
    And,
    Call,
    Compare,
    Duration,
    Expr,
    Name,
    Not,
    Number,
    Or,
    String,
    render,
)

__all__ = ["Clock", "Compiled", "GlobTable", "compile_condition"]

Check = Callable[[Facts], bool]
Value = Callable[[Facts], float]

_OPS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


class GlobTable:
    """The globs used by all conditions of one engine, each with a stable index."""

    def __init__(self) -> None:
        self.patterns: list[str] = []

    def index(self, pattern: str) -> int:
        """The index of ``pattern``, registering it on first use."""
        if pattern not in self.patterns:
            self.patterns.append(pattern)
        return self.patterns.index(pattern)


@dataclass(frozen=True, slots=True)
class Clock:
    """A time comparison ``t op anchor + offset`` whose value flips once time crosses it."""

    anchor: Value
    op: str
    offset: float

    def next_flip(self, facts: Facts) -> float:
        """The earliest instant after ``facts.t`` at which this comparison may change value."""
        edge = self.anchor(facts) + self.offset
        t = facts.t
        after = math.nextafter(edge, math.inf)
        if self.op in ("<", ">="):  # value changes at the edge itself
            return edge if edge > t else math.inf
        if self.op in (">", "<="):  # value changes just after the edge
            return after if after > t else math.inf
        if edge > t:  # == and != change at the edge and just after it
            return edge
        return after if after > t else math.inf


@dataclass(frozen=True, slots=True)
class Compiled:
    """A condition ready to evaluate, with its canonical text and dependencies."""

    text: str
    expr: Expr
    evaluate: Check
    deps: frozenset[str]
    #: the deps whose change can turn a false condition true; the others are anchors that
    #: only move forward and only ever falsify, so they matter only while it holds
    raises: frozenset[str]
    clocks: tuple[Clock, ...]
    #: the earliest instant after ``facts.t`` at which time alone may change the value
    next_change: Value

    @property
    def reads_verdicts(self) -> bool:
        """The condition reads a test verdict (a phase's pass, or its counts)."""
        return any(dep.startswith(("tests:", "counts:")) for dep in self.deps)


def compile_condition(expr: Expr, globs: GlobTable) -> Compiled:
    """Compile a condition already resolved by :func:`triggers.typecheck.resolve`."""
    reads = _Reads()
    check = _check(expr, globs, reads, True)
    clocks = reads.clocks
    return Compiled(
        render(expr),
        expr,
        check,
        frozenset(reads.deps),
        frozenset(reads.raises),
        tuple(clocks),
        _next_change(clocks),
    )


class _Reads:
    """What a condition reads, collected while compiling it."""

    def __init__(self) -> None:
        self.deps: set[str] = set()
        self.raises: set[str] = set()
        self.clocks: list[Clock] = []

    def add(self, dep: str, *, raises: bool = True) -> None:
        """The condition reads ``dep``; ``raises``: a change of it may make the condition true."""
        self.deps.add(dep)
        if raises:
            self.raises.add(dep)


def _next_change(clocks: list[Clock]) -> Value:
    if not clocks:
        return lambda f: math.inf
    if len(clocks) == 1:
        return clocks[0].next_flip
    flips = tuple(clock.next_flip for clock in clocks)
    return lambda f: min(flip(f) for flip in flips)


def _check(expr: Expr, globs: GlobTable, reads: _Reads, positive: bool) -> Check:
    """``positive``: the condition is true more often when ``expr`` is (not under a ``not``)."""
    if isinstance(expr, Not):
        inner = _check(expr.operand, globs, reads, not positive)
        return lambda f: not inner(f)
    if isinstance(expr, And | Or):
        parts = tuple(_check(op, globs, reads, positive) for op in expr.operands)
        if len(parts) == 2:
            a, b = parts
            if isinstance(expr, And):
                return lambda f: a(f) and b(f)
            return lambda f: a(f) or b(f)
        if isinstance(expr, And):
            return lambda f: all(part(f) for part in parts)
        return lambda f: any(part(f) for part in parts)
    if isinstance(expr, Compare):
        return _comparison(expr, reads, positive)
    if isinstance(expr, Name):
        if expr.name == "first_commit":
            reads.add("commits")
            return lambda f: f.commits > 0
        assert expr.name == "always", expr
        return lambda f: True
    assert isinstance(expr, Call), expr
    return _predicate(expr, globs, reads)


def _predicate(expr: Call, globs: GlobTable, reads: _Reads) -> Check:
    arg = expr.args[0]
    if isinstance(arg, String):
        index = globs.index(arg.value)
        reads.add(f"glob:{index}")
        if expr.name == "file_exists":
            return lambda f: f.glob_exists[index] > 0
        return lambda f: f.glob_changed[index]
    name = arg.name
    if expr.name == "tests_pass":
        reads.add(f"tests:{name}")
        return lambda f: f.passing.get(name, False)
    if expr.name == "phase_unlocked":
        reads.add(f"phase:{name}")
        return lambda f: name in f.unlocked
    if expr.name == "fired":
        reads.add(f"fired:{name}")
        return lambda f: name in f.fired
    assert expr.name == "delivered", expr
    reads.add(f"delivered:{name}")
    return lambda f: name in f.delivered


#: The facts a duration is measured from (``name = t - anchor``); anchors only move forward.
_ANCHORS: dict[str, tuple[str | None, Value]] = {
    "time_elapsed": (None, lambda f: 0.0),
    "phase_elapsed": ("anchor.phase", lambda f: f.phase_anchor),
    "idle": ("anchor.idle", lambda f: f.idle_anchor),
}


def _anchor(expr: Expr) -> tuple[str | None, Value] | None:
    """For a duration predicate, its anchor's fact (None: fixed) and value; else None."""
    return _ANCHORS.get(expr.name) if isinstance(expr, Name) else None


def _count(expr: Expr, reads: _Reads) -> Value:
    if isinstance(expr, Number):
        value = expr.value
        return lambda f: value
    if isinstance(expr, Name):
        assert expr.name in ("commits", "turns"), expr
        reads.add(expr.name)
        if expr.name == "commits":
            return lambda f: f.commits
        return lambda f: f.turns
    assert isinstance(expr, Call), expr
    arg = expr.args[0]
    assert isinstance(arg, Name)
    phase = arg.name
    reads.add(f"counts:{phase}")
    table = "passed" if expr.name == "tests_passed" else "failed"
    return lambda f: getattr(f, table).get(phase, 0)


def _comparison(expr: Compare, reads: _Reads, positive: bool) -> Check:
    op = _OPS[expr.op]
    left_anchor = _anchor(expr.left)
    right_anchor = _anchor(expr.right)
    if left_anchor is not None and right_anchor is not None:
        # (t - a1) op (t - a2)  <=>  a2 op a1: time cancels out, nothing to wake for.
        for dep, _ in (left_anchor, right_anchor):
            if dep is not None:
                reads.add(dep)
        left_value, right_value = left_anchor[1], right_anchor[1]
        return lambda f: op(right_value(f), left_value(f))
    if left_anchor is not None or right_anchor is not None:
        if left_anchor is not None:
            (dep, anchor), literal, symbol = left_anchor, expr.right, expr.op
        else:
            assert right_anchor is not None
            (dep, anchor), literal, symbol = right_anchor, expr.left, _MIRROR[expr.op]
        if dep is not None:
            # t > anchor + c only turns false as the anchor moves on (t < ... only true).
            falsified = symbol in (">", ">=") if positive else symbol in ("<", "<=")
            reads.add(dep, raises=not falsified)
        assert isinstance(literal, Duration), literal
        offset = literal.seconds
        reads.clocks.append(Clock(anchor, symbol, offset))
        timed = _OPS[symbol]
        return lambda f: timed(f.t, anchor(f) + offset)
    if isinstance(expr.left, Duration) and isinstance(expr.right, Duration):
        constant = op(expr.left.seconds, expr.right.seconds)
        return lambda f: constant
    left = _count(expr.left, reads)
    right = _count(expr.right, reads)
    return lambda f: op(left(f), right(f))

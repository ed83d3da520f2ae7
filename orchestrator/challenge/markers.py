"""A test group's ``markers:``: pytest's own marker expression, parsed when the challenge loads.

A group is a pytest marker expression or globs over test ids (``grading/groups.py`` says who
belongs). The loader checks each expression here (``semantics.py``) so that a bad one is a load
error with its place, not a failure of a run.
"""

from __future__ import annotations

import re

from _pytest.mark.expression import Expression

__all__ = ["GroupExpressionError", "compile_markers"]


#: A marker name followed by ``(``: its arguments, which a collection does not keep.
_CALL = re.compile(r"(?:^|[\s(])(?!(?:and|or|not)\s*\()[^\s()]+\s*\(")


class GroupExpressionError(ValueError):
    """A group's ``markers:`` is not a marker expression this grader can evaluate."""


def compile_markers(text: str) -> Expression:
    """pytest's own ``-m`` expression for ``text``; marker arguments (``name(key=1)``) are refused:
    a collection keeps only marker names."""
    try:
        expression = Expression.compile(text)
    except SyntaxError as error:
        why = f"not a pytest marker expression: {error.msg} (column {error.offset})"
        raise GroupExpressionError(why) from None
    if _CALL.search(text):
        raise GroupExpressionError("marker arguments (name(key=value)) cannot be matched: use marker names")
    return expression

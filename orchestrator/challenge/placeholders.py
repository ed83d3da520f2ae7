"""Placeholders in ``testing: args``: the phase being graded and the current one, filled per run.

A pytest argument may name ``{phase}`` (the phase whose tests the argument is given to) and
``{current}`` (the latest unlocked phase of the run, in challenge order): SlopCodeBench's
tests branch on ``--checkpoint``, and the benchmark runs every earlier checkpoint's tests
with the current one. ``{{`` and ``}}`` stand for a literal brace; any other brace is an
error, found when the challenge loads. The values come from the run's phases, which the
engine decided and the log records, so a replay or a re-score fills them the same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from triggers.typecheck import did_you_mean

__all__ = ["PLACEHOLDERS", "fill", "placeholder_problems"]

#: Each placeholder a ``testing: args`` item may hold, and what it stands for.
PLACEHOLDERS: dict[str, str] = {
    "phase": "the id of the phase whose tests run with the argument",
    "current": "the id of the latest unlocked phase of the run (in challenge order)",
}

# An escaped brace, a placeholder, or a brace on its own (an error).
_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


def placeholder_problems(text: str) -> list[tuple[int, str]]:
    """Each problem of the argument ``text``, as (1-based column, message); empty when it is valid."""
    problems: list[tuple[int, str]] = []
    known = ", ".join(f"{{{name}}}" for name in PLACEHOLDERS)
    for match in _TOKEN.finditer(text):
        token, name = match.group(0), match.group(1)
        if token in ("{{", "}}"):
            continue
        column = match.start() + 1
        if name is None:
            problems.append(
                (column, f"a lone {token!r} in {text!r}: write {token * 2} for a literal brace ({known})")
            )
        elif name not in PLACEHOLDERS:
            hint = did_you_mean(token, [f"{{{each}}}" for each in PLACEHOLDERS])
            problems.append(
                (
                    column,
                    f"unknown placeholder {token!r} in {text!r}{hint} (placeholders: {known}; {{{{ escapes)",
                )
            )
    return problems


def fill(text: str, values: Mapping[str, str]) -> str:
    """``text`` with its placeholders replaced by ``values`` and escaped braces made single.

    The text was checked when the challenge loaded (:func:`placeholder_problems`); a brace that
    is neither raises ``ValueError``.
    """

    def one(match: re.Match[str]) -> str:
        token, name = match.group(0), match.group(1)
        if token in ("{{", "}}"):
            return token[0]
        if name is None or name not in values:
            raise ValueError(f"{token!r} in {text!r} is no placeholder of {', '.join(values)}")
        return values[name]

    return _TOKEN.sub(one, text)

"""Durations and workspace globs."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from triggers.durations import DurationError, format_duration, parse_duration, plain_decimal
from triggers.globs import GlobError, compile_glob, glob_matches


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("500ms", 0.5),
        ("30s", 30),
        ("2 sec", 2),
        ("5m", 300),
        ("30MIN", 1800),
        ("2h", 7200),
        ("1hr", 3600),
        ("1d", 86400),
    ],
)
def test_parse_duration(text: str, seconds: float) -> None:
    """Each unit converts to seconds."""
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    ("text", "fragment"), [("soon", "expected a duration"), ("5 parsecs", "unknown unit")]
)
def test_parse_duration_errors(text: str, fragment: str) -> None:
    """Unreadable durations say what was expected."""
    with pytest.raises(DurationError, match=fragment):
        parse_duration(text)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (7200, "2h"),
        (5400, "90min"),
        (90, "90s"),
        (0.5, "500ms"),
        (0, "0ms"),
        (0.0001, "0.0001s"),
        (1e-7, "0.0000001s"),
    ],
)
def test_format_duration(seconds: float, text: str) -> None:
    """The largest exact unit is chosen."""
    assert format_duration(seconds) == text


@pytest.mark.parametrize("bad", [-1.0, math.inf, math.nan])
def test_format_duration_rejects_negative_and_infinite(bad: float) -> None:
    """Only finite, non-negative durations print."""
    with pytest.raises(DurationError):
        format_duration(bad)


@given(st.floats(min_value=0, max_value=1e9, allow_nan=False, allow_infinity=False))
def test_format_then_parse_is_exact(seconds: float) -> None:
    """A printed duration parses back to exactly the same float."""
    assert parse_duration(format_duration(seconds)) == seconds


@given(st.floats())
def test_plain_decimal_is_the_shortest_repr_without_exponent(value: float) -> None:
    """Its short cut (repr itself, when repr has no exponent) gives what Decimal would."""
    assert plain_decimal(value) == format(Decimal(repr(value)), "f")


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.py", "app.py", True),
        ("*.py", "src/deep/app.py", True),
        ("src/*.py", "src/app.py", True),
        ("src/*.py", "src/x/app.py", False),
        ("src/**/*.py", "src/app.py", True),
        ("src/**/*.py", "src/x/y/app.py", True),
        ("src/**", "src/x/y", True),
        ("docs/", "docs/a/b.md", True),
        ("docs/", "docs", False),
        ("?.md", "a.md", True),
        ("?.md", "ab.md", False),
        ("[ab].md", "b.md", True),
        ("[!ab].md", "b.md", False),
        ("[a-c].md", "c.md", True),
        ("NOTES.md", "x/NOTES.md", True),
        ("a+b.txt", "a+b.txt", True),
    ],
)
def test_glob_matches(pattern: str, path: str, matches: bool) -> None:
    """Globs follow .gitignore rules."""
    assert glob_matches(pattern, path) is matches


@pytest.mark.parametrize(("pattern", "column"), [("", 1), ("/abs", 1), ("a[bc", 2)])
def test_bad_globs(pattern: str, column: int) -> None:
    """Empty, absolute and unclosed-class globs are refused with a column."""
    with pytest.raises(GlobError) as caught:
        compile_glob(pattern)
    assert caught.value.column == column

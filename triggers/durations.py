"""Durations as written in challenges and conditions: ``500ms``, ``30s``, ``5m``, ``2h``."""

from __future__ import annotations

import math
import re
from decimal import Decimal

__all__ = ["UNITS", "DurationError", "format_duration", "parse_duration", "plain_decimal"]

#: Seconds per unit. ``m`` and ``min`` are both minutes; there is no month.
UNITS: dict[str, float] = {
    "ms": 0.001,
    "s": 1.0,
    "sec": 1.0,
    "m": 60.0,
    "min": 60.0,
    "h": 3600.0,
    "hr": 3600.0,
    "d": 86400.0,
}

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]+)\s*$")


class DurationError(ValueError):
    """A duration string that does not read as a number followed by a unit."""


def parse_duration(text: str) -> float:
    """Return the seconds in ``text`` (``"30min"`` → ``1800.0``); units are case-insensitive."""
    match = _DURATION.match(text)
    if match is None:
        raise DurationError(f"expected a duration such as 30s, 5m, 30min or 2h, got {text!r}")
    unit = match.group(2).lower()
    if unit not in UNITS:
        raise DurationError(
            f"unknown unit {match.group(2)!r} in duration {text!r} (units: {', '.join(UNITS)})"
        )
    return float(match.group(1)) * UNITS[unit]


def format_duration(seconds: float) -> str:
    """Write ``seconds`` in the largest unit that keeps it exact, so it parses back equal."""
    if not math.isfinite(seconds) or seconds < 0:
        raise DurationError(f"a duration must be finite and not negative, got {seconds!r}")
    if seconds % 1 == 0:  # only a whole number of seconds is a whole number of these
        for unit, size in (("h", 3600.0), ("min", 60.0), ("s", 1.0)):
            if seconds >= size:
                count = seconds / size
                if count.is_integer() and int(count) * size == seconds:
                    return f"{int(count)}{unit}"
    millis = round(seconds * 1000)
    if millis * UNITS["ms"] == seconds:
        return f"{millis}ms"
    return f"{plain_decimal(seconds)}s"


def plain_decimal(value: float) -> str:
    """The shortest decimal without exponent that parses back to exactly ``value``."""
    text = repr(value)
    # repr is already that unless it has an exponent (or is not a number: inf, nan).
    return text if "e" not in text and "n" not in text else format(Decimal(text), "f")

"""Durations as written in challenges and conditions: ``500ms``, ``30s``, ``5m``, ``2h``."""

from __future__ import annotations

import math
import re
from decimal import Decimal

__all__ = [
    "UNITS",
    "DurationError",
    "clock",
    "format_duration",
    "format_moment",
    "parse_duration",
    "plain_decimal",
]

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

_MILLISECOND = UNITS["ms"]
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


def format_moment(seconds: float) -> str:
    """A moment, as a firing's cause names it: exact units where they fit, else seconds to
    the millisecond.

    It is ``format_duration(round(seconds, 3))`` (``0s`` if that is not positive), written
    out for the moments most causes name, a whole number of milliseconds but not of seconds,
    without ``round(seconds, 3)`` (which goes through a decimal string) or a call of
    ``format_duration``: every firing builds a cause. Below 1e12, ``seconds * 1000`` is
    within 0.0001 of the exact product, so where it is not within 0.0001 of a half, its
    nearest integer ``millis`` is that of the exact product, and ``millis / 1000`` is the
    double nearest that many thousandths: what ``round`` returns. Of such a value
    ``format_duration`` writes ``<millis>ms`` if ``millis`` milliseconds give it back, else
    its ``repr`` in seconds (which has no exponent from 0.001 to 1e16).
    ``tests/triggers/test_properties.py`` compares the two.
    """
    scaled = seconds * 1000
    millis = round(scaled)
    if 0 < scaled < 1e12 and -0.4999 < scaled - millis < 0.4999 and millis % 1000:
        rounded = millis / 1000
        return f"{millis}ms" if millis * _MILLISECOND == rounded else f"{rounded!r}s"
    rounded = round(seconds, 3)
    return format_duration(rounded) if rounded > 0 else "0s"


def clock(seconds: float | None, *, hundredths: bool = False) -> str:
    """A moment of the run: ``754.2`` → ``12:34`` (``h:mm:ss`` past an hour); None → ``—``.

    ``hundredths`` adds them (``12:34.20``), for timelines where order within a second matters.
    """
    if seconds is None:
        return "—"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"
    return text + f".{int((seconds - whole) * 100):02d}" if hundredths else text

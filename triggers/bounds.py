"""Bounds on what a record may hold: every field an agent can make grow has a cap, and a cut is marked.

An agent controls much of what a session records: its output, its commit subjects, its file
names, the messages its code puts into a failing assertion. None of that may make a record, the
log, or the memory of whatever reads it grow without bound. So each such field of a record type
names its cap, and the record's constructor applies it (``bounds`` on the record types in
:mod:`triggers.records` and :mod:`orchestrator.log.records`): one mechanism, wherever the
record is made. A text over its cap keeps its head and ends in a marker that says how big it was::

    Fix the parser AAAAAAAAAAAAAAAAAAAAAAAA… [truncated: 209,715,327 bytes]

A cut text, marker included, is within its cap, so cutting is idempotent: a record read back
from a log is the record that was written. A reader that stopped early (a bounded read of git's
output) knows only a lower bound, and says so (``… [truncated: more than 4,096 bytes]``); a
text that already ends in a marker keeps what that marker says when it is cut again.

Caps are in characters (a ``str``'s length); in UTF-8 a character takes 1 to 4 bytes, and in a
JSON line at most 6 (a control character is written ``\\u001b``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = [
    "DETAIL",
    "ITEMS",
    "NAME",
    "OUTPUT",
    "PATH",
    "TEXT",
    "UNSEEN",
    "Items",
    "clip",
    "head",
    "marker",
    "over",
]

#: Free text: a turn's final message, a traceback, a judge's reason.
TEXT = 64 * 1024
#: A chunk of agent output as an adapter logs it (a turn's share of the log is its budget, 128 KiB:
#: ``orchestrator.agents.transcript``); this cap is the record's own, above any budget's chunk.
OUTPUT = 256 * 1024
#: A detail about one thing: why a test failed, why a run is void, a prohibited effect.
DETAIL = 4 * 1024
#: A name: a commit subject, a sha, a model, a conversation id.
NAME = 1024
#: A path or a test id (Linux's PATH_MAX).
PATH = 4096
#: Entries of one list in one record: file changes of a batch, commits of a batch, findings.
ITEMS = 1000

#: The characters beyond ASCII's C0 controls that a terminal or a viewer acts on rather than
#: shows, as a regular expression's character class (without its brackets): DEL, the C1
#: controls (``\x9b`` starts an escape sequence on some terminals), the bidi marks, embeddings,
#: overrides and isolates, the line and paragraph separators, and the byte-order mark.
UNSEEN = "\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff"

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Items:
    """The cap of a list field: its first ``limit`` entries are kept, and the field ``into`` (an
    integer) adds up how many were left out."""

    limit: int
    into: str


_MARKED = re.compile(r"… \[truncated: (more than )?([\d,]+) bytes\]\Z")


def marker(size: int, *, exact: bool = True) -> str:
    """What ends a cut text whose whole was ``size`` bytes (``exact=False``: more than that)."""
    return f"… [truncated: {'' if exact else 'more than '}{size:,} bytes]"


def clip(text: str, limit: int, *, size: int | None = None) -> str:
    """``text`` if it has at most ``limit`` characters, else its head and a :func:`marker`, together
    ``limit`` characters at most.

    ``size`` is the byte size of the whole when ``text`` is only its head (a read stopped early:
    the marker then says "more than"). A text already ending in a marker keeps its figure.
    """
    if len(text) <= limit and size is None:
        return text
    found = _MARKED.search(text, max(0, len(text) - 64))
    if found is not None:
        text = text[: found.start()]
        end = marker(int(found.group(2).replace(",", "")), exact=not found.group(1))
    elif size is not None:
        end = marker(size, exact=False)
    else:
        end = marker(len(text.encode("utf-8", "surrogatepass")))
    return text[: max(0, limit - len(end))] + end


def head(items: Sequence[_T], limit: int) -> Sequence[_T]:
    """The first ``limit`` of ``items`` (``items`` itself when they are no more)."""
    return items if len(items) <= limit else items[:limit]


def over(items: Sequence[object], limit: int) -> int:
    """How many of ``items`` :func:`head` leaves out."""
    return max(0, len(items) - limit)

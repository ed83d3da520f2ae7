"""Glob patterns over workspace-relative POSIX paths (``file_exists``, ``file_changed``).

The rules follow ``.gitignore``: ``*`` and ``?`` stay inside one path segment, ``**`` spans
any number of segments, ``[abc]`` is a character class, and a pattern without ``/`` matches
the last segment at any depth (``*.py`` matches ``src/app.py``).
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["GlobError", "compile_glob", "glob_matches"]


class GlobError(ValueError):
    """A glob pattern that cannot be compiled; ``column`` is 1-based within the pattern."""

    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.column = column


@lru_cache(maxsize=1024)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """Translate ``pattern`` into an anchored regular expression over full paths."""
    if not pattern:
        raise GlobError("a glob must not be empty", 1)
    if pattern.startswith("/"):
        raise GlobError("a glob is relative to the workspace; drop the leading '/'", 1)
    directory = pattern.endswith("/")  # "build/" means everything under build
    body = pattern.rstrip("/") if directory else pattern
    prefix = "" if "/" in body else "(?:.*/)?"
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if body.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif body.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[":
            end = body.find("]", i + 2)
            if end == -1:
                raise GlobError("'[' opens a character class that is never closed", i + 1)
            inner = body[i + 1 : end]
            negate = inner.startswith("!")
            inner = re.escape(inner[1:] if negate else inner).replace("\\-", "-")
            out.append(f"[{'^' if negate else ''}{inner}]")
            i = end + 1
        else:
            out.append(re.escape(ch))
            i += 1
    suffix = "/.*" if directory else ""
    return re.compile(prefix + "".join(out) + suffix + "\\Z")


def glob_matches(pattern: str, path: str) -> bool:
    """True when workspace-relative ``path`` matches ``pattern``."""
    return compile_glob(pattern).match(path) is not None

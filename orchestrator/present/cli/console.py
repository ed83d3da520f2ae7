"""Standard output for the commands' tables and long lines."""

from __future__ import annotations

from rich.console import Console

__all__ = ["UNBOUNDED", "stdout"]

#: A width nothing reaches: piped output is never cut or folded to fit.
UNBOUNDED = 10_000


def stdout() -> Console:
    """Standard output for tables and long lines: on a terminal, tables fit its width and it
    wraps long lines itself (soft_wrap); piped, nothing is folded or cut at 80 columns."""
    console = Console(soft_wrap=True, highlight=False)
    if not console.is_terminal:
        console.width = UNBOUNDED
    return console

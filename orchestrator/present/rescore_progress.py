"""Re-scoring's progress on the terminal: a bar, or a line per re-tested snapshot."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from orchestrator.run.rescore import Retest

__all__ = ["rescore_progress"]


@contextmanager
def rescore_progress(console: Console) -> Iterator[Callable[[int, int, Retest], None]]:
    """A ``progress`` for :func:`rescore` that shows on ``console`` (stderr): a bar on a
    terminal, else one line per test run, e.g. ``re-testing snapshot 3/7 (phase2, seq 41)…``."""

    def line(done: int, total: int, retest: Retest) -> str:
        phases = ", ".join(retest.phases) or "no phase"
        return f"re-testing snapshot {done + 1}/{total} ({phases}, seq {retest.seq})…"

    if not console.is_terminal:
        yield lambda done, total, retest: print(line(done, total, retest), file=console.file, flush=True)
        return
    columns = (TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("re-testing", total=None)
        yield lambda done, total, retest: bar.update(
            task, description=line(done, total, retest), completed=done, total=total
        )

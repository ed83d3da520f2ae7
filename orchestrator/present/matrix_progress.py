"""The one progress display of a matrix run: cells done, running, failed and invalid, time left,
and each agent's pass rate so far (the runs' own full successes, before review)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from orchestrator.matrix.progress import Tally
from orchestrator.render.phrases import duration

__all__ = ["MatrixProgress", "progress_line"]


def progress_line(tally: Tally) -> str:
    """The state in one line: ``7/12 done · 4 running · 2 failed (1 crashed) · 0 invalid · 1 queued ·
    ~40s left``."""
    done = tally.done_before + tally.done
    left = tally.time_left()
    parts = [
        f"{done}/{tally.cells} done",
        f"{tally.running} running",
        f"{tally.failed} failed" + (f" ({tally.crashed} crashed)" if tally.crashed else ""),
        f"{tally.invalid} invalid",
        f"{tally.queued} queued",
        "time left: " + ("—" if left is None else f"~{duration(left)}"),
    ]
    return " · ".join(parts)


class MatrixProgress:
    """A live view of a :class:`Tally` (``rich.live.Live`` redraws it)."""

    def __init__(self, agents: list[str]) -> None:
        self.agents = agents
        self.tally: Tally | None = None

    def update(self, tally: Tally) -> None:
        """Show ``tally`` from now on."""
        self.tally = tally

    def __rich__(self) -> RenderableType:
        tally = self.tally
        if tally is None:
            return Text("starting the matrix…")
        table = Table(box=None, pad_edge=False, show_header=True, header_style="bold")
        table.add_column("agent")
        table.add_column("full successes so far", justify="right")
        for name in self.agents:
            counts = tally.agents.get(name)
            said = f"{counts.successes}/{counts.valid} valid" if counts and counts.valid else "—"
            table.add_row(escape(name), said)
        return Group(Text.assemble(("● ", "cyan"), progress_line(tally)), table)

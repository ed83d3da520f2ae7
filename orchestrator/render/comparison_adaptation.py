"""The comparison's adaptation section (``compare.json``'s ``adaptation``): a table in the
terminal, ``compare.md`` and ``compare.html``, one row per agent and mode (all challenges) and
per cell. A median no message reached is ``—`` with how many messages reached it."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from orchestrator.log.comparison import AdaptationFigures, ReportedFigure
from orchestrator.render import inert
from orchestrator.render.inert import markdown, terminal

__all__ = [
    "ADAPTATION_COLUMNS",
    "adaptation_html",
    "adaptation_markdown",
    "adaptation_rows",
    "print_adaptation",
]

ADAPTATION_COLUMNS = [
    "agent",
    "mode",
    "challenge",
    "messages",
    "first change (median s)",
    "first passing test (median s)",
    "phase passing (median s)",
    "stale changes",
    "regressions",
]
#: What the figures are, said under the table.
ADAPTATION_NOTE = (
    "From each message that unlocked a phase, over the valid trials: the median seconds to the first "
    "change to a file its reference changes, to the phase's first passing test and to the phase "
    "passing, over the messages that got there (n/of); stale changes to withdrawn code after a "
    "retraction or contradiction (over the messages where it was measured) and preserved tests "
    "broken after a message, summed (docs/report.md#adaptation)."
)


def _median(figure: ReportedFigure) -> str:
    shown = "—" if figure.median is None else f"{figure.median:g}"
    return f"{shown} ({figure.reported}/{figure.of})"


def adaptation_rows(figures: Sequence[AdaptationFigures]) -> list[list[str]]:
    """One row of text per entry, in :data:`ADAPTATION_COLUMNS` order."""
    return [
        [
            row.agent,
            row.mode,
            row.challenge or "all",
            str(row.messages),
            _median(row.first_change_seconds),
            _median(row.first_passing_test_seconds),
            _median(row.passing_seconds),
            f"{row.stale_changes} (of {row.stale_measured} measured)",
            str(row.regressions),
        ]
        for row in figures
    ]


def adaptation_markdown(figures: Sequence[AdaptationFigures]) -> list[str]:
    """The ``## Adaptation`` section of ``compare.md``, as lines; none when no trial had a message."""
    if not figures:
        return []

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(markdown(cell) for cell in cells) + " |"

    rows = [line(ADAPTATION_COLUMNS), line(["---"] * len(ADAPTATION_COLUMNS))]
    rows += [line(r) for r in adaptation_rows(figures)]
    return ["## Adaptation", "", *rows, "", markdown(ADAPTATION_NOTE), ""]


def print_adaptation(figures: Sequence[AdaptationFigures], console: Console) -> None:
    """The adaptation table in the terminal, when any trial had a message to adapt to."""
    if not figures:
        return
    table = Table(title="adaptation", title_justify="left")
    for header in ADAPTATION_COLUMNS:
        table.add_column(header, overflow="fold")
    for row in adaptation_rows(figures):
        table.add_row(*(terminal(text) for text in row))
    console.print(table)


def adaptation_html(figures: Sequence[AdaptationFigures]) -> list[str]:
    """The adaptation section of ``compare.html``; none when no trial had a message."""
    if not figures:
        return []
    head = "".join(f"<th>{inert.html(h)}</th>" for h in ADAPTATION_COLUMNS)
    body = "".join(
        "<tr>" + "".join(f"<td>{inert.html(c)}</td>" for c in row) + "</tr>"
        for row in adaptation_rows(figures)
    )
    return [
        '<h2 id="adaptation">Adaptation</h2>',
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>",
        f"<p>{inert.html(ADAPTATION_NOTE)}</p>",
    ]

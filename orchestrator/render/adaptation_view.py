"""The report's adaptation part (docs/report.md#adaptation) as a small table: Markdown, HTML
and one line per message for the terminal. Every value goes through the inert helpers."""

from __future__ import annotations

from orchestrator.log.report import Adaptation, Delay, Report
from orchestrator.render import inert

__all__ = [
    "ADAPTATION_HEADERS",
    "adaptation_html",
    "adaptation_line",
    "adaptation_markdown",
    "adaptation_rows",
]

ADAPTATION_HEADERS = (
    "message",
    "phase",
    "first change",
    "first passing test",
    "phase passing",
    "stale work",
    "regressions",
)


def delay_text(delay: Delay) -> str:
    """``42 s, 2 turns, 5 requests`` (requests only when the gateway counted them); ``never``."""
    if delay.seconds is None:
        return "never"
    out = f"{delay.seconds:g} s, {delay.turns} turn{'s' if delay.turns != 1 else ''}"
    if delay.requests is not None:
        out += f", {delay.requests} request{'s' if delay.requests != 1 else ''}"
    return out


def stale_text(row: Adaptation) -> str:
    """How many changes went to withdrawn code, and whether and when it went; ``—`` when not measured."""
    stale = row.stale
    if stale is None:
        return "—"
    undone = f"undone after {delay_text(stale.undone_after)}" if stale.undone else "never undone"
    return f"{stale.changes} change{'s' if stale.changes != 1 else ''}, {undone}"


def regressions_text(row: Adaptation) -> str:
    """How many preserved tests broke after the message, and how many were repaired."""
    if not row.regressions:
        return "0"
    repaired = sum(r.repaired_after is not None for r in row.regressions)
    return f"{len(row.regressions)} ({repaired} repaired)"


def adaptation_rows(report: Report) -> list[tuple[str, ...]]:
    """One row of plain text per message, in :data:`ADAPTATION_HEADERS` order."""
    return [
        (
            f"#{row.message} {row.trigger} ({row.kind})",
            row.phase,
            delay_text(row.first_change),
            delay_text(row.first_passing_test),
            delay_text(row.passing),
            stale_text(row),
            regressions_text(row),
        )
        for row in report.adaptation
    ]


def adaptation_markdown(report: Report) -> list[str]:
    """The ``## Adaptation`` section's lines; none for a report without messages that unlocked a phase."""
    rows = adaptation_rows(report)
    if not rows:
        return []
    out = ["", "## Adaptation", "", "_From each message's delivery (docs/report.md#adaptation)._", ""]
    out += ["| " + " | ".join(ADAPTATION_HEADERS) + " |", "|" + "---|" * len(ADAPTATION_HEADERS)]
    out += ["| " + " | ".join(inert.markdown(cell) for cell in row) + " |" for row in rows]
    out += [f"- {inert.markdown(row.note)}" for row in report.adaptation if row.note]
    return out


def adaptation_html(report: Report) -> str:
    """The Adaptation section as an HTML table; "" when there is none."""
    rows = adaptation_rows(report)
    if not rows:
        return ""
    head = "".join(f"<th>{inert.html(h)}</th>" for h in ADAPTATION_HEADERS)
    body = "".join("<tr>" + "".join(f"<td>{inert.html(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<h2>Adaptation</h2><table id="adaptation"><tr>{head}</tr>{body}</table>'


def adaptation_line(row: Adaptation) -> str:
    """One message's figures in a line, for the terminal summary."""
    return (
        f"adaptation to #{row.message} {row.trigger}: phase passing after {delay_text(row.passing)}; "
        f"stale work: {stale_text(row)}; regressions: {regressions_text(row)}"
    )

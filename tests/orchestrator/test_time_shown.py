"""Time as people read it: wall time and session time apart, named, at a resolution that fits."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console

from orchestrator.log.cells import SessionOrder
from orchestrator.matrix import build_comparison
from orchestrator.render.comparison_text import print_comparison
from orchestrator.render.html_report import report_html
from orchestrator.render.markdown import report_markdown
from orchestrator.scoring.report import build_report
from tests.matrix.samples import report, results_of
from tests.orchestrator.test_report import EXPORT_TIME, START, log

#: A 6.5 s session whose clock skipped 29m 54.5s ahead to fire a timed trigger.
SKIPPED = (
    *START,
    {"kind": "clock.skipped", "until": 1800.0, "skipped": 1794.5, "t": 1800.0},
    {"kind": "session.aborted", "status": "interrupted", "detail": "CancelledError()", "t": 1801.0},
)


def test_a_run_whose_clock_skipped_shows_wall_and_session_time_apart() -> None:
    """report.json keeps both; report.md and report.html name each, and a moment early in the run
    is shown in seconds, not as ``00:03``."""
    contents = log(*SKIPPED)
    built = build_report(EXPORT_TIME, contents)
    assert (built.run.elapsed, built.run.wall) == (1801.0, 6.5)
    said = "ran 6.5s wall time, 30m 01s session time (the session clock skipped 29m 54s ahead"
    markdown = report_markdown(built)
    assert said in markdown
    assert "queued 3.0s, delivered 4.0s" in markdown
    assert said.removeprefix("ran ") in report_html(built, contents.entries)


def skipped_ahead(order: SessionOrder) -> dict[str, Any]:
    """Every trial took 4 s of wall time and 30 minutes on its session clock."""
    outcome = report(order.cell.challenge, elapsed=1800.0)
    outcome["run"]["wall"] = 4.0
    return outcome


def test_compare_shows_median_wall_time_apart_from_session_time(tmp_path: Path) -> None:
    """A cell of runs of 4 s wall time whose clock skipped to 30 minutes says both, named."""
    results, _ = results_of(tmp_path, skipped_ahead)
    comparison = build_comparison(results)
    assert {(c.median_wall_seconds, c.median_elapsed_seconds) for c in comparison.cells} == {(4.0, 1800.0)}
    assert all(t.wall_seconds == 4.0 for t in comparison.trials)
    out = io.StringIO()
    print_comparison(comparison, Console(file=out, width=120))
    shown = out.getvalue()
    assert (shown.count("median wall time: 4.0s"), shown.count("median session time: 30m 00s")) == (2, 2)

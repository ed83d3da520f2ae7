"""report.html read right: a timeline with commits, test runs and a time axis; aligned tables;
the messages open, so a printout shows what the agent was told."""

from __future__ import annotations

import re

from orchestrator.render.html_report import report_html
from orchestrator.scoring.report import build_report
from tests.orchestrator.test_report import EXPORT_TIME, RESULT, START, log, verdict

COMMIT = {"kind": "git.commit", "sha": "0123456789abcdef", "message": "export in UTC"}


def test_the_timeline_marks_commits_and_test_runs_on_a_time_axis() -> None:
    """Each commit and each hidden test run has its mark, with its moment; five ticks across."""
    contents = log(
        *START,
        {**RESULT, "phases": [verdict("phase1", 2, 1)]},
        COMMIT,
        {**RESULT, "request": 2, "phases": [verdict("phase1", 3)]},
    )
    page = report_html(build_report(EXPORT_TIME, contents), contents.entries)
    assert page.count('class="commit" data-commit="0123456789"') == 1
    assert "commit 0123456789 at 6.0s: export in UTC</title>" in page
    assert page.count('class="test-run"') == 2
    assert "hidden tests ran at 5.0s: ok, 2/3 passing</title>" in page
    ticks = re.findall(r'class="meta">([^<]*)</text>', page)
    assert ticks == ["0.0s", "1.8s", "3.5s", "5.2s", "7.0s"]  # the log's last record is at 7 s


def test_the_tables_align_and_messages_print_open() -> None:
    """Numbers and their headers are right-aligned alike; a score part reads ``phase1 (phase)``;
    each message is open."""
    contents = log(*START, {**RESULT, "phases": [verdict("phase1", 3)]})
    page = report_html(build_report(EXPORT_TIME, contents), contents.entries)
    assert '<th class="num">weight</th><th class="num">score</th><th class="num">points (of 100)</th>' in page
    assert '<td>phase1 <span class="kind">(phase)</span></td>' in page
    assert "phase phase1" not in page
    assert '<details class="message" data-message="1" open>' in page

"""Reports read right: invalid and interrupted runs, the score's arithmetic, messages, times."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from orchestrator.challenge.loader import load_challenge
from orchestrator.challenge.scaffold import scaffold
from orchestrator.log.eventlog import LogContents
from orchestrator.log.records import decode_entry
from orchestrator.log.report import Report, Rescore, Scope
from orchestrator.render.html_report import report_html
from orchestrator.render.markdown import report_markdown
from orchestrator.render.phrases import duration
from orchestrator.render.terminal import print_summary
from orchestrator.render.timeline import lines
from orchestrator.scoring.report import build_report
from tests.cli import REPO
from triggers.durations import clock

EXPORT_TIME = load_challenge(REPO / "challenges" / "export-time")


def log(*records: dict[str, Any]) -> LogContents:
    """A log of ``records``, numbered and stamped one second apart unless they carry ``t``."""
    numbered = [decode_entry({"seq": n, "t": float(n), **record}) for n, record in enumerate(records, 1)]
    return LogContents({"agent": "scripted:reference", "started_at": "2026-12-01T00:00:00+00:00"}, numbered)


def verdict(phase: str, passed: int, failed: int = 0) -> dict[str, Any]:
    """A phase verdict with ``passed`` passing and ``failed`` failing tests."""
    tests = [
        {"id": f"{phase}/test_x.py::test_ok{i}", "outcome": "passed", "detail": ""} for i in range(passed)
    ]
    tests += [
        {"id": f"{phase}/test_x.py::test_bad{i}", "outcome": "failed", "detail": "AssertionError: no\nmore"}
        for i in range(failed)
    ]
    return {"phase": phase, "passed": passed, "failed": failed, "tests": tests}


START = (
    {"kind": "session.started", "files": []},
    {"kind": "phase.unlocked", "phase": "phase1", "trigger": ""},
    {
        "kind": "message.queued",
        "trigger": "briefing",
        "message_kind": "briefing",
        "text": "Implement it.\nSecond line of the briefing.",
        "interrupt": False,
    },
    {"kind": "message.delivered", "trigger": "briefing"},
)
RESULT = {
    "kind": "tests.result",
    "request": 1,
    "snapshot": "s",
    "status": "ok",
    "detail": "",
    "cached": False,
}


def criterion(name: str, weight: float, score: float, *findings: str) -> dict[str, Any]:
    """A rubric criterion as ``session.scored`` records it."""
    return {
        "id": name,
        "title": "",
        "weight": weight,
        "score": score,
        "critical": False,
        "critical_failure": False,
        "findings": list(findings),
        "data": {},
    }


def markdown_and_terminal(report: Report) -> tuple[str, str]:
    """report.md and the end-of-run summary printed for ``report``."""
    out = io.StringIO()
    print_summary(report, Console(file=out, width=200))
    return report_markdown(report), out.getvalue()


def test_a_log_ended_but_not_graded_is_interrupted() -> None:
    """Killed during its final grading (session.ended, no session.graded): interrupted, not completed."""
    contents = log(
        *START,
        {**RESULT, "phases": [verdict("phase1", 5)]},
        {"kind": "session.ended", "reason": "agent_done", "detail": ""},
    )
    report = build_report(EXPORT_TIME, contents)
    assert report.run.status == "interrupted"
    assert not report.score.full_success


def test_an_invalid_run_reads_as_invalid_and_claims_no_passing_checks() -> None:
    """The reason is given; no 'graded on the nothing', no 'every test passes' over zero tests."""
    contents = log(
        *START, {"kind": "session.aborted", "status": "invalid", "detail": "agent command not found"}
    )
    markdown, terminal = markdown_and_terminal(build_report(EXPORT_TIME, contents))
    assert "- invalid because: agent command not found" in markdown
    assert "graded on the nothing" not in markdown
    assert "every test of every unlocked phase passes" not in markdown
    assert "Not graded: the run is invalid" in markdown
    assert "invalid because: agent command not found" in terminal
    assert "trigger revision" not in terminal  # no tables of a run that measured nothing


def test_a_run_with_no_test_verdict_does_not_say_every_test_passes() -> None:
    """Interrupted before its first test result: 'no test verdict', never 'None: every test passes'."""
    contents = log(*START, {"kind": "session.aborted", "status": "interrupted", "detail": "CancelledError()"})
    markdown = report_markdown(build_report(EXPORT_TIME, contents))
    assert "No test verdict: no hidden test ran" in markdown
    assert "every test of every unlocked phase passes" not in markdown


def test_a_cancellation_reads_as_ctrl_c_not_as_a_python_repr() -> None:
    """A recorded ``CancelledError()`` is said in words, in the report and in ``show``'s timeline."""
    aborted = {"kind": "session.aborted", "status": "interrupted", "detail": "CancelledError()"}
    report = build_report(EXPORT_TIME, log(*START, aborted))
    assert report.run.detail == "stopped by Ctrl-C (or a cancellation) before the session ended"
    assert "CancelledError" not in report_markdown(report)
    shown = [text for _, _, text in lines(log(*START, aborted).entries)]
    assert shown[-1].endswith(
        "run interrupted: stopped by Ctrl-C (or a cancellation) before the session ended"
    )


def test_an_interrupted_run_says_its_duration_is_up_to_its_last_record() -> None:
    """With no session end, the duration is the last record's time, said as such (not '00:00')."""
    contents = log(*START, {"kind": "session.aborted", "status": "interrupted", "detail": "CancelledError()"})
    markdown = report_markdown(build_report(EXPORT_TIME, contents))
    assert "ran 5.0s until its last record" in markdown


def test_the_total_shows_its_arithmetic_and_criteria_short_of_full_marks_are_failing_checks() -> None:
    """A rubric-scored total: weights, scores and points shown; a 20% criterion is a failing check."""
    criteria = [
        criterion("intact", 75.0, 1.0),
        criterion("adaptation", 25.0, 0.2, "only 9% survives"),
        criterion("protection", 0.0, 1.0),
    ]
    contents = log(
        *START,
        {**RESULT, "phases": [verdict("phase1", 3)]},
        {"kind": "session.ended", "reason": "agent_done", "detail": ""},
        {**RESULT, "kind": "session.graded", "request": 0, "phases": [verdict("phase1", 3)]},
        {"kind": "session.scored", "criteria": criteria},
    )
    report = build_report(EXPORT_TIME, contents)
    assert report.score.total == 0.8
    assert report.scoring.method == "rubric"
    assert [p.contribution for p in report.scoring.parts] == [0.75, 0.05]
    markdown, terminal = markdown_and_terminal(report)
    formula = "80% = (75 * 100% + 25 * 20%) / 100: the weighted mean of the rubric's scored criteria"
    assert formula in markdown
    assert formula in terminal
    assert "| adaptation (criterion) | 25 | 20% | 5.0 |" in markdown
    assert "- criterion adaptation (20%, weight 25): only 9% survives" in markdown
    assert "None: every test" not in markdown
    assert "| protection | not scored |" in markdown
    assert "reported" not in terminal


def test_messages_are_in_the_reports_in_full() -> None:
    """Every message delivered, its whole text: quoted in report.md, open (collapsible) in report.html."""
    contents = log(*START)
    report = build_report(EXPORT_TIME, contents)
    assert report.messages[0].text == "Implement it.\nSecond line of the briefing."
    markdown = report_markdown(report)
    assert "**1. briefing** (briefing): queued 3.0s, delivered 4.0s" in markdown
    assert "> Second line of the briefing." in markdown
    page = report_html(report, contents.entries)
    assert '<details class="message" data-message="1" open>' in page
    assert "Second line of the briefing.</pre>" in page


def test_superseded_tests_are_counted_apart_and_listed_in_the_html() -> None:
    """phase1's tests superseded by phase2 read '3/3 (2 superseded)' and are listed in report.html."""
    contents = log(
        *START,
        {**RESULT, "phases": [verdict("phase1", 5)]},
        {"kind": "phase.unlocked", "phase": "phase2", "trigger": "revision"},
        {**RESULT, "request": 2, "phases": [verdict("phase1", 3), verdict("phase2", 7)]},
    )
    report = build_report(EXPORT_TIME, contents)
    markdown, terminal = markdown_and_terminal(report)
    assert "| 3/3 (2 superseded) |" in markdown
    assert "phase1: 2 superseded test(s) no longer run since phase2" in terminal
    page = report_html(report, contents.entries)
    assert '<ul id="superseded"><li><code>phase1/test_export_time.py::test_keeps_offset</code>' in page


def test_a_phase_whose_tests_are_all_superseded_keeps_its_verdict_from_before(tmp_path: Path) -> None:
    """Phase 1's only test superseded: it scores by its last run before (1/1), not 0/0 as 0%."""
    scaffold(tmp_path / "c", "contradiction")
    challenge = load_challenge(tmp_path / "c")
    contents = log(
        *START,
        {**RESULT, "phases": [verdict("phase1", 0, 1)]},
        {**RESULT, "request": 2, "phases": [verdict("phase1", 1)]},
        {"kind": "phase.unlocked", "phase": "phase2", "trigger": "contradiction"},
        {**RESULT, "request": 3, "phases": [verdict("phase1", 0), verdict("phase2", 1)]},
        {"kind": "session.ended", "reason": "agent_done", "detail": ""},
        {
            **RESULT,
            "kind": "session.graded",
            "request": 0,
            "phases": [verdict("phase1", 0), verdict("phase2", 1)],
        },
    )
    report = build_report(challenge, contents)
    first = report.phases[0]
    assert (first.passed, first.total, first.score, first.full_marks) == (1, 1, 1.0, True)
    assert report.score.total == 1.0


def test_show_puts_a_turns_changes_and_commit_before_its_end() -> None:
    """The watcher sees a turn's writes and commit after the turn ended; show lists them first, and
    a test run whose only empty phase is all superseded (0/0) is not marked failing."""
    contents = log(
        *START,
        {"kind": "agent.started"},
        {"kind": "agent.turn_ended", "exit_code": 0, "reason": ""},
        {"kind": "fs.changed", "changes": [{"path": "app.py", "change": "modified"}], "omitted": 0},
        {"kind": "git.commit", "sha": "2f8ffa03bee841bc", "message": "Implement phase1", "omitted": 0},
        {**RESULT, "phases": [verdict("phase1", 0), verdict("phase2", 1)]},
    )
    shown = [text.split("  ", 1)[1] for _, _, text in lines(contents.entries)]
    turn = shown.index("agent turn ended (exit 0)")
    assert shown[turn - 2 : turn] == ["✎ 1 file(s) changed: app.py", "● commit 2f8ffa03be Implement phase1"]
    assert shown[turn + 1] == "✓ tests #1: phase1 0/0, phase2 1/1"


def test_a_criterion_that_is_not_scored_says_why_it_is_shown() -> None:
    """The terminal's ``protection │ not scored │ 100%`` row is explained under the table: not in
    the total, yet short of 100% it blocks full success, and it is critical."""
    protection = {
        **criterion("protection", 0, 1.0),
        "title": "The agent's own tests were not weakened",
        "critical": True,
    }
    contents = log(
        *START,
        {**RESULT, "kind": "session.graded", "request": 0, "phases": [verdict("phase1", 3)]},
        {"kind": "session.scored", "criteria": [protection]},
    )
    _, terminal = markdown_and_terminal(build_report(EXPORT_TIME, contents))
    assert "│ protection │ not scored │  100% │" in terminal
    assert (
        "  protection: The agent's own tests were not weakened: not scored (weight 0), so not in the total, "
        "but short of 100% it blocks full success; its failure is a critical failure"
    ) in terminal


def test_one_clock_and_one_duration_format() -> None:
    """The `show` timeline's moments are mm:ss (h:mm:ss past an hour); the reports' moments and
    durations are seconds, then minutes and seconds (so a 6 s run is not ``00:00`` to ``00:06``)."""
    assert [clock(0.38), clock(75.2), clock(3725.0)] == ["00:00", "01:15", "1:02:05"]
    assert clock(75.25, hundredths=True) == "01:15.25"
    assert [duration(0.475), duration(6.392), duration(125.0), duration(3725.0)] == [
        "0.5s",
        "6.4s",
        "2m 05s",
        "1h 02m 05s",
    ]
    contents = log(
        *START,
        {**RESULT, "phases": [verdict("phase1", 5)]},
        {
            "kind": "trigger.fired",
            "trigger": "revision",
            "cause": "phase1_tests_pass held on tests.result at 6392ms",
            "count": 1,
        },
    )
    report = build_report(EXPORT_TIME, contents)
    assert "held on tests.result at 6.4s |" in report_markdown(report)
    shown = [text for _, _, text in lines(contents.entries)]
    assert shown[-1] == "00:06.00  ⚡ trigger revision fired: phase1_tests_pass held on tests.result at 6.4s"


RESCORE = Rescore(
    run="export-time-20261201-scripted",
    challenge="challenges/export-time",
    challenge_sha256="ab",
    original_score=0.81,
    snapshots_tested=1,
    changes=[],
)


@pytest.mark.parametrize(
    ("scope", "line"),
    [
        (
            {"allowed_paths": ["*.py"], "changed": 1, "findings": []},
            "scope: every change is inside allowed_paths",
        ),
        (
            {"allowed_paths": ["src/**"], "changed": 2, "findings": [{"path": "a.py", "change": "added"},
                                                       {"path": "b/c.txt", "change": "modified"}]},
            "scope: 2 files changed outside allowed_paths: a.py (added), b/c.txt (modified)",
        ),
    ],
)  # fmt: skip
def test_rescore_marker_and_scope_findings_are_rendered_when_present(
    scope: dict[str, Any], line: str
) -> None:
    """The contracts' keys: a re-score line at the top, and the scope line, in md, html and terminal."""
    contents = log(*START, {**RESULT, "phases": [verdict("phase1", 5)]})
    report = build_report(EXPORT_TIME, contents).model_copy(
        update={"rescore": RESCORE, "scope": Scope.model_validate(scope)}
    )
    marker = (
        "Re-score of export-time-20261201-scripted with challenges/export-time — "
        "the agent did not run again; the original score was 81%"
    )
    markdown, terminal = markdown_and_terminal(report)
    assert markdown.splitlines()[2] == f"> **{marker}**"
    assert terminal.splitlines()[0] == marker
    assert line in terminal
    assert f"## Scope\n\n{line[0].upper()}{line[1:]}." in markdown
    page = report_html(report, contents.entries)
    assert f'<p class="headline rescore" id="rescore">{marker}</p>' in page
    assert f'<p id="scope">{line}.</p>' in page


def test_reports_without_the_contract_keys_have_no_rescore_or_scope_lines() -> None:
    """No ``rescore`` or ``scope`` key: nothing of either is rendered."""
    contents = log(*START, {**RESULT, "phases": [verdict("phase1", 5)]})
    report = build_report(EXPORT_TIME, contents)
    markdown, terminal = markdown_and_terminal(report)
    assert "Re-score" not in markdown + terminal
    assert "scope" not in (markdown + terminal).lower()


def test_a_log_whose_bounds_cannot_be_read_says_so_as_not_bounded() -> None:
    """A described bounds block of the wrong shape never crashes the report: it says, in every
    format, that what was bounded is not known."""
    created = {
        "kind": "workspace.created",
        "baseline": "b",
        "python": "3.11",
        "sandbox": {"bounds": {"x": 1}},
    }
    report = build_report(EXPORT_TIME, log(*START, created, {**RESULT, "phases": [verdict("phase1", 5)]}))
    assert report.bounds is not None
    (warning,) = report.bounds.warnings
    assert warning.startswith("the log's description of the bounds cannot be read (cgroups: Field required")
    markdown, terminal = markdown_and_terminal(report)
    assert f"NOT BOUNDED: {warning}" in markdown
    assert "NOT BOUNDED: the log's description of the bounds cannot be read" in terminal


def test_a_header_written_by_hand_is_read_as_text() -> None:
    """A header value that is no text (an agent given as a number) is reported as its text."""
    contents = log(*START, {**RESULT, "phases": [verdict("phase1", 5)]})
    written = LogContents({**contents.header, "agent": 7, "start_at": None}, contents.entries)
    assert (
        build_report(EXPORT_TIME, written).run.agent,
        build_report(EXPORT_TIME, written).run.start_at,
    ) == (
        "7",
        None,
    )

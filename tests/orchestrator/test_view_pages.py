"""The pure renderers of ``changeup view``: snapshots and their verdict changes, the tests that
broke, and agent text kept inert in every page."""

from __future__ import annotations

from pathlib import Path

from orchestrator.log.records import Entry, WorkspaceCreated
from orchestrator.log.report import Report
from orchestrator.render.view_run import run_page, snapshots_of
from orchestrator.render.view_site import IndexRow, index_html
from tests.cli import in_process
from tests.matrix.samples import report
from triggers import PhaseResult, TestOutcome, TestsResult

A, B, C = "a" * 40, "b" * 40, "c" * 40


def result(t: float, snapshot: str, *phases: tuple[str, dict[str, str]]) -> Entry:
    """A test run at ``t`` of ``snapshot``: each phase's test ids and outcomes."""
    results = tuple(
        PhaseResult(
            phase,
            sum(o == "passed" for o in tests.values()),
            sum(o != "passed" for o in tests.values()),
            tuple(TestOutcome(f"{phase}/{name}", outcome) for name, outcome in tests.items()),  # type: ignore[arg-type]
        )
        for phase, tests in phases
    )
    return Entry(0, t, TestsResult(t, 1, snapshot, results))


ENTRIES = [
    Entry(1, 0.0, WorkspaceCreated("0" * 40, "python", {})),
    result(1.0, A, ("phase1", {"test_keep": "failed"})),
    result(2.0, B, ("phase1", {"test_keep": "passed"})),
    result(2.5, B, ("phase1", {"test_keep": "passed"})),  # the same snapshot again: no new one
    result(3.0, C, ("phase1", {"test_keep": "failed"}), ("phase2", {"test_new": "passed"})),
]


def test_snapshots_are_distinct_chained_from_the_baseline_with_their_verdict_changes() -> None:
    """Each tested snapshot once, its diff base the one before (the baseline first), and the
    tests whose verdict changed there."""
    found = snapshots_of(ENTRIES)
    assert [(s.t, s.sha, s.before) for s in found] == [(1.0, A, "0" * 40), (2.0, B, A), (3.0, C, B)]
    assert found[0].changes == (("phase1/test_keep", "not run", "failed"),)
    assert found[1].changes == (("phase1/test_keep", "failed", "passed"),)
    assert found[2].changes == (
        ("phase1/test_keep", "passed", "failed"),
        ("phase2/test_new", "not run", "passed"),
    )


def test_the_run_page_names_the_snapshot_that_broke_an_earlier_test_and_keeps_agent_text_inert() -> None:
    """phase1's test broke at snapshot 3 (listed, linked to the scrubber); a diff holding
    ``</script>`` cannot end the page's data early; an agent name with markup is escaped."""
    data = report("c")
    data["run"]["agent"] = "<img src=x onerror=alert(1)>"
    page = run_page(
        Report.model_validate(data), ENTRIES, {C: "+</script><script>alert(1)</script>"}, "../i.html"
    )
    broken = page[page.index('<div id="broken">') :]
    assert "<code>phase1/test_keep</code> passed → failed at snapshot" in broken
    assert 'data-snapshot="2">3</a>' in broken
    assert broken.split("</div>")[0].count("<li>") == 1  # not the failure it started with, not phase2
    assert "</script><script>alert(1)" not in page
    assert "<img src=x" not in page


def test_the_index_escapes_every_value() -> None:
    """A run folder named with markup shows as text in the index."""
    row = IndexRow("run", "runs/x.html", "<b>x</b>", "c", "a", "completed", 0.5, "2026-12-04")
    page = index_html([row], ["runs"])
    assert "<b>x</b>" not in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page
    assert 'data-score="0.5000"' in page


def test_view_says_what_is_wrong_with_its_paths_and_exits_2(tmp_path: Path) -> None:
    """A PATH that is no folder, and an --out that is a file, are bad input (exit 2, a message
    naming them), not a traceback."""
    missing = in_process("view", str(tmp_path / "nowhere"), "--out", str(tmp_path / "site"))
    assert missing.exit_code == 2
    assert "nowhere: not a folder" in missing.output
    (tmp_path / "file").write_text("")
    taken = in_process("view", str(tmp_path), "--out", str(tmp_path / "file"))
    assert taken.exit_code == 2
    assert "a file is there" in taken.output
    empty = in_process("view", str(tmp_path), "--out", str(tmp_path / "site"))
    assert empty.exit_code == 0, empty.output
    assert "0 pages written" in empty.output
    assert (tmp_path / "site" / "index.html").is_file()

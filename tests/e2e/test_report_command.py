"""``changeup report RUN`` end to end, and the paths and hint at the end of ``changeup run``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import REPO, changeup
from tests.e2e.test_run import run

pytestmark = pytest.mark.slow

NAMES = ("report.json", "report.md", "report.html")


def test_report_rebuilds_a_runs_reports_from_its_log_and_prints_their_paths(tmp_path: Path) -> None:
    """Deleted reports come back, equal to the ones the run wrote; their paths are printed."""
    done, folder, _ = run(REPO / "challenges/export-time", "scripted", tmp_path)
    assert done.returncode == 0, done.stderr
    written = {name: (folder / name).read_text() for name in NAMES}
    for name in NAMES:
        (folder / name).unlink()
    rebuilt = changeup("report", str(folder), cwd=REPO)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert rebuilt.stdout.splitlines() == [str(folder / name) for name in NAMES]
    assert {name: (folder / name).read_text() for name in NAMES} == written


def test_run_ends_with_the_html_report_and_a_next_hint(tmp_path: Path) -> None:
    """The run's summary names report.html and says what to do next."""
    done, folder, _ = run(REPO / "challenges/export-time", "scripted", tmp_path)
    assert f"html:       {folder / 'report.html'}" in done.stdout
    assert f"next:       changeup show {folder}   or open {folder / 'report.html'}" in done.stdout

"""Scope findings end to end: a change outside ``allowed_paths`` is reported, never scored."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import REPO, changeup
from tests.e2e.test_run import AGENT_SCRIPT, run

pytestmark = pytest.mark.slow


def test_a_file_changed_outside_allowed_paths_is_a_scope_finding(tmp_path: Path) -> None:
    """The agent also writes scratch.txt: report.json, report.md and show name it; the score is untouched."""
    script = tmp_path / "agent.sh"
    script.write_text(AGENT_SCRIPT + "echo 'what I tried' > scratch.txt\n")
    script.chmod(0o755)
    done, folder, report = run(REPO / "challenges/export-time", f"command:{script}", tmp_path / "runs")
    assert done.returncode == 0, done.stderr
    assert report["score"]["full_success"]  # a finding is reported, not scored
    assert report["scope"] == {
        "allowed_paths": ["export_time.py", "test_*.py", "tests/**"],
        "changed": 2,
        "findings": [{"path": "scratch.txt", "change": "added"}],
    }
    line = "1 file changed outside allowed_paths: scratch.txt (added)"
    assert line in (folder / "report.md").read_text()
    assert f"scope: {line}" in done.stdout
    shown = changeup("show", str(folder), cwd=REPO)
    assert f"scope: {line}" in shown.stdout, shown.stderr


def test_changes_inside_allowed_paths_are_no_finding(tmp_path: Path) -> None:
    """The scripted reference changes only what the challenge allows: the report says so."""
    done, folder, report = run(REPO / "challenges/export-time", "scripted", tmp_path / "runs")
    assert done.returncode == 0, done.stderr
    assert report["scope"]["findings"] == []
    assert "Scope: every change is inside allowed_paths" in (folder / "report.md").read_text()

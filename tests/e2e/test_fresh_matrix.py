"""A matrix that crosses evolving with fresh, end to end: real sessions, then ``changeup compare``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import REPO, changeup

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

MATRIX = f"""\
matrix:
  challenges: [{REPO}/challenges/export-time, {REPO}/challenges/protected-report-api]
  agents:
    - name: reference
      agent: scripted
    - name: impostor
      agent: impostor:always-equal
  modes: [evolving, fresh]
  fresh_at: {{protected-report-api: phase2}}   # export-time: its last phase, phase2
"""


def test_the_same_revision_as_a_single_task_and_as_a_mid_conversation_change(tmp_path: Path) -> None:
    """2 challenges x 2 agents x 2 modes: each fresh session starts where the file says, with the
    phases before it applied; compare sets the modes side by side per challenge x agent, in
    compare.json, compare.md, compare.html and the terminal; a second run resumes with nothing to do."""
    matrix, results = tmp_path / "matrix.yaml", tmp_path / "results"
    matrix.write_text(MATRIX)
    command = ("run", "--matrix", str(matrix), "--out", str(results), "--concurrency", "2", "-q")
    done = changeup(*command, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    comparison = json.loads((results / "compare.json").read_text())
    assert comparison["matrix"]["modes"] == ["evolving", "fresh"]
    assert comparison["matrix"]["fresh_at"] == {"export-time": "phase2", "protected-report-api": "phase2"}
    fresh = [t for t in comparison["trials"] if t["mode"] == "fresh"]
    assert len(fresh) == 4
    assert all(t["status"] == "completed" and "--fresh--" in t["run"] for t in fresh)
    assert {t["start_at"] for t in fresh} == {"phase2"}
    assert {t["start_at"] for t in comparison["trials"] if t["mode"] == "evolving"} == {None}

    cells = {(c["challenge"], c["agent"]): c for c in comparison["fresh_vs_evolving"]["cells"]}
    for challenge in ("export-time", "protected-report-api"):
        reference, impostor = cells[(challenge, "reference")], cells[(challenge, "impostor")]
        assert reference["evolving"]["full_successes"] == reference["fresh"]["full_successes"] == 1
        assert impostor["evolving"]["full_successes"] == impostor["fresh"]["full_successes"] == 0
    rows = {row["agent"]: row for row in comparison["fresh_vs_evolving"]["agents"]}
    assert rows["reference"]["full_success"]["difference"] == 0.0
    assert rows["reference"]["full_success"]["challenges"] == 2

    # Started at phase2, protected-report-api's fresh reference still meets pagination's trigger.
    late = next(t for t in fresh if (t["challenge"], t["agent"]) == ("protected-report-api", "reference"))
    report = json.loads((results / late["run"] / "report.json").read_text())
    assert report["run"]["start_at"] == "phase2"
    assert [t["id"] for t in report["triggers"] if t["fired"]] == ["pagination"]
    assert [p["unlocked_by"] for p in report["phases"]] == ["start", "start", "pagination"]

    markdown = (results / "compare.md").read_text()
    assert "## Fresh against evolving" in markdown
    assert "| protected-report-api | reference | phase2 | 1/1 / 1/1 |" in markdown
    assert 'id="fresh"' in (results / "compare.html").read_text()
    assert "reference: fresh - evolving, full success +0%" in done.stdout
    assert not any("evolving sessions only" in note for note in comparison["not_covered"])

    again = changeup(*command, timeout=300)
    assert again.returncode == 0, again.stderr
    attempts = json.loads((results / "compare.json").read_text())["provenance"]["attempts"]
    assert len(attempts) == 8  # every cell was done: nothing ran again

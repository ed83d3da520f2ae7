"""``changeup run --start-at PHASE`` end to end: a session that starts at a later phase."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli import REPO, changeup
from tests.e2e.test_run import run

pytestmark = pytest.mark.slow

CHALLENGE = REPO / "challenges/protected-report-api"


def agent_history(workspace: Path) -> list[str]:
    """The workspace repository's commit subjects, oldest first, read with a plain git."""
    done = subprocess.run(
        ["git", "-c", "safe.directory=*", "-C", str(workspace), "log", "--reverse", "--format=%s"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()


def test_the_reference_reaches_full_marks_from_the_last_phase(tmp_path: Path) -> None:
    """Started at phase3: phases 1 and 2 open at the start with their reference committed, the
    pagination message is the briefing, no trigger fires, the reference scores full marks, and the
    log replays; the header, the manifest and every report say where it started."""
    done, folder, report = run(CHALLENGE, "scripted", tmp_path / "runs", "--start-at", "phase3")
    assert done.returncode == 0, done.stderr
    assert report["score"]["full_success"], report["score"]
    assert report["run"]["start_at"] == "phase3"
    assert [p["unlocked_by"] for p in report["phases"]] == ["start", "start", "start"]
    assert len({p["unlocked_at"] for p in report["phases"]}) == 1  # all at once
    assert not [t["id"] for t in report["triggers"] if t["fired"]]
    (briefing,) = report["messages"]
    assert briefing["trigger"] == "briefing"
    assert briefing["text"].startswith("Good. Last one for this round: large tenants")  # pagination's message
    # The phases before the start were laid down as the scripted agent lays them: a commit each.
    assert agent_history(folder / "workspace") == [
        "Starting point",
        "Sort the report export by date",
        "Reject malformed report dates with a 400",
        "Paginate the report export",
    ]
    assert report["activity"]["commits"] == 1  # only the agent's own is its commit
    header = json.loads((folder / "events.jsonl").read_text().splitlines()[0])
    assert header["start_at"] == "phase3"
    assert json.loads((folder / "manifest.json").read_text())["challenge"]["start_at"] == "phase3"
    line = "started at phase3: the workspace held the reference solution of phase1 and phase2"
    assert line in done.stdout
    assert line in (folder / "report.md").read_text()
    assert line in (folder / "report.html").read_text()
    replayed = changeup("replay", str(folder), cwd=REPO)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "agrees" in replayed.stdout
    shown = changeup("show", str(folder), "--all", cwd=REPO)
    assert "session started at phase3" in shown.stdout, shown.stderr


def test_starting_at_the_first_phase_is_starting_as_written(tmp_path: Path) -> None:
    """--start-at phase1 makes the run ``changeup run`` makes without it: no start recorded,
    the briefing first, the triggers firing as designed."""
    done, folder, report = run(CHALLENGE, "scripted", tmp_path / "runs", "--start-at", "phase1")
    assert done.returncode == 0, done.stderr
    assert report["run"]["start_at"] is None
    assert json.loads((folder / "events.jsonl").read_text().splitlines()[0])["start_at"] is None
    assert [t["id"] for t in report["triggers"] if t["fired"]] == ["validation", "pagination"]
    assert "started at" not in (folder / "report.md").read_text()

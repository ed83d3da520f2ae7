"""replay, show and playback on real recorded runs, and on logs damaged by hand."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli import CHANGEUP, REPO, changeup

pytestmark = pytest.mark.slow


def copy_log(recorded: Path, tmp_path: Path, lines: list[str]) -> Path:
    """A run folder holding ``lines`` as its log."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "events.jsonl").write_text("".join(lines))
    return folder


def test_replay_agrees(recorded: Path) -> None:
    """The recorded run replays with every decision matching."""
    done = changeup("replay", str(recorded))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "agrees" in done.stdout


def test_edited_test_result_diverges_at_exactly_that_event(recorded: Path, tmp_path: Path) -> None:
    """Turning the passing phase-1 result into a failure makes replay diverge there."""
    lines = (recorded / "events.jsonl").read_text().splitlines(keepends=True)
    records = [json.loads(line) for line in lines]
    fired = next(r for r in records[1:] if r["kind"] == "trigger.fired")
    index, cause = next(
        (i, r)
        for i, r in enumerate(records)
        if i > 0 and r["kind"] == "tests.result" and r["seq"] == fired["seq"] - 1
    )
    cause["phases"][0]["passed"] -= 1
    cause["phases"][0]["failed"] += 1
    lines[index] = json.dumps(cause) + "\n"
    done = changeup("replay", str(copy_log(recorded, tmp_path, lines)))
    assert done.returncode == 1
    assert f"diverges at seq {cause['seq']}" in done.stdout
    assert f"→ seq {cause['seq']:>5}" in done.stdout
    assert "trigger.fired" in done.stdout


def test_truncated_log_replays_what_is_complete(recorded: Path, tmp_path: Path) -> None:
    """A log cut mid-line: a warning, and the complete part replays."""
    text = (recorded / "events.jsonl").read_text()
    cut = text[: text.index('"kind":"session.ended"') + 10]
    done = changeup("replay", str(copy_log(recorded, tmp_path, [cut])))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "torn" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty log"),
        (None, "not a JSON line"),
        (
            '{"format": "changeup-events", "version": 1}\n',
            "event log version 1; this changeup reads version 2",
        ),
    ],
)
def test_damaged_logs_give_clear_messages(
    recorded: Path, tmp_path: Path, content: str | None, message: str
) -> None:
    """An empty file, a corrupt line or an old version: a message, exit 1, no traceback."""
    if content is None:
        lines = (recorded / "events.jsonl").read_text().splitlines(keepends=True)
        lines[3] = "{this is not json\n"
        content = "".join(lines)
    done = changeup("replay", str(copy_log(recorded, tmp_path, [content])))
    assert done.returncode == 1
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_show_lists_the_timeline(recorded: Path) -> None:
    """show prints messages, triggers with causes, test runs per phase and commits."""
    done = changeup("show", str(recorded))
    assert done.returncode == 0, done.stderr
    for text in (
        "briefing delivered",
        "trigger revision fired: phase1_tests_pass held",
        "tests #1: phase1 5/5",
    ):
        assert text in done.stdout
    assert "commit" in done.stdout
    assert "session ended: agent_done" in done.stdout


def test_playback_prints_the_timeline_in_order(recorded: Path) -> None:
    """--speed re-enacts the run; at a high speed it is quick and in recorded order."""
    done = changeup("replay", str(recorded), "--speed", "1000")
    assert done.returncode == 0, done.stderr
    shown = done.stdout
    assert (
        shown.index("session started") < shown.index("trigger revision fired") < shown.index("session ended")
    )


def test_rescore_with_another_version_of_the_hidden_tests(tmp_path: Path) -> None:
    """Re-scoring a broken variant's run against changed hidden tests reports the changed verdicts."""
    out = tmp_path / "runs"
    done = changeup(
        "run",
        "challenges/normalize-tags",
        "--agent",
        "scripted:broken/sorted-set",
        "--out",
        str(out),
        "--quiet",
    )
    assert done.returncode == 0, done.stderr
    run = next(out.iterdir())
    before = json.loads((run / "report.json").read_text())
    assert not before["score"]["full_success"]

    same = changeup("replay", str(run), "--rescore")
    assert same.returncode == 0, same.stderr
    assert "no verdict changed" in same.stdout
    # by default, the tests the run was graded with: its own copy, not a folder that may have changed
    own = f"with the hidden tests of the run's own copy of the challenge, {run / 'challenge'} (as it was run)"
    assert own in " ".join(same.stdout.split())

    version2 = tmp_path / "normalize-tags-v2"
    shutil.copytree(REPO / "challenges" / "normalize-tags", version2)
    hidden = version2 / "tests" / "phase2" / "test_tags_dedupe.py"
    text = hidden.read_text()
    loosened = text.replace(
        'assert exactly(normalize_tags([" green ", "green", "blue"])) == ["green", "blue"]',
        'assert sorted(exactly(normalize_tags([" green ", "green", "blue"]))) == ["blue", "green"]',
    )
    assert loosened != text
    hidden.write_text(loosened)
    changed = changeup("replay", str(run), "--rescore", "--challenge", str(version2))
    assert changed.returncode == 0, changed.stderr
    assert "phase2/test_tags_dedupe.py::test_first_occurrence_after_trim: failed → passed" in changed.stdout
    assert "phase2: 4/5 → 5/5 tests pass" in changed.stdout
    assert f"with the hidden tests of {version2}, not the run's own copy" in " ".join(changed.stdout.split())
    after = json.loads((run / "report-rescored.json").read_text())
    assert after["rescore"]["changes"]
    assert after["score"]["total"] > before["score"]["total"]
    assert json.loads((run / "report.json").read_text()) == before  # the original stays
    assert (run / "report-rescored.html").is_file()


def test_show_follow_tails_a_live_run(tmp_path: Path) -> None:
    """--follow keeps printing a run as it happens and stops when the run is over."""
    out = tmp_path / "runs"
    running = subprocess.Popen(
        [*CHANGEUP, "run", "challenges/normalize-tags", "--out", str(out), "-q"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(200):
            logs = list(out.glob("*/events.jsonl")) if out.exists() else []
            if logs:
                break
            time.sleep(0.05)
        assert logs, "the run never started its log"
        follow = changeup("show", str(logs[0].parent), "--follow")
    finally:
        running.wait(timeout=120)
    assert follow.returncode == 0, follow.stderr
    assert "session ended" in follow.stdout
    assert "graded the final workspace" in follow.stdout


def test_a_run_keeps_its_challenge_so_replay_needs_no_challenge_folder(tmp_path: Path) -> None:
    """The run folder holds the challenge as it was run: with the original folder gone, replay
    still agrees and the reports are rebuilt."""
    original = tmp_path / "normalize-tags"
    shutil.copytree(REPO / "challenges" / "normalize-tags", original)
    done = changeup("run", str(original), "--out", str(tmp_path / "runs"), "--quiet")
    assert done.returncode == 0, done.stderr
    folder = next((tmp_path / "runs").iterdir())
    assert (folder / "challenge" / "challenge.yaml").read_text() == (original / "challenge.yaml").read_text()
    shutil.rmtree(original)
    replayed = changeup("replay", str(folder))
    assert replayed.returncode == 0, replayed.stderr
    assert "agrees" in replayed.stdout
    rebuilt = changeup("report", str(folder))
    assert rebuilt.returncode == 0, rebuilt.stderr

"""The event log survives SIGKILL of the orchestrator at any moment."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator.eventlog import EventLog, read_log
from orchestrator.loader import load_challenge
from orchestrator.report import build_report

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
KILLS = 30


def killed_run(out: Path, delay: float) -> tuple[Path, set[int]]:
    """Start a run, SIGKILL it after ``delay`` seconds; its folder and the seqs it acknowledged."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "orchestrator",
            "run",
            "challenges/normalize-tags",
            "--out",
            str(out),
            "-q",
            "-v",
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    time.sleep(delay)
    os.killpg(process.pid, signal.SIGKILL)
    _, stderr = process.communicate(timeout=60)
    acknowledged = set()
    for line in stderr.decode(errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if entry.get("event") == "recorded":
            acknowledged.add(entry["seq"])
    folders = list(out.iterdir()) if out.exists() else []
    return (folders[0] if folders else out), acknowledged


def test_every_acknowledged_record_survives_a_kill_none_duplicated(tmp_path: Path) -> None:
    """Killed at 30 random moments: each acknowledged record is in the log once; the run is interrupted."""
    rng = random.Random(20261129)
    checked = 0
    acknowledged_in_all = 0
    for attempt in range(KILLS):
        folder, acknowledged = killed_run(tmp_path / f"kill-{attempt}", rng.uniform(0.2, 2.5))
        log = folder / "events.jsonl"
        if not log.is_file():
            assert not acknowledged  # killed before the log existed: nothing was acknowledged
            continue
        contents = read_log(log)
        seqs = [r["seq"] for r in contents.records]
        acknowledged_in_all += len(acknowledged)
        assert seqs == list(range(1, len(seqs) + 1)), "seqs are contiguous, none duplicated"
        assert acknowledged <= set(seqs), f"lost acknowledged records: {sorted(acknowledged - set(seqs))}"
        kinds = {r["kind"] for r in contents.records}
        if "session.graded" not in kinds:
            report = build_report(load_challenge(REPO / "challenges" / "normalize-tags"), contents)
            assert report["run"]["status"] == "interrupted"
        again = EventLog.reopen(log)  # a torn tail is cut; numbering goes on without a repeat
        assert (
            again.append({"kind": "session.aborted", "status": "interrupted", "detail": "SIGKILL"}, 0.0)
            == len(seqs) + 1
        )
        again.close()
        checked += 1
    assert checked >= KILLS // 2
    assert acknowledged_in_all > 0  # the acknowledgements were really observed

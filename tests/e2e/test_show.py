"""``changeup show`` end to end: the outcome at the end, joined output, dead runs (message numbering
and an interrupted run are checked on the fakes: tests/orchestrator/test_run_composition.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator.log.eventlog import LogReader
from tests.cli import CHANGEUP, REPO, changeup
from tests.e2e.test_run import run
from tests.processes import answers_ctrl_c

pytestmark = pytest.mark.slow


def started_run(out: Path, agent: str) -> tuple[subprocess.Popen[bytes], Path]:
    """Start ``changeup run`` on export-time in its own process group; return once its log has
    its first test result (polled, so a slow machine only waits longer)."""
    process = subprocess.Popen(
        [
            *CHANGEUP,
            "run",
            "challenges/export-time",
            "--agent",
            agent,
            "--out",
            str(out),
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=answers_ctrl_c,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        logs = list(out.glob("*/events.jsonl"))
        if logs and any(r["kind"] == "tests.result" for r in list(LogReader(logs[0]))):
            return process, logs[0].parent
        time.sleep(0.1)
    process.kill()
    process.wait()
    raise AssertionError("the run never recorded a test result")


def test_show_ends_with_the_score_the_failing_tests_and_how_the_score_is_made(tmp_path: Path) -> None:
    """After a finished run: its failing tests, the score's arithmetic and the headline."""
    _, folder, report = run(REPO / "challenges/export-time", "scripted:broken/suffix-only", tmp_path)
    shown = changeup("show", str(folder), cwd=REPO)
    assert shown.returncode == 0, shown.stderr
    failing = [t["id"] for p in report["phases"] for t in p["failing"]]
    assert failing
    tail = shown.stdout.splitlines()
    assert tail[-1].startswith(f"score {report['score']['total'] * 100:.0f}% — not a full success")
    assert tail[-2].startswith("  score: ")
    assert "the weighted mean of the phases' scores" in tail[-2]
    for test in failing:
        assert f"✗ {test} (failed)" in shown.stdout


def test_agent_output_split_per_read_is_shown_joined(tmp_path: Path) -> None:
    """One long print of a process, recorded over several reads, is one shown ``agent:`` line."""
    script = tmp_path / "agent.py"
    script.write_text("for n in range(3000):\n    print(f'line {n} of a long traceback')\n")
    _, folder, _ = run(
        REPO / "challenges/export-time", f"process:{sys.executable} {script}", tmp_path / "runs"
    )
    outputs = [r for r in list(LogReader(folder / "events.jsonl")) if r["kind"] == "agent.output"]
    assert len(outputs) > 1  # the log keeps the reads
    shown = changeup("show", str(folder), "--all", cwd=REPO).stdout
    assert sum("agent: " in line for line in shown.splitlines()) == 1
    assert "agent: line 0 of a long traceback" in shown
    assert "line 2999 of a long traceback" in shown


def test_follow_on_a_killed_run_says_it_is_not_live_and_stops(tmp_path: Path) -> None:
    """The run's process was SIGKILLed: --follow says so and shows what was recorded, not waiting."""
    process, folder = started_run(tmp_path, "process:sleep 600")
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=60)
    shown = changeup("show", str(folder), "--follow", cwd=REPO, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert (
        f"the run is not live (its process {process.pid} is gone); showing what was recorded" in shown.stdout
    )
    assert "tests #1: phase1 0/5" in shown.stdout

"""The event log survives SIGKILL of the orchestrator in every window of a run.

Each kill is placed by what the run has acknowledged, not by a clock: the test reads the
run's own "recorded" diagnostics (written after each record is fsynced) and kills the
process group as soon as the record that opens a window is acknowledged. So every window
is covered on every machine, however loaded, and none is covered by luck.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from orchestrator.challenge.loader import load_challenge
from orchestrator.log.eventlog import EventLog, read_log
from orchestrator.log.records import SessionAborted
from orchestrator.scoring.report import build_report, finished
from tests.cli import CHANGEUP, REPO, environment

pytestmark = pytest.mark.slow

CHALLENGE = REPO / "challenges" / "normalize-tags"

#: The record whose acknowledgement opens each window, in the order a run writes them.
WINDOWS = (
    "session.started",  # set up: the engine about to unlock phase 1
    "tests.started",  # a hidden-test run in flight
    "tests.result",  # a verdict in, the engine deciding
    "trigger.fired",  # a message on its way to the agent
    "message.delivered",  # the agent at work on the new message
    "session.ended",  # the final grading in flight
    "session.graded",  # the rubric being scored
)


def acknowledged(stderr: Path) -> list[tuple[int, str]]:
    """(seq, kind) of every record the run has acknowledged so far."""
    seen = []
    for line in stderr.read_text(errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict) and entry.get("event") == "recorded":
            seen.append((entry["seq"], entry["kind"]))
    return seen


def killed_in(window: str, out: Path) -> tuple[Path, set[int]]:
    """Run normalize-tags; SIGKILL its process group once ``window``'s record is acknowledged."""
    out.mkdir()
    stderr = out.parent / f"{out.name}.stderr"
    with stderr.open("wb") as sink:
        process = subprocess.Popen(
            [*CHANGEUP, "run", str(CHALLENGE), "--out", str(out), "-q", "-v"],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=sink,
            start_new_session=True,
            env=environment({"CHANGEUP_LOG": "json"}),  # -v with JSON lines: every acknowledgement
        )
    try:
        deadline = time.monotonic() + 300  # a generous bound, never a condition of the test
        while not any(kind == window for _, kind in acknowledged(stderr)):
            assert process.poll() is None, f"the run ended before {window} was acknowledged"
            assert time.monotonic() < deadline, f"{window} was never acknowledged"
            time.sleep(0.01)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
    (folder,) = out.iterdir()
    return folder, {seq for seq, _ in acknowledged(stderr)}


@pytest.mark.parametrize("window", WINDOWS)
def test_every_acknowledged_record_survives_a_kill_none_duplicated(tmp_path: Path, window: str) -> None:
    """Killed in a window: each acknowledged record is in the log once, and the run reads as interrupted."""
    folder, acked = killed_in(window, tmp_path / "out")
    contents = read_log(folder / "events.jsonl")
    seqs = [e.seq for e in contents.entries]
    assert seqs == list(range(1, len(seqs) + 1)), "seqs are contiguous, none duplicated"
    assert acked <= set(seqs), f"lost acknowledged records: {sorted(acked - set(seqs))}"
    assert window in {e.record.kind for e in contents.entries}
    report = build_report(load_challenge(CHALLENGE), contents)
    if not finished(contents.entries):  # killed before its run was done
        assert report.run.status == "interrupted"
    again = EventLog.reopen(folder / "events.jsonl")  # a torn tail is cut; numbering goes on
    assert again.append(SessionAborted("interrupted", "SIGKILL"), 0.0) == (len(seqs) + 1)
    again.close()

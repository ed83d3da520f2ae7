"""A matrix survives one bad session: a session that hangs its harness, or kills it, takes no other
session with it, and counts against its own trial.

Each case is a real matrix through the CLI, its hostile agent one of tests/fixtures/redteam-agents
(copied into a folder of the test's own, whose path marks every process of it).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from orchestrator.log.eventlog import read_log
from orchestrator.log.records import SessionAborted
from tests.cli import CHANGEUP, REPO, changeup, environment
from tests.e2e.test_matrix import log_of
from tests.processes import answers_ctrl_c
from tests.redteam.common import AGENTS, needs_root
from tests.scale.conftest import marked, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

NORMALIZE_TAGS = REPO / "challenges" / "normalize-tags"
#: The wall-time limit of the hostile matrix's sessions: far beyond what the honest one needs.
LIMIT = 60
#: The limit when the matrix is resumed, with only the hung session left to run: it needs none
#: of the time an honest session does (the backend's limit is not frozen in the manifest).
RESUMED_LIMIT = 20

#: The honest neighbour waits until the hostile session is hung, then solves its task.
HOSTILE = """\
matrix:
  challenges: [{challenge}]
  agents:
    - name: hostile
      agent: "command:python3 {kit}/hangs_harness.py"
    - name: neighbour
      agent: "command:python3 {kit}/neighbour.py"
  agent_shares: ["{kit}", "{kit}/signal:rw"]
  backend: {{kind: local, session_timeout: {limit}s}}
"""

#: ``selective`` plays the reference on trial 1 and, on trial 2, crashes its harness instead.
SELECTIVE = """\
matrix:
  challenges: [{challenge}]
  trials: 2
  retry_invalid: 1
  agents:
    - name: steady
      agent: scripted
    - name: selective
      agent: scripted
      per_trial:
        - trials: [2]
          agent: "command:python3 {kit}/kills_harness.py"
  agent_shares: ["{kit}"]
  decision:
    candidate: selective
    baseline: steady
    rules:
      - rule: full_success_not_lower
"""


def kit(tmp_path: Path) -> Path:
    """The attack scripts and the reference solutions of normalize-tags, in a folder of this test."""
    folder = tmp_path / "kit"
    shutil.copytree(AGENTS, folder)
    shutil.copytree(NORMALIZE_TAGS / "solutions" / "reference", folder / "solutions")
    (folder / "signal").mkdir()
    (folder / "signal").chmod(0o1777)  # the agents run as a user of their own
    return folder


def matrix_file(tmp_path: Path, text: str, folder: Path, limit: int = LIMIT) -> Path:
    """``text`` with its places filled, as a matrix file."""
    path = tmp_path / "matrix.yaml"
    path.write_text(text.format(challenge=NORMALIZE_TAGS, kit=folder, limit=limit))
    return path


def finished(results: Path, agent: str) -> list[dict[str, Any]]:
    """The ``finished`` records of ``agent``'s attempts, oldest first."""
    records = log_of(results)
    mine = {r["attempt"] for r in records if r["event"] == "started" and r["cell"]["agent"] == agent}
    return [r for r in records if r["event"] == "finished" and r["attempt"] in mine]


def aborted(folder: Path) -> SessionAborted:
    """The last record of a run's event log, read as changeup reads it (whole, not torn): a
    ``session.aborted``."""
    contents = read_log(folder / "events.jsonl")
    assert not contents.torn
    record = contents.entries[-1].record
    assert isinstance(record, SessionAborted), record
    return record


def test_a_hung_session_neither_freezes_its_neighbour_nor_outlives_a_stop_or_its_limit(
    tmp_path: Path,
) -> None:
    """The hostile agent hangs its harness (a FIFO at .git/HEAD, and a turn that never ends); its
    honest neighbour, which solves its task only once the other is hung, finishes at full marks
    meanwhile. Ctrl-C then stops the matrix: the hung session is killed with its whole tree and
    its log says interrupted. Resumed (with a shorter limit), the hostile cell runs again and is killed at its
    wall-time limit: recorded timed out, its log readable and saying why, counted as a failed trial."""
    folder = kit(tmp_path)
    matrix, results = matrix_file(tmp_path, HOSTILE, folder), tmp_path / "results"
    command = ["run", "--matrix", str(matrix), "--out", str(results), "--concurrency", "2", "-q"]
    env = environment(
        {"REDTEAM_SIGNAL": str(folder / "signal" / "hung"), "REDTEAM_SOLUTIONS": str(folder / "solutions")}
    )
    driver = subprocess.Popen(
        [*CHANGEUP, *command],
        cwd=REPO,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=answers_ctrl_c,
    )
    try:
        wait_for("the neighbour's attempt to finish", lambda: finished(results, "neighbour"))
        fifo = next(results.glob("runs/*--hostile--*--a1")) / "workspace" / ".git" / "HEAD"
        assert stat.S_ISFIFO(fifo.lstat().st_mode)
        assert finished(results, "hostile") == []  # still hung, while its neighbour has finished
        assert marked(str(folder)), "the hostile session's processes are not to be seen"
        driver.send_signal(signal.SIGINT)  # what Ctrl-C sends
        _, errors = driver.communicate(timeout=120)
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait()
    assert driver.returncode == 130, errors
    (neighbour,) = finished(results, "neighbour")
    assert (neighbour["status"], neighbour["full_success"]) == ("completed", True)
    (stopped,) = finished(results, "hostile")
    assert stopped["status"] == "interrupted"
    first = next(results.glob("runs/*--hostile--*--a1"))
    assert aborted(first).status == "interrupted"
    wait_for("no process of the hostile session", lambda: not marked(str(folder)), bound=60)

    matrix_file(tmp_path, HOSTILE, folder, limit=RESUMED_LIMIT)
    resumed = changeup(*command, timeout=600, env=env)
    assert resumed.returncode == 1, resumed.stderr
    assert "1 trial(s) crashed changeup or ran past their wall-time limit" in resumed.stderr
    assert [r["status"] for r in finished(results, "neighbour")] == ["completed"]  # not run again
    again = finished(results, "hostile")[-1]
    assert again["status"] == "timed out"
    assert f"still running after {RESUMED_LIMIT}s, its wall-time limit" in again["detail"]
    second = next(results.glob("runs/*--hostile--*--a2"))
    assert aborted(second).status == "crashed"
    assert "wall-time limit" in aborted(second).detail
    assert (second / "session.log").is_file()
    assert not marked(str(folder))
    comparison = json.loads((results / "compare.json").read_text())
    hostile, honest = comparison["agents"]
    assert (hostile["full_success"]["successes"], hostile["full_success"]["trials"]) == (0, 1)
    assert hostile["crashed"] == {"trials": 1, "of": 1, "rate": 1.0}
    assert (honest["full_success"]["successes"], honest["full_success"]["trials"]) == (1, 1)
    assert any("crashed (or timed-out) rates differ" in w for w in comparison["warnings"])


@needs_root
def test_an_agent_that_crashes_its_harness_when_it_would_fail_is_counted_failing(tmp_path: Path) -> None:
    """With no sandbox (as root, CHANGEUP_SANDBOX=none) an agent can kill its session's process:
    ``selective`` does so on the trial it would fail. That attempt is crashed and never retried,
    the other sessions end as they would; compare counts it as a failed trial (1/2, not 1/1),
    the decision blocks, and the crashed rates are set side by side with a warning."""
    folder = kit(tmp_path)
    matrix, results = matrix_file(tmp_path, SELECTIVE, folder), tmp_path / "results"
    done = changeup(
        "run",
        "--matrix",
        str(matrix),
        "--out",
        str(results),
        "--concurrency",
        "2",
        "-q",
        timeout=600,
        env={"CHANGEUP_SANDBOX": "none"},
    )
    assert done.returncode == 1, done.stderr
    statuses = sorted((r["status"], r["full_success"]) for r in log_of(results) if r["event"] == "finished")
    assert statuses == [("completed", True)] * 3 + [("crashed", None)]
    (crashed,) = [r for r in finished(results, "selective") if r["status"] == "crashed"]
    assert "killed by signal SIGKILL" in crashed["detail"]
    run = next(results.glob("runs/*--selective--*--t2--a1"))
    assert aborted(run).status == "crashed"
    comparison = json.loads((results / "compare.json").read_text())
    steady, selective = comparison["cells"]
    assert (selective["valid"], selective["crashed"], selective["full_successes"]) == (2, 1, 1)
    assert (steady["valid"], steady["crashed"], steady["full_successes"]) == (2, 0, 2)
    decision = comparison["decision"]
    assert decision["verdict"] == "do not switch"
    assert decision["deciding"] == [{"challenge": "normalize-tags", "steady": "2/2", "selective": "1/2"}]
    warning = (
        "warning: crashed (or timed-out) rates differ between agents (evolving): "
        "steady 0% (0/2), selective 50% (1/2)"
    )
    assert warning in done.stdout
    assert "selective (evolving): full success 50%, 1/2 valid trials" in done.stdout
    assert "## Warnings" in (results / "compare.md").read_text()
    assert 'id="warnings"' in (results / "compare.html").read_text()

"""The red team against the grader's other doors: a covert channel, bytecode, the workspace's size,
secrets split across reads, and processes that try to outlive their run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from orchestrator.grading.sandbox import pids_cgroup
from tests.redteam.common import (
    AGENTS,
    DETECTED,
    NEUTRALISED,
    TARGET,
    needs_bubblewrap,
    needs_root,
    outcome,
    records,
    run,
)

pytestmark = pytest.mark.slow


# The control opens the host's own standard-library files, which the sandboxed case's watcher
# sees too if both run at once: make test's --dist loadfile runs a file's tests one after another.
@pytest.mark.parametrize("sandbox", [pytest.param("bubblewrap", marks=needs_bubblewrap), "none"])
def test_code_under_test_cannot_signal_an_agent_through_shared_files(tmp_path: Path, sandbox: str) -> None:
    """The code under test opens standard-library files in a pattern (a beacon, and one bit of a
    digest of the hidden tests per file); the agent, alive and watching with inotify, sees nothing:
    the tests' files are private copies. Without bubblewrap (the control) it sees the beacon,
    which shows the watcher works."""
    env = {"REDTEAM_WATCH": "8"} | ({"CHANGEUP_SANDBOX": "none"} if sandbox == "none" else {})
    report, folder = run(
        TARGET, f"process:python3 {AGENTS / 'covert_channel.py'}", tmp_path / "runs", env=env
    )
    observed = (folder / "workspace" / "observed.txt").read_text()
    assert "inotify refused" not in observed
    if sandbox == "bubblewrap":
        assert observed.strip() == "", observed
        assert outcome(report) == NEUTRALISED, report["score"]
    else:
        assert "opened this.py" in observed, "the control must see the channel, or the test proves nothing"


def test_bytecode_behind_a_stub_is_never_graded(tmp_path: Path) -> None:
    """A working add compiled into an unchecked-hash .pyc (re-included past .gitignore) and a
    sourceless adder.pyc, beside a stub adder.py: the hidden tests grade the stub."""
    report, folder = run(TARGET, f"command:python3 {AGENTS / 'bytecode.py'}", tmp_path / "runs")
    assert outcome(report) == NEUTRALISED, report["score"]
    assert (folder / "workspace" / "adder.pyc").exists()  # the bytecode was there to be found


@pytest.mark.parametrize(
    ("what", "env"),
    [("files", {"REDTEAM_FILES": "20000"}), ("sparse", {"REDTEAM_SPARSE_MB": "700"})],
)
def test_a_workspace_over_its_limits_is_refused_and_recorded(
    tmp_path: Path, what: str, env: dict[str, str]
) -> None:
    """20,000 files, or a 700 MB sparse file: the snapshot is refused at once (no test run on
    it), the refusal is recorded, every test fails, and the session is not held up."""
    report, folder = run(
        TARGET, f"command:python3 {AGENTS / 'fills_workspace.py'}", tmp_path / "runs", env=env
    )
    assert outcome(report) == DETECTED, report["score"]
    assert report["score"]["grading_status"] == "refused"
    over = [r for r in records(folder) if r["kind"] == "workspace.over_limits"]
    assert over
    assert "limit" in over[-1]["detail"]
    refused = [r for r in records(folder) if r["kind"] == "tests.result" and r["status"] == "refused"]
    assert refused
    assert all(r["seconds"] == 0 and r["snapshot"] == "" for r in refused)
    # Not held up: no test run ever starts on a refused snapshot (each started run has its result).
    started_runs = [r for r in records(folder) if r["kind"] == "tests.started"]
    ran = [r for r in records(folder) if r["kind"] in ("tests.result", "session.graded") and r["snapshot"]]
    assert len(started_runs) == len([r for r in ran if not r.get("cached")])


@pytest.mark.parametrize("kind", ["command", "process"])
def test_a_secret_printed_in_two_pieces_is_redacted(tmp_path: Path, kind: str) -> None:
    """An agent prints a token in two writes, apart in time: the log never holds it."""
    token = "sk-redteam-" + "7f3a9c21" * 4
    env = {"REDTEAM_TOKEN": token, **({"REDTEAM_PROCESS": "1"} if kind == "process" else {})}
    _, folder = run(TARGET, f"{kind}:python3 {AGENTS / 'split_secret.py'}", tmp_path / "runs", env=env)
    log = (folder / "events.jsonl").read_text()
    assert token not in log
    assert token[: len(token) // 2] not in log
    assert "[redacted $REDTEAM_TOKEN]" in log


def _survivors() -> str:
    return subprocess.run(
        ["pgrep", "-af", "sleep 77[78]"], capture_output=True, text=True, check=False
    ).stdout


# The survivors are sought machine-wide by name: the tests that leave them (all in this file) must
# run one after another, as make test's --dist loadfile does.
@pytest.mark.parametrize("sandbox", [pytest.param("bubblewrap", marks=needs_bubblewrap), "none"])
def test_processes_left_behind_by_the_tests_die_with_the_run(tmp_path: Path, sandbox: str) -> None:
    """Code under test leaves a setsid child and a child that holds the output pipe: the run is
    not held up until its time limit, and neither child outlives it, in any sandbox."""
    env = {"CHANGEUP_SANDBOX": "none"} if sandbox == "none" else {}
    report, folder = run(TARGET, "scripted:broken/leaves-processes", tmp_path / "runs", env=env)
    assert outcome(report) == NEUTRALISED, report["score"]
    results = [r for r in records(folder) if r["kind"] == "tests.result" and not r.get("cached")]
    assert results
    assert all(r["status"] == "ok" and r["seconds"] < 3 for r in results), results
    assert _survivors() == ""


@needs_root
@pytest.mark.skipif(
    not pids_cgroup(), reason="LOUD SKIP: no writable pids cgroup here, so nothing limits root's processes"
)
def test_the_process_limit_holds_for_root_without_bubblewrap(tmp_path: Path) -> None:
    """A fork bomb under test, changeup running as root with resource limits only: the run
    stays valid and graded (a cgroup caps the processes; RLIMIT_NPROC would not bind root):
    timed out, or over its process limit if it got there first."""
    report, _ = run(TARGET, "scripted:broken/fork-bomb", tmp_path / "runs", env={"CHANGEUP_SANDBOX": "none"})
    assert outcome(report) in (NEUTRALISED, DETECTED), report["score"]


def test_no_sandbox_kind_lets_an_agents_children_outlive_its_turn(tmp_path: Path) -> None:
    """An agent's turn leaves a setsid child behind; the turn's end takes it down (limits only)."""
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\nsetsid sleep 777 >/dev/null 2>&1 &\nsleep 778 &\necho left them\n")
    script.chmod(0o755)
    report, _ = run(TARGET, f"command:{script}", tmp_path / "runs", env={"CHANGEUP_SANDBOX": "none"})
    assert report["run"]["status"] == "completed"
    assert _survivors() == ""

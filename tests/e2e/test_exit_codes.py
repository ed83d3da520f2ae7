"""``changeup run``'s exit statuses, each end to end: the one table of ``orchestrator/present/exits.py``.

Bad input (exit 2), refused before anything runs, is checked in process: test_cli_bad_input.py.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.present.exits import Exit
from tests.challenges import without_deadline
from tests.cli import CHANGEUP, REPO
from tests.e2e.test_run import run
from tests.processes import answers_ctrl_c

pytestmark = pytest.mark.slow

NORMALIZE_TAGS = REPO / "challenges" / "normalize-tags"


def untimed(tmp_path: Path) -> Path:
    """normalize-tags without its deadline trigger: an agent that leaves phase 1 failing ends
    the session at once instead of getting the deadline's message."""
    return without_deadline(NORMALIZE_TAGS, tmp_path / "normalize-tags")


def test_a_clean_run_exits_0_whatever_the_score(tmp_path: Path) -> None:
    """An agent that does nothing scores nothing, yet the run ran and was graded: exit 0."""
    done, _, report = run(untimed(tmp_path), "command:echo nothing to do", tmp_path / "runs")
    assert done.returncode == Exit.OK, done.stderr
    assert report["score"]["total"] == 0.0


def test_an_agent_turn_that_exits_non_zero_exits_1_and_says_so(tmp_path: Path) -> None:
    """A command: agent exiting 3 fails the run, and stderr says which turn and how."""
    done, _, report = run(untimed(tmp_path), "command:exit 3", tmp_path / "runs")
    assert done.returncode == Exit.FAILED
    assert "error: the agent failed: in turn 1 it exited with 3" in done.stderr
    assert report["turns"][0]["exit_code"] == 3


def test_a_process_agent_that_crashes_exits_1(tmp_path: Path) -> None:
    """A process: agent that dies on its first message (exit 5) fails the run; before, it exited 0."""
    done, _, report = run(untimed(tmp_path), "process:read line; exit 5", tmp_path / "runs")
    assert done.returncode == Exit.FAILED, done.stderr
    assert "error: the agent failed: in turn 1 its process exited with 5" in done.stderr
    assert report["run"]["end_reason"] == "agent_exited"


def test_an_invalid_run_exits_1(tmp_path: Path) -> None:
    """An agent command that is not found on its first turn: the run is invalid, exit 1."""
    done, _, report = run(untimed(tmp_path), "command:no-such-agent-binary", tmp_path / "runs")
    assert done.returncode == Exit.FAILED
    assert "error: the run is invalid: agent command not found" in done.stderr
    assert report["run"]["status"] == "invalid"


def test_ctrl_c_exits_130_and_keeps_what_happened(tmp_path: Path) -> None:
    """SIGINT during a turn: exit 130, and the run folder holds the log and a report."""
    out = tmp_path / "runs"
    command = [*CHANGEUP, "run", str(NORMALIZE_TAGS), "--quiet"]
    # The agent marks that its turn began, then works until it is stopped.
    agent = "command:touch turn-started; exec sleep 600"
    with subprocess.Popen(
        [*command, "--agent", agent, "--out", str(out)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=answers_ctrl_c,
    ) as process:
        try:
            while not list(out.glob("*/workspace/turn-started")):
                assert process.poll() is None, process.communicate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=0.1)  # a pause between looks; the loop waits for the file
            process.send_signal(signal.SIGINT)
            _, stderr = process.communicate(timeout=120)
        finally:
            process.kill()
    assert process.returncode == Exit.INTERRUPTED, stderr
    assert "interrupted; what happened so far is in" in stderr
    folder = next(out.iterdir())
    assert (folder / "report.json").is_file()


def test_a_run_folder_deleted_while_running_ends_crashed_with_a_message(tmp_path: Path) -> None:
    """The run folder deleted mid-turn: exit 1, it crashed, its folder was deleted and the log went
    with it; no traceback. The agent waits in its workspace until the deletion reaches it."""
    out = tmp_path / "runs"
    agent = "command:touch turn-started; while [ -e turn-started ]; do sleep 0.2; done"
    with subprocess.Popen(
        [*CHANGEUP, "run", str(untimed(tmp_path)), "--quiet", "--agent", agent, "--out", str(out)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            while not list(out.glob("*/workspace/turn-started")):
                assert process.poll() is None, process.communicate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=0.1)  # a pause between looks; the loop waits for the file
            folder = next(out.iterdir())
            shutil.rmtree(folder)
            _, stderr = process.communicate(timeout=120)
        finally:
            process.kill()
    assert process.returncode == Exit.FAILED, stderr
    assert "Traceback" not in stderr
    assert f"error: the run crashed: its folder {folder} was deleted while it was going" in stderr
    assert "its event log went with it, so no report is left" in stderr


def test_a_grader_that_cannot_run_makes_the_run_invalid_never_a_zero(tmp_path: Path) -> None:
    """Hidden tests whose conftest breaks (pytest exits 4, before any test): the run is invalid,
    with the reason, exit 1, and no score, not a 0 for the agent."""
    root = untimed(tmp_path)
    (root / "tests" / "phase1" / "conftest.py").write_text('raise RuntimeError("the grader is broken")\n')
    done, _, report = run(root, "scripted", tmp_path / "runs")
    assert done.returncode == Exit.FAILED
    assert "error: the run is invalid: " in done.stderr
    assert report["run"]["status"] == "invalid"
    assert "the grader is broken" in report["run"]["detail"]
    assert report["score"]["total"] is None


def test_a_harness_that_cannot_start_is_an_invalid_grading(tmp_path: Path) -> None:
    """A grading environment without pytest: the harness cannot start, so the run is invalid
    (the grader's failure, said with its reason), and every verdict is void."""
    import anyio

    from orchestrator.challenge.loader import load_challenge
    from orchestrator.grading.testrun import PytestRunner
    from orchestrator.session.workspace import Workspace
    from orchestrator.system.venvs import Environment

    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    challenge = load_challenge(NORMALIZE_TAGS)
    workspace = Workspace.create(challenge.workspace, tmp_path / "workspace", tmp_path / "shadow.git")
    runner = PytestRunner(challenge, workspace, tmp_path / "scratch", environment=Environment(bare))

    async def grade() -> tuple[str, str, int]:
        result = await runner.run(await workspace.snapshot(), ["phase1"])
        return result.status, result.detail, result.phases[0].passed

    status, detail, passed = anyio.run(grade)
    assert status == "invalid"
    assert "the grader could not start" in detail
    assert "No module named 'pytest'" in detail
    assert passed == 0

"""A per-test timeout longer than half the test run's limit raises the limit: a hung test fails by
its own timeout, named, and the run's other tests still report (issue 26: SlopCodeBench's
``timeout: 300`` against a 2-minute run)."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from orchestrator.challenge.loader import load_challenge
from orchestrator.grading.testrun import PytestRunner
from orchestrator.log.verdicts import TestRun
from orchestrator.session.workspace import Workspace
from orchestrator.system.venvs import grading_environment
from tests.cli import REPO

NORMALIZE_TAGS = REPO / "challenges" / "normalize-tags"
HUNG = """\
import time


def test_hangs():
    time.sleep(600)
"""


def limited(tmp_path: Path, test_run: str, timeout: str) -> Path:
    """normalize-tags with ``limits.test_run`` and a per-test ``timeout`` of its testing."""
    root = Path(shutil.copytree(NORMALIZE_TAGS, tmp_path / "challenge"))
    yaml = root / "challenge.yaml"
    text = yaml.read_text().replace("    test_run: 2min\n", f"    test_run: {test_run}\n")
    yaml.write_text(text.replace("  testing:\n", f"  testing:\n    timeout: {timeout}\n", 1))
    return root


def test_the_limit_is_raised_to_twice_the_longest_per_test_timeout(tmp_path: Path) -> None:
    """300 s a test against a 2-minute run: the run may take 600 s; 10 s a test leaves it at 120 s."""
    assert load_challenge(limited(tmp_path / "a", "2min", "300s")).test_run_limit == 600
    assert load_challenge(limited(tmp_path / "b", "2min", "10s")).test_run_limit == 120


@pytest.mark.slow
def test_a_hung_test_fails_alone_by_its_timeout(tmp_path: Path) -> None:
    """A test that hangs, under a 20 s per-test timeout and a 15 s run limit: the run is ok (its limit
    is 40 s), the hung test failed "timed out after 20s", and phase 1's own tests passed."""
    root = limited(tmp_path, "15s", "20s")
    (root / "tests" / "phase1" / "test_hangs.py").write_text(HUNG)
    challenge = load_challenge(root)
    workspace = Workspace.create(challenge.reference / "phase1", tmp_path / "ws", tmp_path / "shadow.git")
    runner = PytestRunner(challenge, workspace, tmp_path / "scratch", environment=grading_environment([]))

    async def run() -> TestRun:
        return await runner.run(await workspace.snapshot(), ["phase1"])

    result = anyio.run(run)
    assert result.status == "ok", result.detail
    outcomes = {t.id: t for t in result.phases[0].tests}
    hung = outcomes.pop("phase1/test_hangs.py::test_hangs")
    assert hung.outcome == "failed"
    assert "timed out after 20s" in hung.detail
    assert all(t.outcome == "passed" for t in outcomes.values()), outcomes

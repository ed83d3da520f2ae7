"""A hidden pytest run that cannot start is *invalid* (the grader's failure), never a 0.

Real runs of the real harness in the real sandbox, on normalize-tags with a broken conftest
beside its phase 1 tests (issue 17: SlopCodeBench's conftest needs options that changeup's
fixed command line did not give).
"""

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

pytestmark = pytest.mark.slow

NORMALIZE_TAGS = REPO / "challenges" / "normalize-tags"

REQUIRED_OPTION = 'def pytest_addoption(parser):\n    parser.addoption("--entrypoint", required=True)\n'
CONFIGURE_RAISES = 'def pytest_configure(config):\n    raise RuntimeError("no --checkpoint given")\n'
SESSIONSTART_RAISES = 'def pytest_sessionstart(session):\n    raise RuntimeError("no --checkpoint given")\n'
NO_JUNIT = "def pytest_configure(config):\n    config.option.xmlpath = None\n"


def grade(tmp_path: Path, conftest: str, tags: str | None = None, isolation: str = "process") -> TestRun:
    """One real run of phase 1 with ``conftest`` beside its tests (and ``tags`` as tags.py), the
    workspace's code in its own process or in the tests' (``isolation``)."""
    root = tmp_path / "challenge"
    shutil.copytree(NORMALIZE_TAGS, root)
    spec = root / "challenge.yaml"
    spec.write_text(spec.read_text().replace("isolation: process", f"isolation: {isolation}"))
    (root / "tests" / "phase1" / "conftest.py").write_text(conftest)
    if tags is not None:
        (root / "workspace" / "tags.py").write_text(tags)
    challenge = load_challenge(root)
    workspace = Workspace.create(challenge.workspace, tmp_path / "ws", tmp_path / "shadow.git")
    runner = PytestRunner(challenge, workspace, tmp_path / "scratch", environment=grading_environment([]))

    async def run() -> TestRun:
        return await runner.run(await workspace.snapshot(), ["phase1"])

    return anyio.run(run)


@pytest.mark.parametrize(
    ("conftest", "said"),
    [
        pytest.param(REQUIRED_OPTION, "the following arguments are required: --entrypoint", id="exit-4"),
        pytest.param(CONFIGURE_RAISES, "no --checkpoint given", id="configure-exit-3"),
        pytest.param(SESSIONSTART_RAISES, "no --checkpoint given", id="sessionstart-exit-3"),
        pytest.param(NO_JUNIT, "not to write JUnit XML", id="no-junit"),
    ],
)
def test_a_harness_that_cannot_start_is_invalid_with_its_reason(
    tmp_path: Path, conftest: str, said: str
) -> None:
    """A conftest that stops pytest before collection (usage error, internal error) or turns
    JUnit off: the run is invalid, says why, and every verdict is void."""
    result = grade(tmp_path, conftest)
    assert result.status == "invalid", result.detail
    assert said in result.detail
    assert result.phases[0].passed == 0


def test_the_agents_code_ending_the_run_during_collection_stays_tampered(tmp_path: Path) -> None:
    """Once collection began the agent's code may have run: an abnormal end there is still
    judged fail-closed (tampered), not excused as the grader's failure. Isolated, the same code
    ends only its own process: the run is graded, its tests failed."""
    result = grade(tmp_path / "shared", "", tags="import os\nos._exit(3)\n", isolation="in-process")
    assert result.status == "tampered", result.detail
    isolated = grade(tmp_path / "isolated", "", tags="import os\nos._exit(3)\n")
    assert isolated.status == "ok", isolated.detail
    assert isolated.phases[0].passed == 0

"""``testing:``: a challenge's support folder, pytest ini and arguments, each phase's own
arguments, and per-test timeouts, in real hidden runs of the real harness (issue 17: SlopCodeBench's
conftest needs ``--entrypoint``/``--checkpoint`` and an ini of its own).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from orchestrator.challenge.loader import ChallengeError, load_challenge
from orchestrator.grading.seal import Seals
from orchestrator.grading.testrun import PytestRunner
from orchestrator.log.verdicts import TestRun
from orchestrator.session.workspace import Workspace
from orchestrator.system.venvs import grading_environment
from tests.cli import REPO

pytestmark = pytest.mark.slow

NORMALIZE_TAGS = REPO / "challenges" / "normalize-tags"

TESTING = """\
  testing:
    support: tests/support
    ini: tests/pytest.ini
    args: ["--entrypoint", "tags.py"]
    timeout: 60s
"""
PHASE1 = """\
    - id: phase1
      title: trim and drop empties
      testing:
        args: ["--checkpoint", "one"]
        timeout: 1s
"""
PHASE2 = """\
    - id: phase2
      title: drop duplicates too
      testing:
        args: ["--checkpoint", "two"]
"""
CONFTEST = """\
def pytest_addoption(parser):
    parser.addoption("--entrypoint", required=True)
    parser.addoption("--checkpoint", required=True)
"""
SHARED = """\
from pathlib import Path


def answer():
    return (Path(__file__).parent / "data" / "answer.txt").read_text().strip()
"""
OPTIONS_TEST = """\
import time


def test_options(request):
    assert request.config.getoption("--entrypoint") == "tags.py"
    assert request.config.getoption("--checkpoint") == {checkpoint!r}
    assert "core: a core case" in request.config.getini("markers")


def test_support_and_helpers_import():
    from shared import answer
    from helper_{phase} import NAME

    assert answer() == "42"
    assert NAME == {phase!r}


def test_slow():
    time.sleep({sleep})
"""


def challenge_with_options(tmp_path: Path) -> Path:
    """normalize-tags whose tests need an ini, challenge-wide and per-phase options."""
    root = tmp_path / "challenge"
    shutil.copytree(NORMALIZE_TAGS, root)
    yaml = root / "challenge.yaml"
    text = yaml.read_text()
    text = text.replace("    - id: phase1\n      title: trim and drop empties\n", PHASE1)
    text = text.replace("    - id: phase2\n      title: drop duplicates too\n", PHASE2)
    yaml.write_text(text.replace("\n  testing:\n", "\n" + TESTING, 1))
    (root / "tests" / "pytest.ini").write_text("[pytest]\nmarkers =\n    core: a core case\n")
    support = root / "tests" / "support"
    (support / "data").mkdir(parents=True)
    (support / "conftest.py").write_text(CONFTEST)  # one conftest, for every phase
    (support / "shared.py").write_text(SHARED)
    (support / "data" / "answer.txt").write_text("42\n")
    for phase, checkpoint in (("phase1", "one"), ("phase2", "two")):
        (root / "tests" / phase / f"helper_{phase}.py").write_text(f"NAME = {phase!r}\n")
        (root / "tests" / phase / "test_options.py").write_text(
            OPTIONS_TEST.format(checkpoint=checkpoint, sleep=3, phase=phase)
        )
    return root


def grade(tmp_path: Path, root: Path, *, changed: str = "") -> TestRun:
    """One real run of both phases on the starter, its hidden files sealed first (and then the
    challenge's file ``changed`` changed, when given)."""
    challenge = load_challenge(root)
    workspace = Workspace.create(challenge.workspace, tmp_path / "ws", tmp_path / "shadow.git")
    sealed = Seals.take(challenge, None).tests
    if changed:
        (root / changed).write_text((root / changed).read_text() + "\n# changed\n")
    runner = PytestRunner(
        challenge, workspace, tmp_path / "scratch", environment=grading_environment([]), sealed=sealed
    )

    async def run() -> TestRun:
        return await runner.run(await workspace.snapshot(), ["phase1", "phase2"])

    return anyio.run(run)


def test_ini_and_arguments_reach_each_phases_tests(tmp_path: Path) -> None:
    """The ini is honoured, the challenge's args reach every phase and each phase gets its own
    ``--checkpoint`` (phases with different args run in their own pytest process)."""
    result = grade(tmp_path, challenge_with_options(tmp_path))
    assert result.status == "ok", result.detail
    outcomes = {t.id: t for phase in result.phases for t in phase.tests}
    assert outcomes["phase1/test_options.py::test_options"].outcome == "passed"
    assert outcomes["phase2/test_options.py::test_options"].outcome == "passed", outcomes


def test_the_support_folder_and_helpers_beside_the_tests_import_in_every_phase(tmp_path: Path) -> None:
    """The support folder's conftest (the options above) applies to both phases, its module and
    its data/ are importable and readable, and a helper beside a phase's tests imports too."""
    result = grade(tmp_path, challenge_with_options(tmp_path))
    outcomes = {t.id: t for phase in result.phases for t in phase.tests}
    for phase in ("phase1", "phase2"):
        found = outcomes[f"{phase}/test_options.py::test_support_and_helpers_import"]
        assert found.outcome == "passed", found.detail


def test_a_missing_support_folder_is_a_load_error(tmp_path: Path) -> None:
    """``testing: support`` naming no folder: a load error that says so."""
    root = challenge_with_options(tmp_path)
    shutil.rmtree(root / "tests" / "support")
    with pytest.raises(ChallengeError, match="missing support folder tests/support/"):
        load_challenge(root)


def test_a_test_over_its_phases_timeout_fails_saying_so(tmp_path: Path) -> None:
    """phase1's 1s per-test timeout fails its 3s test, "timed out after 1s"; phase2 keeps the
    challenge's 60s and its 3s test passes."""
    result = grade(tmp_path, challenge_with_options(tmp_path))
    outcomes = {t.id: t for phase in result.phases for t in phase.tests}
    slow = outcomes["phase1/test_options.py::test_slow"]
    assert slow.outcome == "failed"
    assert "timed out after 1s" in slow.detail
    assert outcomes["phase2/test_options.py::test_slow"].outcome == "passed"


def test_a_missing_ini_is_a_load_error_naming_the_key(tmp_path: Path) -> None:
    """``testing: ini`` naming no file: the loader says which file, where, and what is missing."""
    root = challenge_with_options(tmp_path)
    (root / "tests" / "pytest.ini").unlink()
    with pytest.raises(ChallengeError) as caught:
        load_challenge(root)
    message = str(caught.value)
    assert "challenge.yaml:" in message
    assert "missing ini file tests/pytest.ini" in message


@pytest.mark.parametrize("changed", ["tests/support/shared.py", "tests/pytest.ini"])
def test_a_support_file_or_ini_changed_after_the_seal_is_tampering(tmp_path: Path, changed: str) -> None:
    """The support folder and the ini are sealed like each phase's tests: a change after the
    session started makes the run tampered, naming the file."""
    result = grade(tmp_path, challenge_with_options(tmp_path), changed=changed)
    assert result.status == "tampered"
    name = Path(changed).name
    assert f"hidden test file testing.support/{name} changed since the session started" in result.detail

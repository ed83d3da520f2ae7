"""Case-level test ids (issue 17): validation checks them against the collected listing, and
superseding one case retires that case only, in a real run."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from orchestrator.challenge.loader import load_challenge
from orchestrator.challenge.semantics import recheck_test_ids
from orchestrator.challenge.testids import list_tests
from orchestrator.grading.caseids import case_id_problems
from orchestrator.grading.testrun import PytestRunner
from orchestrator.log.verdicts import TestRun
from orchestrator.session.workspace import Workspace
from orchestrator.system.venvs import grading_environment
from tests.cli import REPO
from tests.orchestrator.test_i17_testing_options import challenge_with_options

pytestmark = pytest.mark.slow

CASES = """\
import pytest


@pytest.mark.parametrize("n", [1, 2], ids=["kept", "retired"])
def test_p(n):
    assert n == 1
"""


def _challenge(tmp_path: Path, supersedes: str, may_fail: str = "") -> Path:
    root = tmp_path / "challenge"
    shutil.copytree(REPO / "challenges" / "normalize-tags", root)
    (root / "tests" / "phase1" / "test_cases.py").write_text(CASES)
    yaml = root / "challenge.yaml"
    text = yaml.read_text().replace(
        "        - phase1/test_tags.py::test_keeps_duplicates\n",
        f"        - phase1/test_tags.py::test_keeps_duplicates\n        - {supersedes}\n",
    )
    if may_fail:
        knob = f"    reference_may_fail:\n      - {may_fail}\n"
        text = text.replace("  calibration:\n", "  calibration:\n" + knob)
    yaml.write_text(text)
    return root


def test_validation_knows_each_case_and_names_the_closest_for_an_unknown_one(tmp_path: Path) -> None:
    """Loading takes a case of a listed function on trust; the collected listing then accepts
    the real cases and rejects a misspelt one, pointing at the case meant."""
    root = _challenge(tmp_path, "phase1/test_cases.py::test_p[retired]", "phase1/test_cases.py::test_p[kept]")
    assert case_id_problems(load_challenge(root), root) == ([], [])
    shutil.rmtree(root)
    root = _challenge(tmp_path, "phase1/test_cases.py::test_p[retird]")
    problems, warnings = case_id_problems(load_challenge(root), root)
    assert warnings == []
    assert [p.message for p in problems] == [
        "no test 'phase1/test_cases.py::test_p[retird]' in phase1's hidden tests; "
        "did you mean 'phase1/test_cases.py::test_p[retired]'?"
    ]
    assert problems[0].file.endswith("challenge.yaml")


def _run(tmp_path: Path, root: Path, phases: list[str]) -> TestRun:
    challenge = load_challenge(root)
    folder = tmp_path / "-".join(phases)
    workspace = Workspace.create(challenge.workspace, folder / "ws", folder / "shadow.git")
    runner = PytestRunner(challenge, workspace, folder / "scratch", environment=grading_environment([]))

    async def run() -> TestRun:
        return await runner.run(await workspace.snapshot(), phases)

    return anyio.run(run)


def test_superseding_one_case_retires_that_case_only(tmp_path: Path) -> None:
    """Once phase 2 is unlocked its supersedes: retires test_p[retired] (which fails) and only it:
    test_p[kept] still runs and passes. Before, the case runs and fails."""
    root = _challenge(tmp_path, "phase1/test_cases.py::test_p[retired]")
    before = {t.id: t.outcome for t in _run(tmp_path, root, ["phase1"]).phases[0].tests}
    assert before["phase1/test_cases.py::test_p[kept]"] == "passed"
    assert before["phase1/test_cases.py::test_p[retired]"] == "failed"
    after = {t.id: t.outcome for t in _run(tmp_path, root, ["phase1", "phase2"]).phases[0].tests}
    assert after["phase1/test_cases.py::test_p[kept]"] == "passed"
    assert not any("retired" in i for i in after)


@pytest.mark.parametrize(
    ("later", "drops"), [("phase2/test_x.py::test_y", False), ("phase2/test_x.py::test_z", True)]
)
def test_a_later_file_listed_by_source_keeps_the_cases_of_its_functions(later: str, drops: bool) -> None:
    """Phase 1's file collected case by case, phase 2's same-path file by source (it would not
    collect): its function test_y keeps test_y[1]; a file without it drops the case."""
    challenge = load_challenge(REPO / "challenges" / "normalize-tags")
    listings = {p.id: list_tests(p.id, p.tests) for p in challenge.phases}  # the real tests, by source
    listings["phase1"]["test_x.py"] = ["phase1/test_x.py::test_y[1]"]
    listings["phase2"]["test_x.py"] = [later]
    file = challenge.root / "challenge.yaml"
    problems = recheck_test_ids(challenge, file, listings, frozenset({"phase1/test_x.py"}))
    assert [p.message for p in problems] == (
        [
            "phase2's test_x.py replaces phase1's but drops phase1/test_x.py::test_y[1]; "
            "list it under phase2's supersedes: or keep the test"
        ]
        if drops
        else []
    )


def test_where_collection_cannot_run_validation_warns_and_keeps_the_source_listing(tmp_path: Path) -> None:
    """Without the --entrypoint its support conftest requires, pytest will not start: the ids are
    left as loading checked them, and a warning says why."""
    root = challenge_with_options(tmp_path)
    yaml = root / "challenge.yaml"
    yaml.write_text(yaml.read_text().replace('args: ["--entrypoint", "tags.py"]', "args: []"))
    problems, warnings = case_id_problems(load_challenge(root), root)
    assert problems == []
    assert [w.message.split(" (", 1)[0] for w in warnings] == [
        "warning: the hidden tests could not be collected"
    ]
    assert "taken on trust" in warnings[0].message

"""Calibration knobs (issue 17): what the reference may fail and what the starter may pass,
named case by case, in a small real challenge calibrated for real."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from orchestrator.calibrate import Check, calibrate
from orchestrator.challenge.loader import load_challenge
from tests.cli import REPO

pytestmark = pytest.mark.slow

#: the reference keeps case, so it fails the case-folding case (only that one)
DEDUPE = """\
import pytest

from tags import normalize_tags


@pytest.mark.parametrize(
    ("raw", "want"), [(["a", "a"], ["a"]), pytest.param(["A", "a"], ["A"], id="casefold")]
)
def test_dedupe(raw, want):
    assert normalize_tags(raw) == want
"""
#: an error-style test: the starter's NotImplementedError passes it as well as the reference's TypeError
ERRORS = """\
import pytest

from tags import normalize_tags


def test_rejects_none():
    with pytest.raises(Exception):
        normalize_tags(None)
"""
KNOBS = """\
  calibration:
    reference_may_fail:
      - phase2/test_more.py::test_dedupe[casefold]
    starter_may_pass:
      - phase1/test_errors.py
"""


def _challenge(tmp_path: Path, *, knobs: bool) -> Path:
    root = tmp_path / ("with" if knobs else "without")
    shutil.copytree(REPO / "challenges" / "normalize-tags", root)
    yaml = root / "challenge.yaml"
    text = yaml.read_text()
    text = text[: text.index("  calibration:\n")]  # its broken variants are not what is tested here
    yaml.write_text(text + (KNOBS if knobs else ""))
    (root / "tests" / "phase2" / "test_more.py").write_text(DEDUPE)
    (root / "tests" / "phase1" / "test_errors.py").write_text(ERRORS)
    return root


def _rows(tmp_path: Path, root: Path) -> dict[str, Check]:
    checks = anyio.run(lambda: calibrate([load_challenge(root)], tmp_path / "out" / root.name, trials=0))
    return {c.run: c for c in checks}


def test_without_the_knobs_the_reference_and_starter_checks_fail(tmp_path: Path) -> None:
    rows = _rows(tmp_path, _challenge(tmp_path, knobs=False))
    assert not rows["reference"].ok
    assert "not full marks: phase2/test_more.py::test_dedupe[casefold]" in rows["reference"].got
    assert not rows["starter"].ok
    assert rows["starter"].got == "passes on the starter: phase1/test_errors.py::test_rejects_none"


def test_with_the_knobs_they_pass_and_the_table_still_shows_the_failing_case(tmp_path: Path) -> None:
    rows = _rows(tmp_path, _challenge(tmp_path, knobs=True))
    assert rows["reference"].ok, rows["reference"]
    assert "reference_may_fail" in rows["reference"].got
    assert "phase2/test_more.py::test_dedupe[casefold]" in rows["reference"].got
    assert rows["reference"].got.count("test_dedupe[") == 1  # its other case passed
    assert rows["starter"].ok, rows["starter"]


def test_ids_named_for_a_command_phase_are_checked_against_the_reference_runs_junit(tmp_path: Path) -> None:
    """A command phase's tests are known only once it ran: the reference run's JUnit has
    phase1/shell::exists, so that id is fine and a misspelt one fails calibration, by name."""
    root = tmp_path / "command"
    shutil.copytree(REPO / "challenges" / "normalize-tags", root)
    yaml = root / "challenge.yaml"
    supersedes = "      supersedes:\n        - phase1/test_tags.py::test_keeps_duplicates\n"
    text = yaml.read_text().replace(supersedes, "")  # phase 1's tests are no longer pytest's
    text = text.replace(
        "    - id: phase1\n      title: trim and drop empties\n",
        "    - id: phase1\n      title: trim and drop empties\n      command: sh $CHANGEUP_TESTS/check.sh\n"
        "      testing: {tools: [cat]}\n",
    )
    knobs = "    reference_may_fail:\n      - phase1/shell::exists\n      - phase1/shell::exits\n"
    yaml.write_text(text[: text.index("  calibration:\n")] + "  calibration:\n" + knobs)
    (root / "tests" / "phase1" / "check.sh").write_text(
        "cat > \"$CHANGEUP_JUNIT\" <<'XML'\n"
        '<testsuite><testcase classname="shell" name="exists"/></testsuite>\n'
        "XML\n"
    )
    reference = _rows(tmp_path, root)["reference"]
    assert not reference.ok
    assert reference.got == (
        "calibration.reference_may_fail names 'phase1/shell::exits', which the reference run's JUnit "
        "does not have; did you mean 'phase1/shell::exists'?"
    )

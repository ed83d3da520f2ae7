"""A checkpoint whose tests skip themselves from a later checkpoint on retires when that one
unlocks: the benchmark's pass policy counts only the current checkpoint's tests (issue 26)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from orchestrator.importers.phase_skips import PhaseSkip, skipped_from
from orchestrator.importers.slopcode import draft_slopcode
from tests.cli import changeup
from tests.importers.test_import import FIXTURES

LEDGER = FIXTURES / "slopcode" / "ledger"
#: The ledger's checkpoint 1, its tests saying they no longer apply from checkpoint 2 on.
SKIPPING_CHECKPOINT_1 = '''"""Checkpoint 1: the total, whole until checkpoint 2 changes the format."""

import pytest


def _new_format(checkpoint):
    return int(checkpoint.split("_")[-1]) >= 2


def test_total_of_whole_amounts(ledger, data, checkpoint):
    """The total of whole amounts."""
    if _new_format(checkpoint):
        pytest.skip("Checkpoint 2+ prints totals with two decimals.")
    result = ledger("total", str(data / "whole.txt"))
    assert result.stdout.strip() == "total 12"


@pytest.mark.error
def test_a_missing_file_exits_1(ledger, data, checkpoint):
    if _new_format(checkpoint):
        pytest.skip("Checkpoint 2+ prints totals with two decimals.")
    assert ledger("total", str(data / "nowhere.txt")).returncode == 1
'''
DIRECT = """
import pytest

class TestCore:
    def test_a(self, checkpoint_name):
        if int(checkpoint_name[-1]) > 2:
            pytest.skip()
"""
UNGUARDED = SKIPPING_CHECKPOINT_1 + "\n\ndef test_always(ledger):\n    assert ledger\n"
TWO_NUMBERS = SKIPPING_CHECKPOINT_1.replace(
    "def test_a_missing_file_exits_1(ledger, data, checkpoint):\n    if _new_format(checkpoint):",
    "def test_a_missing_file_exits_1(ledger, data, checkpoint):\n    if int(checkpoint[-1]) >= 3:",
)


def skipping_ledger(tmp_path: Path) -> Path:
    """A copy of the ledger whose checkpoint 1 tests skip themselves from checkpoint 2 on."""
    source = Path(shutil.copytree(LEDGER, tmp_path / "ledger"))
    (source / "tests" / "test_checkpoint_1.py").write_text(SKIPPING_CHECKPOINT_1)
    return source


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (SKIPPING_CHECKPOINT_1, PhaseSkip(2, "Checkpoint 2+ prints totals with two decimals.")),
        (DIRECT, PhaseSkip(3, "")),
        (UNGUARDED, None),
        (TWO_NUMBERS, None),
        ("def helper():\n    pass\n", None),
    ],
    ids=["through-a-helper", "direct-greater-than", "one-test-unguarded", "two-numbers", "no-tests"],
)
def test_the_checkpoint_every_test_skips_from(tmp_path: Path, text: str, found: PhaseSkip | None) -> None:
    """Found only when every test of the file starts with one guard comparing the checkpoint."""
    path = tmp_path / "test_checkpoint_1.py"
    path.write_text(text)
    assert skipped_from(path) == found


def test_the_import_retires_the_skipping_checkpoint_and_says_why(tmp_path: Path) -> None:
    """checkpoint_1 retires on the next unlock, before checkpoint_3's include_prior_tests: false would
    retire it, and the report quotes the tests' own reason."""
    draft = draft_slopcode(skipping_ledger(tmp_path))
    phases = draft.challenge["phases"]
    assert phases[0]["retire"] == "on-next-unlock"
    assert phases[1]["retire"] == "on-next-unlock"
    assert (
        "test_checkpoint_1.py skips every test from checkpoint 2 on ('Checkpoint 2+ prints totals with two "
        "decimals.') → checkpoint_1 retires when checkpoint_2 unlocks (retire:): scored on its last run "
        "before, as the benchmark's pass policy counts only the current checkpoint's tests" in draft.mapped
    )


@pytest.mark.slow
def test_the_reference_reaches_full_marks_with_the_skipping_checkpoint_retired(tmp_path: Path) -> None:
    """Imported and run through the CLI: checkpoint_1 keeps the verdict of its run while current
    (its tests would skip at checkpoint 2), and every checkpoint reaches full marks."""
    dest = tmp_path / "challenge"
    imported = changeup("import", "slopcode", str(skipping_ledger(tmp_path)), str(dest))
    assert imported.returncode == 0, imported.stdout + imported.stderr
    ran = changeup("run", str(dest), "--agent", "scripted", "--out", str(tmp_path / "runs"), timeout=600)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (report,) = (tmp_path / "runs").glob("*/report.json")
    phases = json.loads(report.read_text())["phases"]
    assert [p["full_marks"] for p in phases] == [True, True, True], [p["failing"] for p in phases]
    assert phases[0]["retirement"]["by"] == "checkpoint_2"
    assert phases[0]["scored"] == {"passed": 1, "total": 1}

"""Imported challenges run, replayed and calibrated, through the real CLI and the real sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import changeup
from tests.importers.test_import import FIXTURES, imported

pytestmark = pytest.mark.slow

LEDGER = FIXTURES / "slopcode" / "ledger"

#: A reference for the SaotriBench fixture, written by hand as its import report says to.
TIDY = {
    "phase_0": "def tidy(words):\n    return [w.lower() for w in words]\n",
    "phase_1": "def tidy(words):\n    return [w.strip().lower() for w in words]\n",
    "phase_2": "def tidy(words):\n    return [w.strip().lower() for w in words if w.strip()]\n",
}


def calibrated(dest: Path, out: Path) -> str:
    """``changeup calibrate`` with no extra reference runs; its output, after asserting it passed."""
    result = changeup("calibrate", str(dest), "--trials", "0", "--out", str(out), timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_slopcode_fixture_calibrates_as_imported(tmp_path: Path) -> None:
    """The SlopCodeBench problem, imported with no hand patch: the reference reaches full marks on
    its core policy with the pass triggers firing, the starter fails all but its error tests, and
    no impostor is planned (its tests reach the program only as a child process), saying why."""
    dest = tmp_path / "wordstat"
    assert imported("slopcode", dest).returncode == 0
    output = calibrated(dest, tmp_path / "runs")
    assert "ok wordstat reference: 100%, fired checkpoint_1_passed, checkpoint_2_passed" in output
    assert "ok wordstat impostors: not planned: testing.isolation is subprocess" in output


def test_slopcode_checkpoints_that_branch_on_the_current_one_and_retire_calibrate(tmp_path: Path) -> None:
    """ledger's checkpoint 1 test expects the format of the checkpoint being evaluated, and
    checkpoint 3 leaves the earlier tests out: imported, the reference reaches full marks (each
    earlier checkpoint told the current one, then retired and scored on its last run) and
    calibrates; the report says which checkpoints retired, and why."""
    dest = tmp_path / "ledger"
    assert imported("slopcode", dest, LEDGER).returncode == 0
    output = calibrated(dest, tmp_path / "runs")
    assert "ok ledger reference: 100%, fired checkpoint_1_passed, checkpoint_2_passed" in output
    assert "ok ledger starter: every changed-requirement test fails" in output
    (report,) = (tmp_path / "runs").glob("ledger-*-scripted-reference/report.json")
    phases = {p["id"]: p for p in json.loads(report.read_text())["phases"]}
    assert phases["checkpoint_1"]["retirement"]["by"] == "checkpoint_3"
    assert phases["checkpoint_2"]["retirement"]["rule"] == "on-next-unlock"
    assert all(p["score"] == 1.0 for p in phases.values())
    assert (
        "checkpoint_1: its tests stopped running when checkpoint_3 unlocked"
        in report.with_name("report.md").read_text()
    )


def test_slopcode_fixture_runs_to_full_marks_and_replays(tmp_path: Path) -> None:
    """The scripted reference, one checkpoint per turn, reaches full marks under the core policy
    with every checkpoint passed on its turn, and replay re-decides the same triggers."""
    dest = tmp_path / "wordstat"
    assert imported("slopcode", dest).returncode == 0
    ran = changeup(
        "run", str(dest), "--agent", "scripted", "--out", str(tmp_path / "runs"), "-q", timeout=900
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "score 100% — FULL SUCCESS" in ran.stdout
    run = next(
        line.split(": ", 1)[1].strip() for line in ran.stdout.splitlines() if line.startswith("run folder:")
    )
    replayed = changeup("replay", run)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "agrees:" in replayed.stdout


def test_saotri_fixture_calibrates_once_given_a_reference(tmp_path: Path) -> None:
    """With the reference the report asks for, the generated tests pass calibration: the reference
    reaches full marks, the empty solution.py fails every test, the impostors fall short."""
    dest = tmp_path / "tidy"
    assert imported("saotri", dest).returncode == 0
    for phase, text in TIDY.items():
        (dest / "solutions" / "reference" / phase).mkdir(parents=True)
        (dest / "solutions" / "reference" / phase / "solution.py").write_text(text)
    output = calibrated(dest, tmp_path / "runs")
    assert "reference: 100%, fired phase_0_passed, phase_1_passed" in output
    assert "starter: every changed-requirement test fails" in output


#: A reference for the Harbor fixture: /app after each step's solve.sh, written as files.
GREET = {
    "step_01_greet": 'print("Hello, world!")\n',
    "step_02_name": (
        'import sys\nname = sys.argv[1] if len(sys.argv) > 1 else "world"\nprint(f"Hello, {name}!")\n'
    ),
    "step_03_shout": (
        "import sys\nshout = sys.argv[1:2] == ['--shout']\nnames = sys.argv[2:] if shout else sys.argv[1:]\n"
        "text = f'Hello, {names[0] if names else \"world\"}!'\nprint(text.upper() if shout else text)\n"
    ),
}


def test_harbor_fixture_calibrates_once_given_a_reference(tmp_path: Path) -> None:
    """With each step's solve.sh result written as files, the steps' own test.sh scripts grade it."""
    dest = tmp_path / "greeter"
    assert imported("harbor", dest).returncode == 0
    for phase, text in GREET.items():
        (dest / "solutions" / "reference" / phase).mkdir(parents=True)
        (dest / "solutions" / "reference" / phase / "greet.py").write_text(text)
    output = calibrated(dest, tmp_path / "runs")
    assert "reference: 100%" in output

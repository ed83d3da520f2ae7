"""Calibration and prohibited effects: a reference whose code has one it prohibits is no reference."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from orchestrator.calibrate import calibrate
from orchestrator.challenge.loader import load_challenge
from tests.cli import REPO

pytestmark = pytest.mark.slow

#: Appended to export-time's reference: the same result, and a note left in HOME on every call.
LEAVES_A_NOTE = """

_format = format_export_time


def format_export_time(value: datetime) -> str:
    import os

    with open(os.path.expanduser("~/.export-time-note"), "w") as note:
        note.write("called")
    return _format(value)
"""


def test_a_reference_that_writes_outside_the_workspace_fails_calibration(tmp_path: Path) -> None:
    """Full marks and the triggers as designed are not enough: the reference's write to HOME,
    which export-time prohibits, fails its check, named; the shipped reference passes it."""
    root = tmp_path / "export-time"
    shutil.copytree(REPO / "challenges" / "export-time", root)
    solution = root / "solutions" / "reference" / "phase2" / "export_time.py"
    solution.write_text(solution.read_text() + LEAVES_A_NOTE)
    challenges = [load_challenge(REPO / "challenges" / "export-time"), load_challenge(root)]
    checks = anyio.run(lambda: calibrate(challenges, tmp_path / "out", trials=0))
    shipped, changed = (
        next(c for c in checks[i * len(checks) // 2 :] if c.run == "reference") for i in (0, 1)
    )
    assert shipped.ok, shipped
    assert not changed.ok
    assert "prohibited effect writes-outside-workspace: open " in changed.got
    assert "/.export-time-note for writing" in changed.got

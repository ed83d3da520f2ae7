"""A challenge whose hidden tests run bash and git and read time-zone data, through the real CLI.

``tests/fixtures/tools/clock`` declares them (``testing: tools: [bash]``, ``data: [zoneinfo]``,
and phase 2 adds ``git``): it validates without a warning and calibrates. Copies with the
declarations taken out get validation's warnings at each use, a run whose failing tests say what
they lacked, and a calibration that fails naming it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from orchestrator.grading.sandbox import detect_sandbox
from tests.cli import REPO, changeup

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        detect_sandbox().kind != "bubblewrap",
        reason=f"LOUD SKIP: no bubblewrap sandbox here ({detect_sandbox().reason})",
    ),
]

CLOCK = REPO / "tests" / "fixtures" / "tools" / "clock"
CHALLENGE_LEVEL = "  testing:\n    tools: [bash]\n    data: [zoneinfo]\n"
PHASE_LEVEL = "      testing:\n        tools: [git]\n"


def without(tmp_path: Path, name: str, *declarations: str) -> Path:
    """A copy of the clock challenge named ``name`` with ``declarations`` taken out of its YAML."""
    copy = tmp_path / name
    shutil.copytree(CLOCK, copy)
    text = (copy / "challenge.yaml").read_text()
    for declaration in declarations:
        assert declaration in text
        text = text.replace(declaration, "")
    (copy / "challenge.yaml").write_text(text.replace("id: tool-clock", f"id: {name}"))
    return copy


def test_validation_warns_at_each_undeclared_use(tmp_path: Path) -> None:
    """Declared: valid, no warning. Undeclared: still valid, with a warning at each test file's
    use that names the tool or data and the line to add."""
    declared = changeup("validate", str(CLOCK))
    assert declared.returncode == 0, declared.stdout + declared.stderr
    assert "warning" not in declared.stdout
    bare = without(tmp_path, "bare-clock", CHALLENGE_LEVEL, PHASE_LEVEL)
    warned = changeup("validate", str(bare))
    assert warned.returncode == 0, warned.stdout + warned.stderr
    lines = [line for line in warned.stdout.splitlines() if "warning" in line]
    phase1 = f"{bare}/tests/phase1/test_local_time.py"
    assert lines == [
        f"{phase1}:19:53: warning: reads the data zoneinfo, which phase1's tests do not declare: their "
        "private root will not have it; add `data: [zoneinfo]` under testing: (the challenge's, or phase1's)",
        f"{phase1}:27:12: warning: runs bash, which phase1's tests do not declare: their private root will "
        "not have it; add `tools: [bash]` under testing: (the challenge's, or phase1's)",
        f"{bare}/tests/phase2/test_last_change.py:12:5: warning: runs git, which phase2's tests do not "
        "declare: their private root will not have it; add `tools: [git]` under testing: (the challenge's, "
        "or phase2's)",
    ]


def test_a_run_without_the_declarations_says_what_its_tests_lacked(tmp_path: Path) -> None:
    """The reference run: phase 1's tests fail for want of bash and the time-zone database, and
    each failing test, the report and the grading detail say so instead of a bare ENOENT."""
    bare = without(tmp_path, "bare-clock", CHALLENGE_LEVEL, PHASE_LEVEL)
    ran = changeup(
        "run", str(bare), "--agent", "scripted", "--out", str(tmp_path / "runs"), "-q", timeout=600
    )
    assert "score 0% — not a full success" in ran.stdout, ran.stdout + ran.stderr
    (folder,) = (tmp_path / "runs").iterdir()
    report = json.loads((folder / "report.json").read_text())
    failing = {t["id"].rsplit("::", 1)[1]: t["detail"] for t in report["phases"][0]["failing"]}
    assert failing["test_the_bash_script_prints_it"] == (
        "needs the tool bash (not in testing: tools): "
        "FileNotFoundError: [Errno 2] No such file or directory: 'bash'"
    )
    assert failing["test_summer_time_in_paris"].startswith("needs the data zoneinfo (not in testing: data): ")
    assert report["score"]["grading_detail"] == (
        "the tests failed for want of the data zoneinfo, the tool bash, which the challenge does not declare "
        "(testing: tools: [bash]; testing: data: [zoneinfo])"
    )
    assert "needs the tool bash (not in testing: tools)" in (folder / "report.md").read_text()


def test_calibration_passes_declared_and_names_the_tool_the_reference_lacks(tmp_path: Path) -> None:
    """The declared clock calibrates (its reference reaches full marks in a root holding bash, git
    and the tz database); without phase 2's git, the reference check fails naming git."""
    no_git = without(tmp_path, "clock-without-git", PHASE_LEVEL)
    out = tmp_path / "calibration"
    result = changeup("calibrate", str(CLOCK), str(no_git), "--trials", "0", "--out", str(out), timeout=900)
    assert result.returncode != 0
    rows = {(c["challenge"], c["run"]): c for c in json.loads((out / "calibration.json").read_text())}
    assert all(c["ok"] for (challenge, _), c in rows.items() if challenge == "tool-clock"), rows
    assert rows[("tool-clock", "reference")]["got"] == "100%, fired history"
    missed = rows[("clock-without-git", "reference")]
    assert not missed["ok"]
    assert missed["got"].endswith("its tests met the tool git, which the challenge does not declare")

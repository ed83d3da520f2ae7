"""A Harbor task whose ``test.sh`` needs bash and one more tool (``diff``), through the real CLI.

``tests/fixtures/import/harbor/sorter`` is one step; its verifier compares with ``diff`` and then
runs pytest (the grading environment's, as the verifier's user, whatever user changeup is). Given
its reference as files, it calibrates once ``diff`` is declared; without it, calibration fails
naming ``diff``, and the failed reward keeps what the verifier printed.
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

SORTER = REPO / "tests" / "fixtures" / "import" / "harbor" / "sorter"
#: /app after solve.sh ran, written as files.
REFERENCE = 'import sys\nprint("\\n".join(sorted({line.strip() for line in sys.stdin if line.strip()})))\n'


def test_a_harbor_verifier_needing_bash_and_diff_calibrates_once_both_are_declared(tmp_path: Path) -> None:
    """Imported, with the reference written as files: the importer declares bash and diff (found in
    test.sh), the reference reaches full marks and the empty workspace fails; without diff, the
    reference check names it and its failed reward shows the verifier's own words."""
    declared = tmp_path / "sorter"
    assert changeup("import", "harbor", str(SORTER), str(declared)).returncode == 0
    (declared / "solutions" / "reference" / "sorter").mkdir(parents=True)
    (declared / "solutions" / "reference" / "sorter" / "sort_words.py").write_text(REFERENCE)
    yaml = (declared / "challenge.yaml").read_text()
    assert "  testing:\n    tools:\n    - bash\n    - diff\n" in yaml  # what the importer declares
    undeclared = tmp_path / "sorter-without-diff"
    shutil.copytree(declared, undeclared)
    without = yaml.replace("id: sorter\n", "id: sorter-without-diff\n", 1).replace("    - diff\n", "", 1)
    (undeclared / "challenge.yaml").write_text(without)
    out = tmp_path / "calibration"
    result = changeup(
        "calibrate", str(declared), str(undeclared), "--trials", "0", "--out", str(out), timeout=900
    )
    rows = {(c["challenge"], c["run"]): c for c in json.loads((out / "calibration.json").read_text())}
    assert rows[("sorter", "reference")]["got"] == "100%, fired nothing", result.stdout
    assert rows[("sorter", "starter")]["ok"]
    missed = rows[("sorter-without-diff", "reference")]
    assert missed["got"] == (
        "not full marks: sorter/verifier::reward; "
        "its tests met the tool diff, which the challenge does not declare"
    )
    report = json.loads((Path(missed["folder"]) / "report.json").read_text())
    (failing,) = report["phases"][0]["failing"]
    assert failing["detail"].startswith("needs the tool diff (not in testing: tools): reward 0 (reward.txt;")
    assert "its output ended:\n/tests/test.sh: line 6: diff: command not found" in failing["detail"]

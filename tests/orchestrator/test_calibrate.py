"""Calibration: the gate that says a challenge's graders can be trusted."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import anyio
import pytest

from orchestrator.calibrate import calibrate, exact_match
from orchestrator.challenge.loader import load_challenge
from tests.cli import REPO, in_process


def test_exact_match() -> None:
    """Declared ids must each catch a failure, and every failure must be declared."""
    failing = ["p/t.py::a", "p/t.py::b[1]", "p/t.py::b[2]"]
    assert exact_match(["p/t.py::a", "p/t.py::b"], failing) == ([], [])
    assert exact_match(["p/t.py"], failing) == ([], [])
    assert exact_match(["p/t.py::a"], failing) == ([], ["p/t.py::b"])
    assert exact_match(["p/t.py::a", "p/t.py::c"], failing[:1]) == (["p/t.py::c"], [])


@pytest.mark.slow
def test_calibration_passes_for_a_sound_challenge_and_catches_a_wrong_declaration(tmp_path: Path) -> None:
    """normalize-tags calibrates; the same challenge with a mis-declared variant does not."""
    root = tmp_path / "normalize-tags"
    shutil.copytree(REPO / "challenges" / "normalize-tags", root)
    text = (root / "challenge.yaml").read_text()
    wrong = text.replace(
        "          - phase2/test_tags_dedupe.py::test_later_duplicate_dropped\n",
        "          - phase2/test_tags_dedupe.py::test_case_is_kept\n",
    )
    assert wrong != text
    (root / "challenge.yaml").write_text(wrong)
    challenges = [load_challenge(REPO / "challenges" / "normalize-tags"), load_challenge(root)]
    checks = anyio.run(lambda: calibrate(challenges, tmp_path / "out", trials=1))
    sound = list(checks[: len(checks) // 2])
    assert all(c.ok for c in sound), [c for c in sound if not c.ok]
    miss = next(c for c in checks[len(checks) // 2 :] if c.run == "broken/duplicates-kept")
    assert not miss.ok
    assert "did not fail phase2/test_tags_dedupe.py::test_case_is_kept" in miss.got
    assert "also failed phase2/test_tags_dedupe.py::test_later_duplicate_dropped" in miss.got
    assert (tmp_path / "out" / "calibration.json").is_file()


@pytest.mark.slow
def test_an_impostor_with_full_marks_fails_calibration_unless_isolated(tmp_path: Path) -> None:
    """Hidden tests that compare results loosely, where the test process's own equality check does
    not look (inside a generator), let a double through in-process, and calibration says so; the
    same loose tests with the agent's code in a process of its own catch it (a ``str`` subclass
    crosses as a handle, which equals only itself)."""
    copies = []
    for isolation in ("in-process", "process"):
        root = tmp_path / isolation / "export-time"
        shutil.copytree(REPO / "challenges" / "export-time", root)
        spec = root / "challenge.yaml"
        spec.write_text(spec.read_text().replace("isolation: process", f"isolation: {isolation}"))
        for test_file in (root / "tests").rglob("test_*.py"):
            text = test_file.read_text()
            loose = text.replace("exactly(format_export_time(", "(format_export_time(").replace(
                "assert type(format_export_time(value)) is str",
                "assert isinstance(format_export_time(value), str)",
            )
            # An assert's own == is checked for a lying operand; one inside a generator is not.
            generator = r"assert all(got == \1 for got in [format_export_time(value)])"
            loose = re.sub(r'assert \(format_export_time\(value\)\) == ("[^"]*")', generator, loose)
            test_file.write_text(loose)
        copies.append(load_challenge(root))
    checks = anyio.run(lambda: calibrate(copies, tmp_path / "out", trials=0))
    shared, apart = checks[: len(checks) // 2], checks[len(checks) // 2 :]
    impostors = {c.run: c for c in shared if c.run.startswith("impostor/")}
    assert set(impostors) == {"impostor/always-equal", "impostor/equal-subclass"}
    assert impostors["impostor/always-equal"].ok  # isinstance(..., str) still catches a plain double
    caught = impostors["impostor/equal-subclass"]
    assert not caught.ok
    assert "full marks with doubles for results" in caught.got
    assert all(c.ok for c in shared if not c.run.startswith("impostor/")), [c for c in shared if not c.ok]
    assert all(c.ok for c in apart), [c for c in apart if not c.ok]
    said = {c.run: c.got for c in checks if c.run == "isolation"}
    assert [c.got.split(":")[0] for c in checks if c.run == "isolation"] == ["in-process", "isolated"], said


def test_a_challenge_whose_toolchain_is_missing_is_skipped_loudly(tmp_path: Path) -> None:
    """Without go on PATH, go-byte-sizes is not calibrated and not passed in silence: one row,
    marked skipped, names the missing tool, and the summary names the challenge; no run is made."""
    out = tmp_path / "out"
    result = in_process(
        "calibrate",
        str(REPO / "challenges" / "go-byte-sizes"),
        "--out",
        str(out),
        env={"PATH": str(tmp_path)},
    )
    assert result.exit_code == 0, result.output
    assert re.search(r"SKIPPED go-byte-sizes toolchain: SKIPPED, not calibrated: .*'go'", result.output)
    assert "SKIPPED, not calibrated (this machine lacks the tools their tests declare): go-byte-sizes" in (
        " ".join(result.output.split())
    )
    (row,) = json.loads((out / "calibration.json").read_text())
    assert row["skipped"]
    assert row["run"] == "toolchain"
    assert not [p for p in out.iterdir() if p.is_dir()]  # no run folder

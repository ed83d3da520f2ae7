"""Canaries always run: no deselected id (a superseded file or test) is ever a prefix of theirs."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.grading.canaries import plant_canaries

#: Two phase folders as a run copies them; phase 2 supersedes one whole file of phase 1 and a
#: test whose name begins many others (pytest deselects by prefix).
PASS = "():\n    assert True\n\n"
SUITE = {
    "p1_x/test_notify.py": f"def test_notify_sends{PASS}def test_notify_off{PASS}",
    "p1_x/test_posts.py": f"def test_posts_list{PASS}def test_posts{PASS}",
    "p2_y/test_removed.py": f"def test_removed_notify{PASS}def test_posts_still{PASS}",
}
DESELECT = ["p1_x/test_notify.py", "p1_x/test_posts.py::test_posts"]


def suite(root: Path) -> Path:
    """The suite above, written under ``root``."""
    for name, text in SUITE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_no_canary_is_ever_named_into_a_deselect(tmp_path: Path) -> None:
    """Over many draws, neither canary lands in a deselected file or under a deselected prefix."""
    template = suite(tmp_path / "template")
    for seed in range(300):
        hidden = tmp_path / f"run{seed}"
        shutil.copytree(template, hidden)
        canaries = plant_canaries(hidden, ["p1_x", "p2_y"], DESELECT, random.Random(seed))
        for canary in canaries.ids():
            assert not canary.startswith(tuple(DESELECT)), (seed, canary)
        shutil.rmtree(hidden)


@pytest.mark.parametrize("seed", range(4))
def test_pytest_collects_both_canaries_under_the_deselects(tmp_path: Path, seed: int) -> None:
    """Checked against pytest itself: with the run's deselects, both canaries are collected."""
    hidden = suite(tmp_path)
    canaries = plant_canaries(hidden, ["p1_x", "p2_y"], DESELECT, random.Random(seed))
    listed = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-c", "/dev/null"]
        + [f"--rootdir={hidden}", "--import-mode=importlib"]
        + [f"--deselect={d}" for d in DESELECT]
        + [str(hidden / "p1_x"), str(hidden / "p2_y")],
        cwd=hidden,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.splitlines()
    assert set(canaries.ids()) <= set(listed), listed
    assert not any(test.startswith(tuple(DESELECT)) for test in listed)  # the deselects did work

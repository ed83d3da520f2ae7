"""A plain install runs a challenge: no test extras, no editable checkout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli import REPO

pytestmark = pytest.mark.slow


# A fresh venv, a pip install from the registry and a grading environment built from nothing:
# minutes on a loaded machine, so more room than the suite's 120 s hang guard.
@pytest.mark.timeout(900)
def test_a_plain_pip_install_runs_a_challenge_to_full_marks(tmp_path: Path) -> None:
    """``pip install .`` into a fresh venv: every subpackage is there, pytest comes with it, and
    the scripted reference of a challenge scores full marks on a grading environment of its own."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    install = subprocess.run([*pip, str(REPO)], capture_output=True, text=True, timeout=600, check=False)
    assert install.returncode == 0, install.stderr[-3000:]
    command = [
        "run",
        str(REPO / "challenges" / "export-time"),
        "--agent",
        "scripted",
        "--out",
        str(tmp_path / "runs"),
    ]
    done = subprocess.run(
        [str(venv / "bin" / "changeup"), *command, "-q"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CHANGEUP_CACHE": str(tmp_path / "cache")},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(next((tmp_path / "runs").iterdir()).joinpath("report.json").read_text())
    assert report["score"]["full_success"], report["score"]
    assert report["score"]["grading_status"] == "ok"

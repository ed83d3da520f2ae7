"""Fixtures the end-to-end tests share."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import REPO, changeup


@pytest.fixture(scope="session")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real run of export-time with the reference (a challenge with no ``scoring:``), for
    tests that only read it: copy it before changing anything."""
    out = tmp_path_factory.mktemp("runs")
    done = changeup("run", "challenges/export-time", "--out", str(out), "--quiet", cwd=REPO)
    assert done.returncode == 0, done.stderr
    return next(out.iterdir())

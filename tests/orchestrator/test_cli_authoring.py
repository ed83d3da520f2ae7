"""The authoring commands: new, validate, schema, and help."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from orchestrator.cli import cli
from orchestrator.scaffold import SCAFFOLDS


def pytest_on(workspace: Path, tests: Path) -> subprocess.CompletedProcess[str]:
    """Run real pytest on ``tests`` against ``workspace``."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)],
        cwd=workspace,
        env={"PYTHONPATH": str(workspace), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("pattern", sorted(SCAFFOLDS))
def test_new_scaffold_validates_and_its_reference_passes(pattern: str, tmp_path: Path) -> None:
    """A scaffold validates; its starter fails phase 1; its reference passes both phases."""
    target = tmp_path / f"my-{pattern}"
    runner = CliRunner()
    made = runner.invoke(cli, ["new", str(target), "--pattern", pattern])
    assert made.exit_code == 0, made.output
    checked = runner.invoke(cli, ["validate", str(target)])
    assert checked.exit_code == 0, checked.output
    work = tmp_path / "work"
    shutil.copytree(target / "workspace", work)
    assert pytest_on(work, target / "tests" / "phase1").returncode == 1
    shutil.copytree(target / "solutions/reference/phase1", work, dirs_exist_ok=True)
    assert pytest_on(work, target / "tests" / "phase1").returncode == 0
    shutil.copytree(target / "solutions/reference/phase2", work, dirs_exist_ok=True)
    assert pytest_on(work, target / "tests" / "phase2").returncode == 0


def test_new_refuses_a_non_empty_folder(tmp_path: Path) -> None:
    """Scaffolding never overwrites an author's files."""
    (tmp_path / "keep.txt").write_text("mine")
    result = CliRunner().invoke(cli, ["new", str(tmp_path), "--pattern", "pivot"])
    assert result.exit_code == 1
    assert "exists and is not empty" in result.output


def test_new_rejects_unknown_pattern(tmp_path: Path) -> None:
    """The pattern must be one of the four."""
    result = CliRunner().invoke(cli, ["new", str(tmp_path / "x"), "--pattern", "twist"])
    assert result.exit_code == 2
    assert "contradiction" in result.output


def test_help_teaches_the_workflow() -> None:
    """Top-level help shows how to write, check and complete challenges."""
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for command in ("changeup new", "changeup validate", "changeup schema"):
        assert command in result.output


def test_validate_mixed_paths_reports_ok_and_problems(tmp_path: Path) -> None:
    """Valid challenges are confirmed on stderr; problems go to stdout; exit 1 if any."""
    good = tmp_path / "good"
    CliRunner().invoke(cli, ["new", str(good), "--pattern", "retraction"])
    result = CliRunner().invoke(cli, ["validate", str(good), str(tmp_path / "missing")])
    assert result.exit_code == 1
    assert f"ok {good}: good, 2 phases, 2 triggers" in result.output
    assert "missing/challenge.yaml:1:1: no such challenge" in result.output

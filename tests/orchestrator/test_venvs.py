"""Grading environments: built from changeup's own pytest, read-only, sealed over every file."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from orchestrator.system.venvs import (
    agent_environment,
    check_seal,
    grading_environment,
    seal_of,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache of environments of this test's own."""
    monkeypatch.setenv("CHANGEUP_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_grading_environment_runs_pytest_and_is_apart_from_the_agents(cache: Path) -> None:
    """pytest comes from changeup's installation; the agent's environment is another folder."""
    grading, agent = grading_environment([]), agent_environment([])
    assert grading.prefix != agent.prefix
    assert grading.prefix.parent.name == "grading"
    assert agent.prefix.parent.name == "agent"
    done = subprocess.run(
        [grading.python, "-I", "-c", "import pytest, sys; print(pytest.__version__, sys.prefix)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split()[1] == str(grading.prefix)  # the venv's own prefix
    assert (agent.bin / "pytest").is_file()
    assert (agent.bin / "pip").exists()
    assert check_seal(grading.prefix) == []
    assert grading_environment([]).prefix == grading.prefix  # built once, then reused


def test_the_grading_environment_is_read_only(cache: Path) -> None:
    """No file or folder of it can be written by anyone but its builder."""
    prefix = grading_environment([]).prefix
    for root, dirs, files in os.walk(prefix):
        for name in dirs + files:
            path = Path(root, name)
            if not path.is_symlink():
                assert path.stat().st_mode & 0o222 == 0, path


@pytest.mark.parametrize("change", ["a .pth added", "a package removed", "a file changed", "a touch"])
def test_the_seal_covers_every_file(cache: Path, change: str) -> None:
    """Adding a .pth, removing a package or changing a byte breaks the seal; a touch that leaves
    the contents as they were does not (the change time moved, the digest did not)."""
    prefix = grading_environment([]).prefix
    digest = seal_of(prefix)
    site = next(prefix.glob("lib/python*/site-packages"))
    site.chmod(0o755)
    if change == "a .pth added":
        (site / "evil.pth").write_text("import os\n")
    elif change == "a package removed":
        iniconfig = site / "iniconfig"
        for path in (iniconfig, *iniconfig.rglob("*")):
            path.chmod(0o755)
        shutil.rmtree(iniconfig)
    elif change == "a file changed":
        target = site / "pytest" / "__init__.py"
        target.chmod(0o644)
        target.write_text(target.read_text() + "\n# changed\n")
    else:
        os.utime(site / "pytest" / "__init__.py")
    site.chmod(0o555)
    problems = check_seal(prefix)
    if change == "a touch":
        assert problems == []
    else:
        assert problems == [f"the grading environment {prefix.name} changed since it was sealed"]
    assert seal_of(prefix) == digest  # the seal itself is what it was

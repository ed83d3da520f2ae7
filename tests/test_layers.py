"""The import contracts of ``make lint`` (``.importlinter``, docs/architecture.md) fail on a back-arrow.

Each test copies the two packages and the contracts into a temporary folder, adds one module
that imports upward, and runs ``lint-imports`` there: the copy without it keeps every contract
(so the copy is what is checked), and each back-arrow breaks the contract that forbids it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli import REPO

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

#: A module that imports upward, where it goes, and the contract it must break.
BACK_ARROWS = [
    pytest.param(
        "orchestrator/grading/backarrow.py",
        "from orchestrator.agents import scripted\n",
        "grading, the trust boundary, knows no agent",
        id="grading-imports-an-agent",
    ),
    pytest.param(
        "orchestrator/log/backarrow.py",
        "def late() -> None:\n    import orchestrator.present.cli  # noqa: F401\n",
        "orchestrator's layers import only down",
        id="records-import-the-cli-inside-a-function",
    ),
    pytest.param(
        "orchestrator/session/backarrow.py",
        "from orchestrator.scoring import report\n",
        "orchestrator's layers import only down",
        id="session-imports-scoring",
    ),
    pytest.param(
        "orchestrator/render/backarrow.py",
        "from orchestrator.grading import policy\n",
        "renderers read records",
        id="a-renderer-imports-grading",
    ),
    pytest.param(
        "triggers/backarrow.py",
        "from orchestrator.challenge import model\n",
        "triggers, the pure core, imports nothing of orchestrator",
        id="triggers-imports-orchestrator",
    ),
]


def _copy(tmp_path: Path) -> Path:
    """The packages and the contracts, as they are, in ``tmp_path/tree``."""
    tree = tmp_path / "tree"
    for package in ("triggers", "orchestrator"):
        shutil.copytree(REPO / package, tree / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / ".importlinter", tree / ".importlinter")
    return tree


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the copy: its packages first on the path, before the installed ones."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=tree, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow
def test_the_tree_keeps_every_contract(tmp_path: Path) -> None:
    """The copy as it is keeps every contract, and none is kept by ignoring an import."""
    result = _lint(_copy(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout
    assert "ignored" not in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize(("path", "source", "contract"), BACK_ARROWS)
def test_a_back_arrow_breaks_its_contract(tmp_path: Path, path: str, source: str, contract: str) -> None:
    """One upward import (at the top of a module or inside a function) fails ``lint-imports``,
    naming the contract it breaks and the import."""
    tree = _copy(tmp_path)
    (tree / path).write_text(f'"""An upward import."""\n\n{source}')
    result = _lint(tree)
    assert result.returncode == 1, result.stdout + result.stderr
    broken = result.stdout[result.stdout.index("Broken contracts") :]
    assert contract in broken
    assert path.removesuffix(".py").replace("/", ".") in broken

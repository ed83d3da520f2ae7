"""A matrix file's ``budget:`` per agent: read as ``--budget`` reads it, and refused (loudly, at its
place) while matrix sessions do not reach their model through the gateway."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.matrix.spec import MatrixError, load_matrix
from tests.matrix.samples import V6_V7, matrix_file


def _problems(tmp_path: Path, budget: str) -> list[str]:
    """The problems of the v6/v7 matrix with ``budget`` given to v7."""
    text = V6_V7.replace("    - name: v7\n", f"    - name: v7\n      budget: {budget!r}\n", 1)
    assert "budget:" in text
    with pytest.raises(MatrixError) as caught:
        load_matrix(matrix_file(tmp_path, text))
    return [str(p) for p in caught.value.problems]


def test_a_bad_budget_is_named_at_its_place(tmp_path: Path) -> None:
    """``requests=0``: the budget's own error, at agents[1].budget."""
    (problem,) = _problems(tmp_path, "requests=0")
    assert "budget" in problem
    assert "requests='0' is not a whole number of at least 1" in problem


def test_a_good_budget_is_refused_until_matrix_runs_use_the_gateway(tmp_path: Path) -> None:
    """A budget that reads well is not dropped silently: the matrix says it takes one run for now."""
    (problem,) = _problems(tmp_path, "requests=20,cost=2.5")
    assert (
        "budgets take one run (changeup run --budget) until matrix sessions use the model gateway" in problem
    )

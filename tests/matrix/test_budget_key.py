"""A matrix file's ``budget:``, for the whole matrix or per agent: read as ``--budget`` reads it,
named at its place when bad, carried to each session's gateway and frozen in the manifest."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.matrix.session_process import _gateway_settings
from orchestrator.matrix.spec import Matrix, MatrixError, load_matrix
from tests.matrix.samples import V6_V7, matrix_file


def _matrix(tmp_path: Path, v7: str = "", whole: str = "") -> Matrix:
    """The v6/v7 matrix with ``v7``'s extra keys, and ``whole`` for the whole matrix."""
    text = V6_V7.replace("    - name: v7\n", f"    - name: v7\n{v7}", 1)
    text = text.replace("matrix:\n", f"matrix:\n{whole}", 1)
    return load_matrix(matrix_file(tmp_path, text))


def _problems(tmp_path: Path, v7: str) -> list[str]:
    with pytest.raises(MatrixError) as caught:
        _matrix(tmp_path, v7)
    return [str(p) for p in caught.value.problems]


def test_a_bad_budget_is_named_at_its_place(tmp_path: Path) -> None:
    """``requests=0``: the budget's own error, at agents[1].budget; a budget beside
    ``model_gateway: false`` is a contradiction, named too."""
    (problem,) = _problems(tmp_path, "      budget: requests=0\n")
    assert "budget" in problem
    assert "requests='0' is not a whole number of at least 1" in problem
    (problem,) = _problems(tmp_path, "      model_gateway: false\n      budget: requests=3\n")
    assert "budget is for a gateway, and model_gateway: false turns it off" in problem


def test_a_budget_reaches_each_session_and_an_agents_own_wins(tmp_path: Path) -> None:
    """The matrix's budget goes to v6's sessions, v7's own to v7's; each session's gateway is made
    with its limits (a budget implies the gateway)."""
    matrix = _matrix(tmp_path, "      budget: requests=20,cost=2.5\n", "  budget: requests=5\n")
    v6, v7 = matrix.agents
    assert v6.gateway is not None
    assert v7.gateway is not None
    assert (v6.gateway.budget, v7.gateway.budget) == ("requests=5", "requests=20,cost=2.5")
    settings = _gateway_settings(v7.gateway)
    assert settings is not None
    assert settings.budget is not None
    assert (settings.budget.requests, settings.budget.cost_usd) == (20, 2.5)

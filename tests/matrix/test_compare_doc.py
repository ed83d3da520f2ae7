"""docs/compare.md covers what the code offers: every matrix key, every compare.json key, its example."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orchestrator.matrix import build_comparison, load_matrix
from orchestrator.matrix.spec import (
    AgentEntry,
    DecisionModel,
    FullSuccessNotLower,
    MatrixModel,
    TrialOverride,
)
from tests.cli import REPO
from tests.matrix.samples import SHIPPED, results_of

DOC = (REPO / "docs" / "compare.md").read_text()


def test_every_key_of_the_matrix_file_is_documented() -> None:
    """Each field of the matrix file's models, and each rule's name, appears as `key`."""
    for model in (MatrixModel, AgentEntry, TrialOverride, DecisionModel, FullSuccessNotLower):
        for name in model.model_fields:
            assert f"`{name}`" in DOC, (model.__name__, name)
    for rule in ("critical_failure_blocks", "full_success_not_lower"):
        assert f"`{rule}`" in DOC


def test_the_documented_matrix_file_is_the_shipped_example_and_loads() -> None:
    """The YAML in the doc is docs/examples/v6-v7.yaml, verbatim, and it loads as it is."""
    block = DOC.split("```yaml\n", 1)[1].split("```", 1)[0]
    assert block == SHIPPED.read_text()
    matrix = load_matrix(SHIPPED)
    assert [c.id for c in matrix.challenges] == ["protected-report-api"]
    assert matrix.decision is not None


def keys(value: Any) -> set[str]:
    """Every key of a JSON value, at any depth, except those named by data (agent names, k)."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, inner in value.items():
            if key in ("agents", "pass_at_k", "pass_all_k", "versions", "per_trial") and isinstance(
                inner, dict
            ):
                continue
            found.add(key)
            found |= keys(inner)
    elif isinstance(value, list):
        for inner in value:
            found |= keys(inner)
    return found


def test_every_key_of_compare_json_is_documented(tmp_path: Path) -> None:
    """Each key compare.json holds (of a v6/v7 comparison with a decision) appears as `key`."""
    results, _ = results_of(tmp_path)
    comparison = build_comparison(results)
    missing = sorted(k for k in keys(comparison) if f"`{k}`" not in DOC and k not in ("v6", "v7"))
    assert missing == []

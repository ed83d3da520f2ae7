"""Prohibited effects in ``compare``: counted per cell, listed per trial, shown in every format."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from orchestrator.log.cells import SessionOrder
from orchestrator.matrix import build_comparison
from orchestrator.render.comparison_html import comparison_html
from orchestrator.render.comparison_text import comparison_markdown
from tests.matrix.samples import report, results_of

FINDING = {"effect": "network", "detail": "connect to 203.0.113.7:443", "test": "phase1/t.py::a", "tests": 2}


def phones_home_once(order: SessionOrder) -> dict[str, Any]:
    """Every trial is clean but v7's trial 3, whose code reached out during the hidden tests."""
    outcome = report(order.cell.challenge)
    dirty = order.cell.agent == "v7" and order.cell.trial == 3
    outcome["effects"] = {
        "prohibited": ["network"],
        "snapshot": "tree",
        "watched": True,
        "findings": [FINDING] if dirty else [],
    }
    return outcome


def test_a_trial_with_a_prohibited_effect_is_counted_and_named_not_scored(tmp_path: Path) -> None:
    """v7's cell counts 1/3 trials with effects, its trial 3 lists the finding, its full success
    stands, and compare.md and compare.html say what the code did."""
    results, _ = results_of(tmp_path, phones_home_once)
    comparison = build_comparison(results)
    cells = {c.agent: c for c in comparison.cells}
    assert (cells["v6"].effect_findings, cells["v7"].effect_findings) == (0, 1)
    trial = next(t for t in comparison.trials if (t.agent, t.trial) == ("v7", 3))
    assert [asdict(f) for f in trial.effect_findings] == [FINDING]
    assert trial.full_success  # reported, never scored
    said = "protected-report-api · v7 · evolving · trial 3: network: connect to 203.0.113.7:443"
    markdown = comparison_markdown(comparison)
    assert "## Prohibited effects" in markdown
    assert f"- {said} (in phase1/t.py::a and 1 other test)" in markdown
    assert "| 1/3 |" in markdown  # the column, with its denominator
    assert said in comparison_html(comparison)

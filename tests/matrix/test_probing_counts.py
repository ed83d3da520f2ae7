"""Probing findings in ``compare``: counted per agent with the trials assessed, named per trial,
shown in every format, never scored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orchestrator.log.cells import SessionOrder
from orchestrator.matrix import build_comparison
from orchestrator.render.comparison_html import comparison_html
from orchestrator.render.comparison_text import comparison_markdown
from tests.matrix.samples import report, results_of


def probes_once(order: SessionOrder) -> dict[str, Any]:
    """Every trial's challenge has a test-pass trigger; v7's trial 2 probed it."""
    outcome = report(order.cell.challenge)
    flagged = order.cell.agent == "v7" and order.cell.trial == 2
    outcome["oracle"] = {
        "triggers": ["pivot"],
        "observations": 9 if flagged else 2,
        "per_trigger": {"pivot": 9 if flagged else 2},
        "lines_known": True,
        "probing": flagged,
        "windows": [],
    }
    return outcome


def test_a_probing_trial_is_counted_per_agent_and_named_not_scored(tmp_path: Path) -> None:
    """v7: 1/3 trials flagged, named; v6: 0/3; the full success stands; md and html say so."""
    results, _ = results_of(tmp_path, probes_once)
    comparison = build_comparison(results)
    counts = {c.agent: (c.flagged, c.assessed, c.trials) for c in comparison.probing}
    label = "protected-report-api · v7 · evolving · trial 2"
    assert counts == {"v6": (0, 3, []), "v7": (1, 3, [label])}
    trial = next(t for t in comparison.trials if (t.agent, t.trial) == ("v7", 2))
    assert trial.probing is True
    assert trial.full_success  # a finding, never scored
    markdown = comparison_markdown(comparison)
    assert "## Probing the triggers" in markdown
    assert f"- v7 (evolving): 1/3 trial(s) flagged as probing: {label}" in markdown
    assert "- v6 (evolving): 0/3 trial(s) flagged as probing" in markdown
    assert 'id="probing"' in comparison_html(comparison)


def test_without_test_pass_triggers_there_is_no_probing_section(tmp_path: Path) -> None:
    """Reports without an oracle part: nothing assessed, no section."""
    results, _ = results_of(tmp_path)
    comparison = build_comparison(results)
    assert {c.assessed for c in comparison.probing} == {0}
    assert "Probing the triggers" not in comparison_markdown(comparison)

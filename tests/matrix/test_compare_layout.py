"""``changeup compare`` in the terminal: readable at 80 and 120 columns, COLUMNS honoured when piped."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.matrix import build_comparison
from orchestrator.render.comparison_html import comparison_html
from tests.cli import changeup
from tests.matrix.samples import V6_V7, results_of


@pytest.mark.slow
def test_compare_piped_fits_columns_and_names_every_figure(tmp_path: Path) -> None:
    """Piped with COLUMNS=80 or 120, no line but the files' paths is wider and each figure is named
    in full; --wide still gives the one table, a column per figure."""
    results, _ = results_of(tmp_path)
    for width in (80, 120):
        done = changeup("compare", str(results), env={"COLUMNS": str(width)})
        assert done.returncode == 0, done.stderr
        lines = [line for line in done.stdout.splitlines() if not line.startswith("compare.")]  # paths
        assert max(len(line) for line in lines) <= width, max(lines, key=len)
        for figure in ("valid trials: ", "median cost: ", "median tokens: ", "human turns: ", "pass^k: "):
            assert sum(line.count(figure) for line in lines) == 2, figure  # v6's cell and v7's
    unset = changeup("compare", str(results), env={"COLUMNS": None})
    figures = [line for line in unset.stdout.splitlines() if line.startswith("  valid trials: ")]
    assert len(figures) == 2
    assert all(len(line) <= 120 for line in figures)  # piped with no COLUMNS: blocks still packed to 120
    wide = changeup("compare", str(results), "--wide", env={"COLUMNS": "400"})
    assert wide.returncode == 0, wide.stderr
    header = next(line for line in wide.stdout.splitlines() if "challenge" in line and "median" in line)
    assert "human turns" in header


def test_compare_html_links_each_trial_to_its_report_and_shows_no_empty_decision_box(tmp_path: Path) -> None:
    """Each paired trial links to its run's report.html (relative to RESULTS); without a decision
    rule there is no empty <pre> under the verdict; each figure is a row of its challenge's table.
    A run folder with a scheme or leading out of RESULTS is shown, not linked."""
    results, _ = results_of(tmp_path, text=V6_V7[: V6_V7.index("  decision:")])
    comparison = build_comparison(results)
    page = comparison_html(comparison)
    runs = [t.run for t in comparison.trials if t.run]
    assert len(runs) == 6
    for run in runs:
        assert f'<a href="{run}/report.html"' in page
    assert "<pre></pre>" not in page
    cut = comparison.model_copy(deep=True)
    cut.pairs[0].agents["v6"].run = "javascript:alert(1)//"
    cut.pairs[1].agents["v6"].run = "../../elsewhere"
    linked = comparison_html(cut)
    assert "javascript:" not in linked
    assert "elsewhere/report.html" not in linked
    assert 'data-verdict="none"' in page
    assert page.count('<th scope="row">median cost</th>') == 1

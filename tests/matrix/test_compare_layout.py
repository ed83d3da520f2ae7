"""``changeup compare`` in the terminal: readable at 80 and 120 columns, COLUMNS honoured when piped."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import changeup
from tests.matrix.samples import results_of


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
    wide = changeup("compare", str(results), "--wide", env={"COLUMNS": "400"})
    assert wide.returncode == 0, wide.stderr
    header = next(line for line in wide.stdout.splitlines() if "challenge" in line and "median" in line)
    assert "human turns" in header

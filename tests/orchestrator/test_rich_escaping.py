"""Dynamic text in rich tables is shown as written: a test id or agent name with brackets is not
read as markup (a case id like ``[c000-p0-round_only]`` used to vanish from the calibration table)."""

from __future__ import annotations

from rich.console import Console

from orchestrator.calibrate import Check
from orchestrator.matrix.progress import Tally
from orchestrator.present.cli.calibration import calibration_table
from orchestrator.present.matrix_progress import MatrixProgress

CASE = "phase1/test_x.py::test_round[c000-p0-round_only]"


def rendered(renderable: object) -> str:
    console = Console(record=True, width=400, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_the_calibration_table_shows_a_case_id_whose_brackets_look_like_markup() -> None:
    check = Check("round [bold]", "broken [red]x", f"fails {CASE}", f"failed {CASE}", ok=False)
    text = rendered(calibration_table([check]))
    assert f"fails {CASE}" in text
    assert f"failed {CASE}" in text
    assert "round [bold]" in text
    assert "broken [red]x" in text


def test_the_matrix_progress_shows_an_agent_name_with_brackets() -> None:
    view = MatrixProgress(["claude[sonnet]"])
    view.update(Tally(cells=2, capacity=1))
    assert "claude[sonnet]" in rendered(view)

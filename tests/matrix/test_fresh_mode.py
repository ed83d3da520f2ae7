"""Fresh against evolving in a matrix: ``modes``, ``fresh_at``, the orders, the manifest and compare."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from orchestrator.log.cells import SessionOrder
from orchestrator.matrix import ResultsRefused, build_comparison, load_matrix, open_results
from orchestrator.matrix.spec import MatrixError
from tests.matrix.samples import V6_V7, matrix_file, report, results_of

#: The v6/v7 matrix run both ways: as written, and with each session started at a later phase.
BOTH = V6_V7.replace("  trials: 3\n", "  trials: 3\n  modes: [evolving, fresh]\n")


def problems(tmp_path: Path, text: str) -> list[str]:
    """Every problem loading ``text`` reports, as printed."""
    with pytest.raises(MatrixError) as caught:
        load_matrix(matrix_file(tmp_path, text))
    return [str(p) for p in caught.value.problems]


def test_fresh_sessions_start_at_the_last_phase_unless_the_file_names_one(tmp_path: Path) -> None:
    """By default a fresh session of protected-report-api starts at phase3; ``fresh_at`` moves it."""
    matrix = load_matrix(matrix_file(tmp_path, BOTH))
    assert matrix.modes == ("evolving", "fresh")
    assert matrix.start_of("protected-report-api", "fresh") == "phase3"
    assert matrix.start_of("protected-report-api", "evolving") is None
    named = load_matrix(matrix_file(tmp_path, BOTH + "  fresh_at: {protected-report-api: phase2}\n"))
    assert named.start_of("protected-report-api", "fresh") == "phase2"


def test_a_fresh_start_that_cannot_be_is_named_where_it_is_written(tmp_path: Path) -> None:
    """An unknown challenge, an unknown phase and the first phase are refused at their keys, with
    the nearest name; ``fresh_at`` without mode fresh says so."""
    wrong = problems(tmp_path, BOTH + "  fresh_at: {protected-report-apl: phase2}\n")
    assert any("'protected-report-apl' is no challenge of the matrix; did you mean" in p for p in wrong)
    (unknown,) = problems(tmp_path, BOTH + "  fresh_at: {protected-report-api: phase4}\n")
    assert ":26:36:" in unknown  # the phase, as written
    assert "cannot start at phase4: protected-report-api has no phase 'phase4'; did you mean" in unknown
    (first,) = problems(tmp_path, BOTH + "  fresh_at: {protected-report-api: phase1}\n")
    assert "phase1 is protected-report-api's first phase" in first
    (alone,) = problems(tmp_path, V6_V7 + "  fresh_at: {protected-report-api: phase2}\n")
    assert "fresh_at is for mode fresh, which modes does not list" in alone


def test_fresh_orders_start_late_and_name_their_mode(tmp_path: Path) -> None:
    """The driver hands each fresh attempt its start and a run folder named for its mode; evolving
    ones start as written."""
    seen: list[SessionOrder] = []

    def outcome(order: SessionOrder) -> dict[str, Any]:
        seen.append(order)
        return report(order.cell.challenge)

    results_of(tmp_path, outcome, BOTH)
    assert len(seen) == 12
    starts = {(o.cell.mode, o.start) for o in seen}
    assert starts == {("evolving", None), ("fresh", "phase3")}
    assert all(f"--{o.cell.mode}--" in o.name for o in seen)


def mid_conversation_slips(order: SessionOrder) -> dict[str, Any]:
    """v7 weakens an auth test on trial 3 only when the change arrives mid-conversation; v6 is
    the reference in both modes."""
    weakened = order.cell.agent == "v7" and order.cell.mode == "evolving" and order.cell.trial == 3
    return report(order.cell.challenge, critical="protection" if weakened else None)


def test_compare_sets_the_two_modes_side_by_side(tmp_path: Path) -> None:
    """Per challenge x agent the evolving and fresh counts stand together, and per agent the
    paired difference fresh - evolving is given (here +1/3 for v7, 0 for v6)."""
    results, _ = results_of(tmp_path, mid_conversation_slips, BOTH)
    comparison = build_comparison(results)
    assert comparison.matrix.modes == ["evolving", "fresh"]
    assert comparison.matrix.fresh_at == {"protected-report-api": "phase3"}
    both = comparison.fresh_vs_evolving
    assert both is not None
    v7 = next(c for c in both.cells if c.agent == "v7")
    assert v7.fresh_at == "phase3"
    assert v7.evolving.model_dump() == {
        "valid": 3,
        "full_successes": 2,
        "changed_passes": 3,
        "regressions": 0,
    }
    assert v7.fresh.model_dump() == {"valid": 3, "full_successes": 3, "changed_passes": 3, "regressions": 0}
    by_agent = {row.agent: row for row in both.agents}
    assert by_agent["v7"].full_success.rate_a == pytest.approx(2 / 3, abs=1e-4)  # a: evolving
    assert by_agent["v7"].full_success.rate_b == 1.0  # b: fresh
    assert by_agent["v7"].full_success.difference == pytest.approx(1 / 3, abs=1e-4)
    assert by_agent["v6"].full_success.difference == 0.0
    assert not any("evolving sessions only" in note for note in comparison.not_covered)


def test_without_both_modes_there_is_nothing_side_by_side(tmp_path: Path) -> None:
    """An evolving-only matrix has no fresh_vs_evolving, and says so in what it does not cover."""
    results, _ = results_of(tmp_path)
    comparison = build_comparison(results)
    assert comparison.fresh_vs_evolving is None
    assert comparison.matrix.fresh_at == {}
    assert any(note.startswith("evolving sessions only") for note in comparison.not_covered)


def test_the_fresh_start_is_frozen_in_the_manifest(tmp_path: Path) -> None:
    """``fresh_at`` is part of what the matrix is: another start is another matrix, refused on resume."""
    results, _ = results_of(tmp_path, text=BOTH)
    moved = load_matrix(matrix_file(tmp_path, BOTH + "  fresh_at: {protected-report-api: phase2}\n"))
    with pytest.raises(ResultsRefused) as refused:
        open_results(moved, results)
    assert 'fresh_at.protected-report-api: frozen as "phase3", now "phase2"' in str(refused.value)

"""compare.json from fake runs: the v6/v7 verdict as reviews come in, the per-cell figures, and
what a decision does while trials are missing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orchestrator.log.cells import SessionOrder
from orchestrator.log.comparison import DecidingChallenge, DecidingTrial
from orchestrator.log.report import Report, load_report
from orchestrator.matrix import Reviews, build_comparison, load_matrix, open_results
from orchestrator.matrix.outcomes import full_success
from orchestrator.matrix.review import items_of
from tests.matrix.samples import V6_V7, matrix_file, report, results_of, v6_v7


def decide(results: Path, trial: int, decision: str) -> None:
    """A reviewer's decision on the flagged criterion of v7's trial ``trial``."""
    run = f"runs/protected-report-api--v7--evolving--t{trial}--a1"
    (item,) = items_of(run, load_report(results / run / "report.json"))
    Reviews(results, writer=True).decide(item, decision, "weakens the 401 check", "tester")  # type: ignore[arg-type]


def test_v7s_weakened_auth_test_blocks_the_switch_pending_review_then_confirmed(tmp_path: Path) -> None:
    """Unreviewed, the failure blocks provisionally, naming v7's trial 3 and its run; confirmed,
    the verdict is the same and no longer provisional."""
    results, _ = results_of(tmp_path)
    decision = build_comparison(results).decision
    assert decision is not None
    assert decision.verdict == "do not switch"
    assert decision.provisional is True
    assert decision.deciding_rule == "critical_failure_blocks"
    (row,) = decision.deciding
    assert isinstance(row, DecidingTrial)
    assert (row.agent, row.trial, row.run) == ("v7", 3, "runs/protected-report-api--v7--evolving--t3--a1")
    assert [(c.criterion, c.review) for c in row.criteria] == [("protection", "pending")]
    decide(results, 3, "confirm")
    decision = build_comparison(results).decision
    assert decision is not None
    assert (decision.verdict, decision.provisional) == ("do not switch", False)
    (row,) = decision.deciding
    assert isinstance(row, DecidingTrial)
    assert row.criteria[0].review == "confirmed"


def test_a_dismissed_flag_no_longer_blocks_and_the_trial_counts_as_a_success(tmp_path: Path) -> None:
    """Dismissed as a false flag: no critical failure stands, v7 has 3/3 full successes against
    v6's 2/3, and the verdict is switch."""
    results, _ = results_of(tmp_path)
    decide(results, 3, "dismiss")
    comparison = build_comparison(results)
    v7 = next(c for c in comparison.cells if c.agent == "v7")
    assert v7.full_successes == 3
    assert v7.critical_failures.model_dump() == {"confirmed": 0, "pending": 0, "dismissed": 1}
    assert comparison.decision is not None
    assert comparison.decision.verdict == "switch"
    assert [r.result for r in comparison.decision.rules] == ["passes", "passes"]
    assert comparison.reviews.model_dump() == {"confirmed": 0, "dismissed": 1, "pending": 0}


def test_the_per_cell_figures_have_their_denominators(tmp_path: Path) -> None:
    """v6: 2/3 full successes, 1/3 regressions, pass@3 = 1 and pass^3 = 0; v7: 2/3, 3/3 changed passes."""
    results, _ = results_of(tmp_path)
    v6, v7 = build_comparison(results).cells
    assert (v6.valid, v6.full_successes, v6.regressions, v6.changed_passes) == (3, 2, 1, 3)
    assert (v6.pass_at_k["3"], v6.pass_all_k["3"], v6.pass_at_k["1"]) == (1.0, 0.0, 0.6667)
    assert (v7.full_successes, v7.changed_passes, v7.critical_failures.pending) == (2, 3, 1)
    assert v7.cost_usd.model_dump() == {"median": None, "reported": 0, "of": 3}  # missing, not 0
    assert v6.median_elapsed_seconds == 10.0


def test_the_rate_rule_blocks_below_its_margin_and_passes_within_it(tmp_path: Path) -> None:
    """Without the critical rule: v7 at 2/3 against a perfect v6 is 33 points lower, blocked by
    a 10-point margin and let through by a 50-point one."""

    def v6_perfect(order: SessionOrder) -> dict[str, Any]:
        if order.agent == "scripted:broken/open-pagination":
            return report(order.cell.challenge)
        return v6_v7(order)

    text = V6_V7.replace("      - rule: critical_failure_blocks\n", "")
    results, _ = results_of(tmp_path, v6_perfect, text)
    decision = build_comparison(results).decision
    assert decision is not None
    assert decision.verdict == "do not switch"
    (rule,) = decision.rules
    assert rule.difference is not None
    assert rule.difference.difference == -0.3333
    (row,) = rule.deciding
    assert isinstance(row, DecidingChallenge)
    assert (row.challenge, row.counts) == ("protected-report-api", {"v6": "3/3", "v7": "2/3"})
    wide = tmp_path / "wide"
    wide.mkdir()
    results, _ = results_of(wide, v6_perfect, text.replace("margin: 0.1", "margin: 0.5"))
    decision = build_comparison(results).decision
    assert decision is not None
    assert decision.verdict == "switch"


def test_a_decision_waits_for_trials_not_run(tmp_path: Path) -> None:
    """With only the manifest frozen, nothing has run: both rules are undecided, and every trial
    shows as not run, never as a failure."""
    matrix = load_matrix(matrix_file(tmp_path))
    open_results(matrix, tmp_path / "results").close()
    comparison = build_comparison(tmp_path / "results")
    assert comparison.decision is not None
    assert comparison.decision.verdict == "undecided"
    assert {t.status for t in comparison.trials} == {"not run"}
    assert all(c.valid == 0 and c.full_successes == 0 for c in comparison.cells)
    assert comparison.agents[0].full_success.rate is None


def test_a_success_after_a_later_message_is_told_apart(tmp_path: Path) -> None:
    """A deadline delivered before phase 1 passed: the success came after a later message."""

    def late(order: SessionOrder) -> dict[str, Any]:
        made = report(order.cell.challenge)
        if order.cell.trial == 2:
            deadline = {"trigger": "deadline", "kind": "deadline", "text": "", "queued_at": 1.0}
            made["messages"].insert(1, {"number": 2, **deadline, "delivered_at": 1.0})
        return made

    results, _ = results_of(tmp_path, late)
    v6 = build_comparison(results).cells[0]
    assert (v6.first_message_successes, v6.later_message_successes) == (2, 1)


def test_a_dismissed_flag_counts_a_phase_by_its_pass_policy() -> None:
    """With its critical flag dismissed, a run whose phase fails a test outside its pass policy
    (full marks under the policy) is a success; one that fails a test inside it is not."""
    flagged = report("c", critical="protection", preserved=(9, 10))
    flagged["phases"][0]["full_marks"] = True  # the failing test is outside phase1's policy
    assert full_success(Report.model_validate(flagged), {"protection"})
    flagged["phases"][0]["full_marks"] = False
    assert not full_success(Report.model_validate(flagged), {"protection"})
    failing = Report.model_validate(report("c", critical="protection", preserved=(9, 10)))
    assert not full_success(failing, {"protection"})

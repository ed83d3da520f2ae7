"""A crash counts: a trial whose session crashed or timed out is a failed trial in every rate and
in the decision, an invalid one stays apart, and a difference in either rate between agents is a
warning in every format (fake sessions; tests/redteam/test_bad_session.py crashes real ones)."""

from __future__ import annotations

import html
import io
from pathlib import Path
from typing import Any

from rich.console import Console

from orchestrator.log.cells import SessionOrder
from orchestrator.matrix import build_comparison
from orchestrator.matrix.backends import SessionCrashed, SessionTimedOut
from orchestrator.render.comparison_html import comparison_html
from orchestrator.render.comparison_text import agent_lines, comparison_markdown, print_comparison
from tests.matrix.samples import report, results_of

#: ``selective`` plays the reference but on trials 2 and 3, where it plays a broken variant.
SELECTIVE = """\
matrix:
  challenges: [{challenges}/protected-report-api]
  trials: 3
  retry_invalid: 1
  agents:
    - name: steady
      agent: scripted
    - name: selective
      agent: scripted
      per_trial:
        - trials: [2]
          agent: scripted:broken/open-pagination
        - trials: [3]
          agent: scripted:broken/skips-auth-test
  decision:
    candidate: selective
    baseline: steady
    rules:
      - rule: full_success_not_lower
"""


def crashes_when_failing(order: SessionOrder) -> dict[str, Any]:
    """The broken variants would fail: instead, one crashes its session, the other hangs it."""
    if order.agent == "scripted:broken/open-pagination":
        raise SessionCrashed("the session process crashed: killed by signal SIGKILL")
    if order.agent == "scripted:broken/skips-auth-test":
        raise SessionTimedOut("the session process was still running after 60s, its wall-time limit")
    return report(order.cell.challenge)


def invalid_when_failing(order: SessionOrder) -> dict[str, Any]:
    """The broken variants would fail: instead, their runs are invalid, every time."""
    if order.agent.startswith("scripted:broken/"):
        return report(order.cell.challenge, status="invalid", full=False)
    return report(order.cell.challenge)


def test_a_crash_or_a_hang_is_a_failed_trial_never_a_dropped_one(tmp_path: Path) -> None:
    """selective crashes on trial 2 and hangs on trial 3: 1/3 full successes (not 1/1), both
    attempts kept and never retried, the rule blocks on 33% against 100%, and its crashed rate
    (67%) against steady's (0%) is a warning in compare.json, the terminal, compare.md and the page."""
    results, _ = results_of(tmp_path, crashes_when_failing, SELECTIVE)
    comparison = build_comparison(results)
    steady, selective = comparison.cells
    assert (selective.valid, selective.crashed, selective.invalid) == (3, 2, 0)
    assert (selective.full_successes, selective.changed_passes) == (1, 1)
    assert selective.pass_at_k["1"] == 0.3333
    assert (steady.valid, steady.crashed, steady.full_successes) == (3, 0, 3)
    rates = {a.agent: a for a in comparison.agents}
    assert rates["selective"].full_success.successes == 1
    assert rates["selective"].full_success.trials == 3
    assert rates["selective"].crashed.model_dump() == {"trials": 2, "of": 3, "rate": 0.6667}
    assert rates["selective"].invalid.model_dump() == {"trials": 0, "of": 3, "rate": 0.0}
    assert rates["steady"].crashed.model_dump() == {"trials": 0, "of": 3, "rate": 0.0}
    attempts = comparison.provenance.attempts
    tried = sorted((a.trial, a.status) for a in attempts if a.agent == "selective")
    assert tried == [(1, "completed"), (2, "crashed"), (3, "timed out")]  # one attempt each: no retry
    decision = comparison.decision
    assert decision is not None
    assert decision.verdict == "do not switch"
    assert [d.model_dump() for d in decision.deciding] == [
        {"challenge": "protected-report-api", "steady": "3/3", "selective": "1/3"}
    ]
    outcomes = [p.agents["selective"].outcome for p in comparison.pairs]
    assert outcomes == ["full success", "crashed", "timed out"]
    (warning,) = comparison.warnings
    assert warning.startswith(
        "crashed (or timed-out) rates differ between agents (evolving): steady 0% (0/3), selective 67% (2/3)"
    )
    shown = f"warning: {warning}"
    assert "; invalid 0% (0/3), crashed 67% (2/3)" in agent_lines(comparison)[1]
    markdown = comparison_markdown(comparison)
    assert f"## Warnings\n\n- {shown}" in markdown
    assert "| crashed |" in markdown  # the per-cell column
    assert f'<ul id="warnings" class="warnings"><li>{html.escape(shown)}</li></ul>' in comparison_html(
        comparison
    )
    terminal = io.StringIO()
    print_comparison(comparison, Console(file=terminal, width=10_000, highlight=False))
    assert shown in terminal.getvalue()
    assert any("2 trial(s) crashed or timed out" in note for note in comparison.not_covered)


def test_invalid_runs_stay_apart_and_a_difference_in_them_is_a_warning(tmp_path: Path) -> None:
    """selective's failing trials come back invalid, again after their retry: kept apart (1/1, no
    failure counted), but its invalid rate (67%) against steady's (0%) is a warning."""
    results, _ = results_of(tmp_path, invalid_when_failing, SELECTIVE)
    comparison = build_comparison(results)
    _, selective = comparison.cells
    assert (selective.valid, selective.invalid, selective.invalid_attempts) == (1, 2, 4)
    rates = {a.agent: a for a in comparison.agents}
    assert rates["selective"].invalid.model_dump() == {"trials": 2, "of": 3, "rate": 0.6667}
    (warning,) = comparison.warnings
    assert warning.startswith(
        "invalid rates differ between agents (evolving): steady 0% (0/3), selective 67% (2/3); invalid runs "
        "are counted in no rate"
    )


def test_equal_rates_raise_no_warning(tmp_path: Path) -> None:
    """Every trial of both agents completed: no warning, and compare.md has no warnings section."""
    results, _ = results_of(tmp_path, lambda order: report(order.cell.challenge), SELECTIVE)
    comparison = build_comparison(results)
    assert comparison.warnings == []
    assert "## Warnings" not in comparison_markdown(comparison)

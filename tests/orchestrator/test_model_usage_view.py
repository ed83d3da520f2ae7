"""The report's model usage for people: the summary line and the section of report.md and .html."""

from __future__ import annotations

from orchestrator.log.report import Disagreement, ModelReplay, ModelTotals, ModelUsage, TurnModelTotals
from orchestrator.render.model_usage_view import model_usage_html, model_usage_lines, model_usage_markdown

TOTALS = {
    "requests": 3,
    "answered": 3,
    "unpriced": 1,
    "input_tokens": 1200,
    "cache_read_tokens": 200,
    "cache_write_tokens": None,
    "output_tokens": 300,
    "reasoning_tokens": None,
    "cost_usd": 0.0125,
}
USAGE = ModelUsage(
    prices={"date": "2026-01-02", "source": "vendors", "path": "shipped"},
    upstream="",
    requests=[],
    turns=[TurnModelTotals(turn=1, **TOTALS)],
    between_turns=ModelTotals(**{**TOTALS, "requests": 0, "answered": 0, "unpriced": 0}),
    total=ModelTotals(**TOTALS),
    unpriced_models=["house-model-<b>"],
    disagreements=[Disagreement(turn=1, figure="cost_usd", gateway=0.0125, cli=0.5)],
)


def test_the_summary_says_requests_tokens_cost_table_date_unpriced_models_and_disagreements() -> None:
    """Each of the figures the issue names is in the lines, a missing one as missing, never 0."""
    summary, unpriced, disagreement = model_usage_lines(USAGE)
    assert summary == (
        "model gateway: 3 request(s); tokens in 1,200 (200 cache read), out 300; cost $0.0125, "
        "1 request(s) not priced (prices of 2026-01-02)"
    )
    assert unpriced == "no price for: house-model-<b> (their cost is not counted)"
    assert disagreement == "turn 1: the CLI reported cost_usd $0.5000, the gateway measured $0.0125"


def test_the_sections_show_each_turn_and_escape_what_a_model_name_holds() -> None:
    """A row per turn and a total (no between-turns row when none was made), nothing raw."""
    markdown = "\n".join(model_usage_markdown(USAGE))
    assert "## Model usage (gateway)" in markdown
    assert "| 1 | 3 | 1,200 | 200 | missing | 300 | missing | $0.0125 |" in markdown
    assert "between turns" not in markdown
    html = model_usage_html(USAGE)
    assert 'id="model-usage"' in html
    assert "<b>" not in html
    assert (model_usage_markdown(None), model_usage_html(None)) == ([], "")


def test_a_replayed_run_names_its_recording_its_fork_and_what_diverged() -> None:
    """In place of the upstream line: the run replayed, the trigger forked at and from which
    request the upstream answered, and the requests refused as unlike the recording."""
    replay = ModelReplay(
        run="runs/a", fork_at="pivot", message_file="new.md", forked_at_request=6, diverged_requests=[9]
    )
    usage = USAGE.model_copy(update={"upstream": "replay:runs/a", "replay": replay})
    lines = model_usage_lines(usage)
    assert "upstream: replay:runs/a" not in lines
    assert lines[2] == (
        "model answers replayed from runs/a; forked at pivot, its message reworded from new.md: "
        "from request 6 on, the upstream answered; request(s) 9 refused, unlike the recording"
    )
    assert "forked at pivot" in "\n".join(model_usage_markdown(usage))

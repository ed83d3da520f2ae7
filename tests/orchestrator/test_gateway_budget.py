"""The model gateway with a budget, against the scripted model server: once spent, every request is
refused in its provider's own quota shape, logged as refused for the budget, and never forwarded."""

from __future__ import annotations

import io
from pathlib import Path

import httpx
import pytest
from rich.console import Console

from orchestrator.gateway.budget import Budget, Limits
from orchestrator.gateway.prices import PriceTable
from orchestrator.gateway.providers import Upstreams
from orchestrator.gateway.proxy import Gateway
from orchestrator.log.records import ModelRequest
from orchestrator.log.report import load_report
from orchestrator.render.terminal import print_summary
from tests.cli import changeup
from tests.modelserver import DIALECTS, ModelServer, Script
from tests.redteam.common import TARGET, records, run

pytestmark = pytest.mark.slow  # real servers on 127.0.0.1, real sessions

SPENDER = Path(__file__).resolve().parents[1] / "fixtures" / "gateway-agent" / "spender.py"
ENV = {"ANTHROPIC_API_KEY": "sk-real-a", "OPENAI_API_KEY": "sk-real-o", "GEMINI_API_KEY": "gm-real"}


@pytest.mark.anyio
async def test_a_spent_budget_refuses_each_provider_in_its_own_shape() -> None:
    """requests=2: two answered; then Anthropic, OpenAI and Gemini each get their quota error."""
    records: list[ModelRequest] = []
    told: list[str] = []
    budget = Budget(Limits(requests=2))
    with ModelServer(Script(()), DIALECTS["claude-code"]) as server:
        upstreams = Upstreams.from_env(ENV, server.url)
        async with (
            Gateway(
                upstreams, PriceTable.load(), records.append, budget=budget, on_exhausted=told.append
            ) as gw,
            httpx.AsyncClient(timeout=60) as client,
        ):
            anthropic = (
                gw.base_url("anthropic") + "/v1/messages",
                {"x-api-key": gw.token, "anthropic-version": "2023-06-01"},
                {
                    "model": "claude-haiku-4-5",
                    "max_tokens": 9,
                    "messages": [{"role": "user", "content": "hi"}],
                },
            )
            openai = (
                gw.base_url("openai") + "/responses",
                {"authorization": f"Bearer {gw.token}"},
                {"model": "gpt-5-mini", "input": "hi"},
            )
            gemini = (
                gw.base_url("gemini") + "/v1beta/models/gemini-2.5-flash:generateContent",
                {"x-goog-api-key": gw.token},
                {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
            )
            answers = []
            for url, headers, body in (anthropic, openai, anthropic, openai, gemini):
                response = await client.post(url, headers=headers, json=body)
                answers.append((response.status_code, response.json()))
    assert [status for status, _ in answers] == [200, 200, 400, 429, 429]
    reason = "the session's budget of 2 model requests is spent"
    message = f"changeup: {reason}"
    assert answers[2][1] == {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    assert answers[3][1] == {
        "error": {
            "message": message,
            "type": "insufficient_quota",
            "param": None,
            "code": "insufficient_quota",
        }
    }
    assert answers[4][1] == {"error": {"code": 429, "message": message, "status": "RESOURCE_EXHAUSTED"}}
    assert len(server.exchanges) == 2  # the refused requests went nowhere
    assert [(r.outcome, r.status) for r in records] == [
        ("answered", 200),
        ("answered", 200),
        ("refused", 400),
        ("refused", 429),
        ("refused", 429),
    ]
    assert [r.detail for r in records[2:]] == [f"budget: {reason}"] * 3
    assert told == [reason] * 3
    # What the budget counted is what the server answered: its own token figures.
    tokens = sum((r.input_tokens or 0) + (r.output_tokens or 0) for r in records)
    assert budget.spent.requests == 2
    assert budget.spent.tokens == tokens > 0
    assert budget.spent.cost_usd == pytest.approx(sum(r.cost_usd or 0 for r in records))


def test_a_session_over_its_request_budget_ends_budget_exhausted(tmp_path: Path) -> None:
    """``changeup run --budget requests=3``: a CLI that keeps asking gets three answers; its fourth
    request is refused (Anthropic's shape), the session ends ``budget_exhausted`` at once though
    the CLI lingers, the run is scored as it stands, the report says so, and replay agrees."""
    with ModelServer(Script(()), DIALECTS["claude-code"]) as server:
        options = (
            "--agent-option",
            f"binary={SPENDER}",
            "--budget",
            "requests=3",
            "--model-upstream",
            server.url,
        )
        report, folder = run(TARGET, "claude-code", tmp_path / "runs", *options, env=ENV)
        answered = server.answered()
    assert report["run"]["status"] == "completed", report["run"]["detail"]
    assert (report["run"]["end_reason"], report["run"]["end_detail"]) == (
        "budget_exhausted",
        "the session's budget of 3 model requests is spent",
    )
    assert len(answered) == 3
    requests = report["model_usage"]["requests"]
    assert [(r["outcome"], r["status"]) for r in requests] == [("answered", 200)] * 3 + [("refused", 400)]
    assert requests[3]["detail"] == "budget: the session's budget of 3 model requests is spent"
    budget = report["budget"]
    tokens = sum(e.tokens.input + e.tokens.output for e in answered if e.tokens is not None)
    assert budget["limits"] == "requests=3"
    assert (budget["max_requests"], budget["max_tokens"], budget["max_cost_usd"]) == (3, None, None)
    assert (budget["requests"], budget["tokens"], budget["refused"], budget["exhausted"]) == (
        3,
        tokens,
        1,
        True,
    )
    assert report["score"]["grading_status"] == "ok"  # scored as it stands: not a grading failure
    kinds = [r["kind"] for r in records(folder)]
    assert kinds.index("budget.exhausted") + 1 == kinds.index("session.ended")
    said = "model budget requests=3: spent — the session ended budget_exhausted"
    assert said in (folder / "report.md").read_text()
    assert said in (folder / "report.html").read_text()
    shown = io.StringIO()
    print_summary(load_report(folder / "report.json"), Console(file=shown, width=400))
    assert said in shown.getvalue()
    replayed = changeup("replay", str(folder))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr

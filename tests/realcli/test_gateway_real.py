"""A real CLI through the model gateway: ``changeup run --model-gateway`` with the scripted model
server as the gateway's upstream.

The CLI is set up as a user would for their own endpoint (its key, :data:`SECRET`, in changeup's
environment), and changeup points it at the gateway instead: every request the server got came
through it, with the real key, and the report's ``model_usage`` repeats, request for request,
the figures the server sent (the CLI's own agree). The key is found nowhere in the run folder,
and the CLI sent the server nothing but the real key (it held the session token, which the
gateway swapped).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.realcli.session import run_real
from tests.realcli.setups import SECRET
from tests.redteam.common import needs_bubblewrap
from tests.redteam.fence import Loopback, reachable, second_namespace

pytestmark = [pytest.mark.real_cli, pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.mark.parametrize(
    "preset", ["claude-code", "codex", "gemini-cli", "aider", "mini-swe-agent", "openhands"]
)
def test_a_real_cli_through_the_gateway_is_metered_request_for_request(tmp_path: Path, preset: str) -> None:
    """Both phases of export-time, every request through the gateway."""
    run = run_real(tmp_path, preset, gateway=True)
    assert run.report["score"]["total"] == 1.0, run.done.stderr[-3000:]
    answered = [e for e in run.exchanges if e.tokens is not None]
    requests = [r for r in run.report["model_usage"]["requests"] if r["outcome"] == "answered"]
    assert len(requests) == len(answered) > 0
    for request, exchange in zip(requests, answered, strict=True):
        assert exchange.tokens is not None
        write = exchange.tokens.cache_write if request["provider"] == "anthropic" else 0
        sent = (exchange.tokens.input, exchange.tokens.cache_read, write, exchange.tokens.output)
        got = (
            request["input_tokens"],
            request["cache_read_tokens"],
            request["cache_write_tokens"],
            request["output_tokens"],
        )
        assert got == sent
    if preset == "claude-code":  # it prices claude-sonnet-4-5 as the shipped table does
        assert run.report["model_usage"]["disagreements"] == []
    headers = [{n.lower(): v for n, v in e.headers.items()} for e in run.exchanges]
    keys = {h.get("x-api-key") or h.get("x-goog-api-key") or h.get("authorization") for h in headers}
    assert keys == (
        {f"Bearer {SECRET}"}
        if run.exchanges[0].path.startswith("/v1/chat") or preset == "codex"
        else {SECRET}
    )
    assert not any("changeup-session-" in value for h in headers for value in h.values())
    found = [
        p
        for p in run.folder.rglob("*")
        if p.is_file() and not p.is_symlink() and SECRET.encode() in p.read_bytes()
    ]
    assert found == []


def test_a_real_cli_over_its_request_budget_ends_budget_exhausted(tmp_path: Path) -> None:
    """Claude Code with ``--budget requests=2``: two requests reach the server, the third gets
    Anthropic's own error for a spent quota, and the session ends ``budget_exhausted`` at once,
    scored as it stands, the report saying so."""
    run = run_real(tmp_path, "claude-code", gateway=True, budget="requests=2")
    assert run.report["run"]["status"] == "completed", run.done.stderr[-3000:]
    assert run.report["run"]["end_reason"] == "budget_exhausted"
    assert len(run.exchanges) == 2  # the server saw only what the budget let through
    requests = run.report["model_usage"]["requests"]
    assert [r["outcome"] for r in requests[:2]] == ["answered", "answered"]
    assert (requests[2]["outcome"], requests[2]["status"]) == ("refused", 400)
    assert requests[2]["detail"] == "budget: the session's budget of 2 model requests is spent"
    budget = run.report["budget"]
    assert (budget["requests"], budget["exhausted"]) == (2, True)
    assert budget["refused"] >= 1
    kinds = [r["kind"] for r in run.records]
    assert kinds.index("budget.exhausted") + 1 == kinds.index("session.ended")
    assert run.report["score"]["grading_status"] == "ok"
    assert "the session ended budget_exhausted" in (run.folder / "report.md").read_text()


@needs_bubblewrap
def test_a_real_cli_with_a_model_only_network_reaches_its_model_and_nothing_else(tmp_path: Path) -> None:
    """Claude Code with ``--agent-network model`` completes export-time through the gateway; the
    scripted model has it try a loopback listener of the test and a second network namespace's
    (each reachable from here, counted once), and neither counts a connection from the session."""
    with second_namespace(tmp_path) as (elsewhere, counted):
        loopback = Loopback()
        reachable([loopback.address, elsewhere], lambda: (loopback.count, counted()))
        run = run_real(
            tmp_path, "claude-code", gateway=True, network="model", probes=[loopback.address, elsewhere]
        )
        assert (loopback.count, counted()) == (1, 1)
    assert run.report["score"]["total"] == 1.0, run.done.stderr[-3000:]
    answered = [r for r in run.report["model_usage"]["requests"] if r["outcome"] == "answered"]
    assert len(answered) == len([e for e in run.exchanges if e.tokens is not None]) > 0
    (sandboxed,) = [r for r in run.records if r["kind"] == "agent.sandboxed"]
    assert sandboxed["network"] == "model"
    # The CLI did run both probes, and told its model what came of each.
    told = "\n".join(e.text for e in run.exchanges)
    assert "Connection refused" in told
    assert "Network is unreachable" in told

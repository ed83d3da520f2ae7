"""A matrix through the model gateway: ``changeup run --matrix FILE`` whose file says
``model_gateway``, with the scripted model server as upstream and a home-made ``process:`` agent.

Each session starts a gateway of its own, each run's report has its ``model_usage``, the
comparison takes each trial's cost from it (``cost_source: gateway``) and sums it per agent, and
neither the results folder nor the matrix manifest holds the real key, which only changeup's
environment had.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.gateway.prices import PriceTable
from orchestrator.log.cells import Cell, GatewayOrder, SessionOrder, order_to_json
from orchestrator.matrix.parcel import pack, unpack
from orchestrator.matrix.worker import ROOT, SessionHost
from tests.cli import REPO, changeup, in_process
from tests.modelserver import DIALECTS, ModelServer, Script
from tests.redteam.common import needs_bubblewrap
from tests.redteam.fence import Loopback, reachable

#: A challenge of the library (the red-team target has no pattern, which a matrix manifest needs).
CHALLENGE = REPO / "challenges" / "normalize-tags"
AGENT = REPO / "tests" / "fixtures" / "gateway-agent" / "home_made.py"
FENCED_CLI = REPO / "tests" / "fixtures" / "gateway-agent" / "fenced_claude.py"
KEY = "sk-oai-real-matrix-7c1e4b9a2f"


@pytest.mark.slow
def test_each_session_of_a_matrix_has_its_own_gateway_and_no_key_reaches_the_results(tmp_path: Path) -> None:
    """Two trials of one ``process:`` agent, their requests priced by a table of the matrix file's."""
    prices = {
        "date": "2026-01-02",
        "source": "a test",
        "models": {"gpt-5-mini": {"input": 1.0, "cache_read": 0.1, "cache_write": 0.0, "output": 4.0}},
    }
    (tmp_path / "prices.json").write_text(json.dumps(prices))
    with ModelServer(Script(()), DIALECTS["codex"]) as server:
        matrix = {
            "matrix": {
                "challenges": [str(CHALLENGE)],
                "agents": [{"name": "home", "agent": f"process:python3 {AGENT}"}],
                "trials": 2,
                "model_gateway": True,
                "model_upstream": server.url,
                "prices": "prices.json",
            }
        }
        (tmp_path / "matrix.yaml").write_text(json.dumps(matrix))
        results = tmp_path / "results"
        env = {
            "OPENAI_API_KEY": KEY,
            "ANTHROPIC_API_KEY": None,
            "GEMINI_API_KEY": None,
            "GOOGLE_API_KEY": None,
        }
        done = changeup(
            "run",
            "--matrix",
            str(tmp_path / "matrix.yaml"),
            "--out",
            str(results),
            "-q",
            timeout=600,
            env=env,
        )
        answered = server.answered()
    assert len(answered) == 2, done.stderr[-3000:]
    assert all(e.headers.get("authorization") == f"Bearer {KEY}" for e in answered)
    reports = [json.loads(p.read_text()) for p in sorted(results.glob("runs/*/report.json"))]
    assert len(reports) == 2, done.stderr[-3000:]
    logs = [p.read_text() for p in sorted(results.glob("runs/*/events.jsonl"))]
    assert [log.count('"gateway.started"') for log in logs] == [1, 1]  # a gateway each
    table = PriceTable.from_text(json.dumps(prices), "prices.json")
    costs = []
    for report in reports:
        usage = report["model_usage"]
        assert usage["prices"]["date"] == "2026-01-02"
        (request,) = usage["requests"]
        price = table.price(request["model"])
        assert price is not None
        assert request["cost_usd"] == pytest.approx(
            (
                (request["input_tokens"] - request["cache_read_tokens"]) * price.input
                + request["cache_read_tokens"] * price.cache_read
                + request["output_tokens"] * price.output
            )
            / 1e6
        )
        costs.append(usage["total"]["cost_usd"])
    for folder in sorted(results.glob("runs/*")):  # the reports show it: prices dated, cost given
        assert "model gateway: 1 request(s)" in (folder / "report.md").read_text()
        assert "(prices of 2026-01-02, " in (folder / "report.md").read_text()
        assert 'id="model-usage"' in (folder / "report.html").read_text()
    manifest = json.loads((results / "manifest.json").read_text())
    (agent,) = manifest["agents"]
    assert agent["model_gateway"]["upstream"] == server.url
    assert agent["model_gateway"]["prices"]["date"] == "2026-01-02"
    assert all(cost is not None and cost > 0 for cost in costs)
    compare = json.loads((results / "compare.json").read_text())
    rows = compare["trials"]
    assert [r["cost_source"] for r in rows] == ["gateway", "gateway"]
    assert sorted(r["cost_usd"] for r in rows) == pytest.approx(sorted(costs))
    # Tokens come from the same place as the cost: the gateway's totals, not the CLI's own words.
    measured = sorted(
        r["model_usage"]["total"]["input_tokens"] + r["model_usage"]["total"]["output_tokens"]
        for r in reports
    )
    assert sorted(r["tokens"] for r in rows) == measured
    (cost,) = compare["costs"]
    assert (cost["valid"], cost["cost_known"], cost["from_gateway"]) == (2, 2, 2)
    assert cost["total_cost_usd"] == pytest.approx(sum(costs))
    assert cost["frontier"] is True
    assert "## Cost" in (results / "compare.md").read_text()
    assert 'data-frontier="yes"' in (results / "compare.html").read_text()
    found = [
        str(p)
        for p in results.rglob("*")
        if p.is_file() and not p.is_symlink() and KEY.encode() in p.read_bytes()
    ]
    assert found == []


def test_the_gateway_flags_make_a_matrix_of_the_command_line_and_are_refused_beside_a_matrix_file(
    tmp_path: Path,
) -> None:
    """With --matrix the file says it (the flag is named); with several agents, a bad --prices is
    named before anything is made."""
    refused = in_process(
        "run", "--matrix", str(REPO / "docs/examples/v6-v7.yaml"), "--out", str(tmp_path), "--model-gateway"
    )
    assert refused.exit_code == 2
    assert "drop --model-gateway" in refused.output
    (tmp_path / "p.json").write_text("{}")
    out = tmp_path / "results"
    bad = in_process(
        "run",
        str(CHALLENGE),
        "--agent",
        "scripted",
        "--trials",
        "2",
        "--out",
        str(out),
        "--prices",
        str(tmp_path / "p.json"),
    )
    assert bad.exit_code == 2
    assert "Invalid value for --prices" in bad.output
    assert not out.exists()


@pytest.mark.slow
def test_on_a_ray_worker_the_sessions_gateway_takes_its_key_from_what_the_driver_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session host a Ray worker runs (called here as its actor would be), the node's own
    environment without the key: the key named in ``send_env`` reaches the upstream, and neither
    the order nor the run folder that comes back holds it."""
    monkeypatch.setenv(ROOT, str(tmp_path / "node"))
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with ModelServer(Script(()), DIALECTS["codex"]) as server:
        order = SessionOrder(
            cell=Cell("normalize-tags", "home", "evolving", 1),
            attempt=1,
            challenge=Path("/driver/only/challenges/normalize-tags"),
            agent=f"process:python3 {AGENT}",
            out=Path("/driver/only/results/runs"),
            name="normalize-tags--home--evolving--t1--a1",
            gateway=GatewayOrder(server.url),
        )
        assert KEY not in order_to_json(order)
        answer = SessionHost().run(order, pack(CHALLENGE), {"OPENAI_API_KEY": KEY}, 600.0)
        (exchange,) = server.answered()
    assert exchange.headers.get("authorization") == f"Bearer {KEY}"
    folder = unpack(answer["parcel"], tmp_path / "back")
    (request,) = json.loads((folder / "report.json").read_text())["model_usage"]["requests"]
    assert request["outcome"] == "answered"
    assert [str(p) for p in folder.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()] == []


@pytest.mark.slow
@needs_bubblewrap
def test_a_command_line_matrix_with_the_model_only_network_leaves_each_agent_its_gateway_alone(
    tmp_path: Path,
) -> None:
    """``--trials 1 --agent-network model``: the fenced stand-in's model requests (two a turn) are
    answered through its session's gateway, a loopback listener of the test is unreached, and the run's
    records and the matrix manifest say ``model``."""
    loopback = Loopback()
    reachable([loopback.address], lambda: (loopback.count,))
    with ModelServer(Script(()), DIALECTS["claude-code"]) as server:
        results = tmp_path / "results"
        done = changeup(
            "run",
            str(CHALLENGE),
            "--agent",
            "claude-code",
            "--agent-option",
            f"binary={FENCED_CLI}",
            "--trials",
            "1",
            "--agent-network",
            "model",
            "--model-upstream",
            server.url,
            "--out",
            str(results),
            "-q",
            timeout=600,
            env={"ANTHROPIC_API_KEY": "sk-ant-real-matrix-3d9e", "FENCE_TARGETS": loopback.address},
        )
        answered = server.answered()
    (folder,) = sorted(results.glob("runs/*"))
    seen = json.loads((folder / "workspace" / "fence.json").read_text())
    assert seen["model"] == seen["model_after"] == 200, [seen, done.stderr[-3000:]]
    assert seen[loopback.address].startswith("refused: "), seen
    assert loopback.count == 1  # the one made from here
    records = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()[1:]]
    turns = [r for r in records if r["kind"] == "agent.turn_ended"]
    assert len(answered) == 2 * len(turns) > 0  # two a turn (each turn's fence.json is the last's)
    (sandboxed,) = [r for r in records if r["kind"] == "agent.sandboxed"]
    (created,) = [r for r in records if r["kind"] == "workspace.created"]
    assert sandboxed["network"] == "model"
    assert created["sandbox"]["agent_network"] == {
        "network": "model",
        "chosen": "given",
        "why": "the matrix's agent_network",
    }
    assert json.loads((results / "manifest.json").read_text())["agent_network"] == "model"

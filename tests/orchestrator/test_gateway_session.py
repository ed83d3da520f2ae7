"""A real session through the model gateway: ``changeup run --model-gateway`` with the scripted model
server as upstream, and a stand-in CLI run as the claude-code preset's binary.

The usage in the report is, request for request, what the server sent; the cost is the shipped
table applied; the CLI's own figures are held against the gateway's (its cost, which no table
gives, is reported as a disagreement). The real keys, set in changeup's environment and in the
CLI's config file of the HOME it is seeded from, and the CLI's own login, are found nowhere in
the run folder, nor in the environment and HOME the agent saw: it held the session token only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.gateway.prices import PriceTable
from tests.modelserver import DIALECTS, ModelServer, Script
from tests.redteam.common import TARGET, run

pytestmark = pytest.mark.slow

LOGIN = "sk-ant-oat01-login-5e8a2d7c"  # Claude Code's own login, which the gateway makes needless
FAKE_CLI = Path(__file__).resolve().parents[1] / "fixtures" / "gateway-agent" / "fake_claude.py"
KEYS = {
    "ANTHROPIC_API_KEY": "sk-ant-real-4b1f0e9c7d2a",
    "OPENAI_API_KEY": "sk-oai-real-8e3d6a1f5c0b",
    "GEMINI_API_KEY": "gm-real-2c7f9a4e1b6d",
}


def _found(folder: Path, secret: bytes) -> list[str]:
    """Every file under ``folder`` that holds ``secret``."""
    return [
        str(p) for p in folder.rglob("*") if p.is_file() and not p.is_symlink() and secret in p.read_bytes()
    ]


def test_a_session_through_the_gateway_is_metered_exactly_and_never_holds_a_real_key(tmp_path: Path) -> None:
    """Four requests (Anthropic plain and streamed, OpenAI chat and Gemini streamed) in one turn."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude.json").write_text(json.dumps({"primaryApiKey": KEYS["ANTHROPIC_API_KEY"]}))
    settings = {"env": {"OPENAI_API_KEY": KEYS["OPENAI_API_KEY"]}}
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    (home / ".claude" / ".credentials.json").write_text(json.dumps({"claudeAiOauth": {"accessToken": LOGIN}}))
    with ModelServer(Script(()), DIALECTS["claude-code"]) as server:
        # A key under a name the gateway does not set (Claude Code's bearer token) is withheld too.
        env = {
            **KEYS,
            "ANTHROPIC_AUTH_TOKEN": KEYS["ANTHROPIC_API_KEY"],
            "HOME": str(home),
            "GOOGLE_API_KEY": "",
        }
        options = ("--agent-option", f"binary={FAKE_CLI}", "--model-gateway", "--model-upstream", server.url)
        report, folder = run(TARGET, "claude-code", tmp_path / "runs", *options, env=env)
        answered = server.answered()
    usage = report["model_usage"]
    assert report["run"]["status"] != "crashed", report["run"]
    # Request for request, the server's own figures (input: every prompt token).
    requests = usage["requests"]
    assert [r["outcome"] for r in requests] == ["answered"] * 4
    assert [r["streamed"] for r in requests] == [False, True, True, True]
    assert len(answered) == 4
    for request, exchange in zip(requests, answered, strict=True):
        assert exchange.tokens is not None
        write = exchange.tokens.cache_write if request["provider"] == "anthropic" else 0
        expected = (exchange.tokens.input, exchange.tokens.cache_read, write, exchange.tokens.output)
        got = (
            request["input_tokens"],
            request["cache_read_tokens"],
            request["cache_write_tokens"],
            request["output_tokens"],
        )
        assert got == expected
    # Cost: the shipped table applied; the table's date is in the report.
    table = PriceTable.load()
    assert usage["prices"]["date"] == table.date
    for request in requests:
        price = table.price(request["model"])
        assert price is not None
        fresh = request["input_tokens"] - request["cache_read_tokens"] - request["cache_write_tokens"]
        cost = (
            fresh * price.input
            + request["cache_read_tokens"] * price.cache_read
            + request["cache_write_tokens"] * price.cache_write
            + request["output_tokens"] * price.output
        ) / 1e6
        assert request["cost_usd"] == pytest.approx(cost, rel=1e-9)
    assert usage["total"]["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in requests), rel=1e-9)
    assert usage["turns"][0]["requests"] == 4
    assert usage["turns"][0]["input_tokens"] == sum(e.tokens.input for e in answered if e.tokens)
    # The CLI counted the same tokens; its cost is its own, and reported as a disagreement.
    assert [(d["turn"], d["figure"], d["cli"]) for d in usage["disagreements"]] == [(1, "cost_usd", 0.5)]
    # Upstream got the real keys; the agent never held one, anywhere.
    sent = [{n.lower(): v for n, v in e.headers.items()} for e in answered]
    assert sent[0]["x-api-key"] == KEYS["ANTHROPIC_API_KEY"]
    assert sent[2]["authorization"] == f"Bearer {KEYS['OPENAI_API_KEY']}"
    assert sent[3]["x-goog-api-key"] == KEYS["GEMINI_API_KEY"]
    seen = json.loads((folder / "workspace" / "seen.json").read_text())
    token = seen["env"]["CHANGEUP_MODEL_TOKEN"]
    assert token.startswith("changeup-session-")
    assert seen["env"]["ANTHROPIC_API_KEY"] == seen["env"]["OPENAI_API_KEY"] == token
    seeded = "\n".join(seen["home"].values())
    assert token in seeded  # its config files were seeded, the key in them replaced by the token
    assert sorted(Path(name).name for name in seen["home"]) == [".claude.json", "settings.json"]  # no login
    assert _found(folder, LOGIN.encode()) == []
    for key in KEYS.values():
        assert key not in json.dumps(seen)
        assert _found(folder, key.encode()) == []


def test_a_home_made_process_agent_is_metered_like_a_preset(tmp_path: Path) -> None:
    """A ``process:`` agent finds the gateway and its token in ``CHANGEUP_MODEL_*``; its one
    request is logged with the figures the server sent, and it never held the real key."""
    agent = f"process:python3 {FAKE_CLI.with_name('home_made.py')}"
    with ModelServer(Script(()), DIALECTS["codex"]) as server:
        env = {"OPENAI_API_KEY": KEYS["OPENAI_API_KEY"], "ANTHROPIC_API_KEY": "", "GEMINI_API_KEY": ""}
        options = ("--model-upstream", server.url)
        report, folder = run(TARGET, agent, tmp_path / "runs", *options, env=env)
        (exchange,) = server.answered()
    (request,) = report["model_usage"]["requests"]
    assert exchange.tokens is not None
    assert (request["input_tokens"], request["output_tokens"]) == (
        exchange.tokens.input,
        exchange.tokens.output,
    )
    assert (
        json.loads((folder / "workspace" / "usage.json").read_text())["input_tokens"] == exchange.tokens.input
    )
    assert (
        exchange.headers.get("authorization", exchange.headers.get("Authorization"))
        == f"Bearer {KEYS['OPENAI_API_KEY']}"
    )
    assert _found(folder, KEYS["OPENAI_API_KEY"].encode()) == []

"""``--agent-network model``: the agent reaches its model through the gateway, and nothing else.

A real session through the CLI, with the scripted model server as the gateway's upstream and a
stand-in CLI (``tests/fixtures/gateway-agent/fenced_claude.py``) run as the claude-code preset's
binary, which asks its model, then tries every way out: a loopback listener of the test on
another port, a listener in a second network namespace (joined to this one by a veth pair, so
reachable from here), the gateway's Unix socket directly, the gateway as a forward proxy, and
killing every process it sees (the forwarder among them); then asks its model again. The
listeners count connections: none arrives.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.modelserver import DIALECTS, ModelServer, Script
from tests.redteam.common import TARGET, needs_bubblewrap, run, run_cli
from tests.redteam.fence import Loopback, reachable, second_namespace

pytestmark = pytest.mark.slow

FENCED_CLI = Path(__file__).resolve().parents[1] / "fixtures" / "gateway-agent" / "fenced_claude.py"


@needs_bubblewrap
def test_a_model_only_agent_reaches_its_model_and_nothing_else(tmp_path: Path) -> None:
    """Both model requests answered through the gateway; every other way out fails, and neither
    listener counts a connection from the session (each counts the one made from here first)."""
    with second_namespace(tmp_path) as (elsewhere, counted):
        loopback = Loopback()
        reachable([loopback.address, elsewhere], lambda: (loopback.count, counted()))
        seen, answered, folder = _session(tmp_path, f"{loopback.address},{elsewhere}")
        assert (loopback.count, counted()) == (1, 1), seen  # nothing came from the session
    assert seen["model"] == seen["model_after"] == 200, seen  # the forwarder outlived the kill
    assert len(answered) == 2
    for target in (loopback.address, elsewhere):
        assert seen[target].startswith("refused: "), seen
    assert seen["unix"].startswith("refused: PermissionError"), seen  # root's socket in root's folder
    # The gateway is no proxy: a CONNECT has no token, an absolute URL no route.
    assert seen["connect"] == "HTTP/1.1 401 ", seen
    assert seen["absolute"] == "HTTP/1.1 404 ", seen
    kills = seen["kill"]  # the forwarder (root's) among them
    assert kills, seen
    assert all(isinstance(p, str) and p.endswith("Operation not permitted") for p in kills), seen
    records = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
    (sandboxed,) = [r for r in records if r.get("kind") == "agent.sandboxed"]
    assert sandboxed["network"] == "model"


def test_without_bubblewrap_a_model_only_network_is_refused_not_widened(tmp_path: Path) -> None:
    """No network namespace can be made: the run is refused, saying why, and nothing is made."""
    out = tmp_path / "runs"
    env = {"CHANGEUP_SANDBOX": "user", "ANTHROPIC_API_KEY": "sk-ant-real-fence", "FENCE_TARGETS": "x:1"}
    options = ("--agent-option", f"binary={FENCED_CLI}", "--agent-network", "model")
    done = run_cli(TARGET, "claude-code", out, *options, "--model-upstream", "http://127.0.0.1:9", env=env)
    assert done.returncode != 0
    assert "--agent-network model needs a network namespace of bubblewrap's" in done.stderr
    assert "CHANGEUP_SANDBOX=user was set" in done.stderr
    assert not out.exists() or not any(out.iterdir())


def _session(tmp_path: Path, targets: str) -> tuple[dict[str, Any], list[Any], Path]:
    """The fenced CLI's session: what it saw, what the server answered, its run folder."""
    with ModelServer(Script(()), DIALECTS["claude-code"]) as server:
        env = {"ANTHROPIC_API_KEY": "sk-ant-real-fence", "FENCE_TARGETS": targets}
        options = ("--agent-option", f"binary={FENCED_CLI}", "--agent-network", "model")
        report, folder = run(
            TARGET, "claude-code", tmp_path / "runs", *options, "--model-upstream", server.url, env=env
        )
        answered = server.answered()
    assert report["run"]["status"] != "crashed", report["run"]
    seen = json.loads((folder / "workspace" / "fence.json").read_text())
    return seen, answered, folder

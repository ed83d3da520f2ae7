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
from tests.redteam.common import TARGET, needs_bubblewrap, records, run, run_cli
from tests.redteam.fence import Loopback, reachable, second_namespace

pytestmark = pytest.mark.slow

FENCED_CLI = Path(__file__).resolve().parents[1] / "fixtures" / "gateway-agent" / "fenced_claude.py"
FAKE_CLI = FENCED_CLI.with_name("fake_claude.py")


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


@needs_bubblewrap
def test_by_default_a_vendor_preset_whose_model_the_gateway_serves_is_left_its_model_alone(
    tmp_path: Path,
) -> None:
    """No ``--agent-network``: claude-code, its model served by ``--model-upstream``, gets the
    model-only network: both requests answered, the test's loopback listener unreached, and the
    record says the default chose it and why."""
    loopback = Loopback()
    reachable([loopback.address], lambda: (loopback.count,))
    seen, answered, folder = _session(tmp_path, loopback.address, network=None)
    assert seen["model"] == seen["model_after"] == 200, seen
    assert len(answered) == 2
    assert seen[loopback.address].startswith("refused: "), seen
    assert loopback.count == 1  # the one made from here
    logged = records(folder)
    (sandboxed,) = [r for r in logged if r["kind"] == "agent.sandboxed"]
    (created,) = [r for r in logged if r["kind"] == "workspace.created"]
    assert sandboxed["network"] == "model"
    assert created["sandbox"]["agent_network"] == {
        "network": "model",
        "chosen": "default",
        "why": "claude-code: its model gateway answers through --model-upstream",
    }


def test_where_the_model_only_network_cannot_be_made_a_preset_keeps_the_whole_one_and_says_so(
    tmp_path: Path,
) -> None:
    """No bubblewrap (``CHANGEUP_SANDBOX=user``) and no ``--agent-network``: the run goes on with
    the whole network, a warning on standard error and the record saying why; the gateway still
    answers its model."""
    out = tmp_path / "runs"
    with ModelServer(Script(()), DIALECTS["claude-code"]) as server:
        env = {"CHANGEUP_SANDBOX": "user", "ANTHROPIC_API_KEY": "sk-ant-real-fence", "HOME": str(tmp_path)}
        options = ("--agent-option", f"binary={FAKE_CLI}", "--model-upstream", server.url)
        done = run_cli(TARGET, "claude-code", out, *options, env=env)
        answered = server.answered()
    why = (
        "the model-only network cannot work here: it needs bubblewrap's network namespace, and "
        "CHANGEUP_SANDBOX=user was set"
    )
    assert f"warning: the agent keeps the whole network (--agent-network full): {why}" in done.stderr
    (folder,) = sorted(out.iterdir())
    report = json.loads((folder / "report.json").read_text())
    assert report["run"]["status"] not in ("crashed", "invalid"), report["run"]
    assert len(answered) == 4  # the stand-in's four requests, through the gateway
    logged = records(folder)
    (sandboxed,) = [r for r in logged if r["kind"] == "agent.sandboxed"]
    (created,) = [r for r in logged if r["kind"] == "workspace.created"]
    assert sandboxed["network"] == "full"
    chosen = created["sandbox"]["agent_network"]
    assert (chosen["network"], chosen["chosen"]) == ("full", "default")
    assert chosen["why"].startswith(why)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["sandbox"]["agent_network"] == chosen


def _session(
    tmp_path: Path, targets: str, network: str | None = "model"
) -> tuple[dict[str, Any], list[Any], Path]:
    """The fenced CLI's session (``--agent-network network``; None: not given): what it saw, what
    the server answered, its run folder."""
    with ModelServer(Script(()), DIALECTS["claude-code"]) as server:
        env = {"ANTHROPIC_API_KEY": "sk-ant-real-fence", "FENCE_TARGETS": targets}
        given = ("--agent-network", network) if network else ()
        options = ("--agent-option", f"binary={FENCED_CLI}", *given)
        report, folder = run(
            TARGET, "claude-code", tmp_path / "runs", *options, "--model-upstream", server.url, env=env
        )
        answered = server.answered()
    assert report["run"]["status"] != "crashed", report["run"]
    seen = json.loads((folder / "workspace" / "fence.json").read_text())
    return seen, answered, folder

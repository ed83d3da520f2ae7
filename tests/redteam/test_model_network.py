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
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.modelserver import DIALECTS, ModelServer, Script
from tests.redteam.common import TARGET, needs_bubblewrap, needs_root, run

pytestmark = [pytest.mark.slow, needs_bubblewrap]

FENCED_CLI = Path(__file__).resolve().parents[1] / "fixtures" / "gateway-agent" / "fenced_claude.py"
#: A listener that writes one line to a file per connection it accepts.
COUNTER = """
import socket, sys
listener = socket.create_server((sys.argv[1], 0))
open(sys.argv[2] + ".port", "w").write(str(listener.getsockname()[1]))
while True:
    connection, _ = listener.accept()
    open(sys.argv[2], "a").write("connection\\n")
    connection.close()
"""


class Loopback:
    """A listener on 127.0.0.1 of this namespace that counts the connections it accepts."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.count = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.count += 1
            connection.close()


@pytest.fixture
def other_namespace(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A second network namespace, reachable from this one at ``10.231.N.2`` (a veth pair), with
    a counting listener there; its ``host:port`` and the file it counts in."""
    if shutil.which("ip") is None:
        pytest.skip("LOUD SKIP: no iproute2 (ip) to make a second network namespace")
    n = os.getpid() % 250
    name, outer, inner = f"changeup-t{os.getpid()}", f"cuo{os.getpid()}"[:15], f"cui{os.getpid()}"[:15]
    address = f"10.231.{n}.2"

    def ip(*args: str) -> None:
        subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)

    ip("netns", "add", name)
    counter: subprocess.Popen[bytes] | None = None
    try:
        ip("link", "add", outer, "type", "veth", "peer", "name", inner)
        ip("link", "set", inner, "netns", name)
        ip("addr", "add", f"10.231.{n}.1/24", "dev", outer)
        ip("link", "set", outer, "up")
        ip("-n", name, "addr", "add", f"{address}/24", "dev", inner)
        ip("-n", name, "link", "set", inner, "up")
        ip("-n", name, "link", "set", "lo", "up")
        count = tmp_path / "other-namespace.count"
        command = ["ip", "netns", "exec", name, sys.executable, "-c", COUNTER, address, str(count)]
        counter = subprocess.Popen(command)
        port = count.with_suffix(".count.port")
        for _ in range(600):
            if port.is_file() and port.read_text():
                break
            threading.Event().wait(0.1)
        yield f"{address}:{port.read_text()}", count
    finally:
        if counter is not None:
            counter.kill()
            counter.wait()
        subprocess.run(["ip", "link", "del", outer], capture_output=True, timeout=30, check=False)
        subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=30, check=False)


def _count(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.is_file() else 0


@needs_root
def test_a_model_only_agent_reaches_its_model_and_nothing_else(
    tmp_path: Path, other_namespace: tuple[str, Path]
) -> None:
    """Both model requests answered through the gateway; every other way out fails, and neither
    listener counts a connection from the session (the second namespace's does count one from
    here first: it is reachable, from outside the sandbox)."""
    elsewhere, counted = other_namespace
    host, port = elsewhere.rsplit(":", 1)
    socket.create_connection((host, int(port)), timeout=30).close()
    loopback = Loopback()
    socket.create_connection(("127.0.0.1", loopback.port), timeout=30).close()
    for _ in range(300):
        if _count(counted) == 1 and loopback.count == 1:
            break
        threading.Event().wait(0.1)
    assert (_count(counted), loopback.count) == (1, 1)  # both reachable from here
    targets = f"127.0.0.1:{loopback.port},{elsewhere}"
    with ModelServer(Script(()), DIALECTS["claude-code"]) as server:
        env = {"ANTHROPIC_API_KEY": "sk-ant-real-fence", "FENCE_TARGETS": targets}
        options = ("--agent-option", f"binary={FENCED_CLI}", "--agent-network", "model")
        report, folder = run(
            TARGET, "claude-code", tmp_path / "runs", *options, "--model-upstream", server.url, env=env
        )
        answered = server.answered()
    assert report["run"]["status"] != "crashed", report["run"]
    seen = json.loads((folder / "workspace" / "fence.json").read_text())
    assert seen["model"] == seen["model_after"] == 200, seen  # the forwarder outlived the kill
    assert len(answered) == 2
    assert (_count(counted), loopback.count) == (1, 1), seen  # nothing came from the session
    for target in targets.split(","):
        assert seen[target].startswith("refused: "), seen
    assert seen["unix"].startswith("refused: PermissionError"), seen  # root's socket, mode 0600
    # The gateway is no proxy: a CONNECT has no token, an absolute URL no route.
    assert seen["connect"] == "HTTP/1.1 401 ", seen
    assert seen["absolute"] == "HTTP/1.1 404 ", seen
    kills = seen["kill"]  # the forwarder (root's) among them
    assert kills, seen
    assert all(isinstance(p, str) and p.endswith("Operation not permitted") for p in kills), seen
    records = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
    (sandboxed,) = [r for r in records if r.get("kind") == "agent.sandboxed"]
    assert sandboxed["network"] == "model"

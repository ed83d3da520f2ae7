"""A local two-node Ray cluster in a loopback-only network namespace, for the Ray backend's tests.

Ray binds to, and dials, the host's interface address unless it has none: so the cluster runs
in a network namespace of its own that has only ``lo`` (``unshare -n``, with its own hostname,
``localhost``, so that every Ray process finds its address on loopback), and every ``changeup``
the tests start joins that namespace (``nsenter``). The test process itself never talks to Ray.
Where the namespace cannot be made (not root, no ``unshare``), the tests are skipped, saying why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from tests.cli import CHANGEUP, REPO, environment

#: A bound on waiting for the cluster to answer, never a condition of a test.
ANSWER = 300.0


def _namespace_problem() -> str | None:
    """Why a loopback-only network namespace cannot be made here (None: it can)."""
    if os.geteuid() != 0:
        return "not root: unshare -n needs CAP_SYS_ADMIN (CI runs as root)"
    for tool in ("unshare", "nsenter", "ip", "hostname"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (util-linux, iproute2)"
    done = subprocess.run(
        ["unshare", "-n", "-u", "--", "sh", "-c", "ip link set lo up && hostname localhost"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return f"unshare -n -u fails here: {done.stderr.strip()}"
    return None


class LoopbackCluster:
    """The cluster holder (``tests/scale/cluster.py``) and a way into its namespace."""

    def __init__(self, process: subprocess.Popen[str], root: Path) -> None:
        self.process = process
        self.root = root
        first = self._answer()
        self.address: str = first["address"]
        self.nodes: dict[str, str] = {"head": first["head"]}
        ours, theirs = os.readlink("/proc/self/ns/net"), os.readlink(f"/proc/{process.pid}/ns/net")
        assert ours != theirs, "the cluster is not in a network namespace of its own"

    def _answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the cluster holder ended (exit {self.process.wait()}); see its stderr")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send one request to the holder; its answer."""
        stdin: IO[str] | None = self.process.stdin
        assert stdin is not None
        stdin.write(json.dumps(request) + "\n")
        stdin.flush()
        return self._answer()

    def add(self, name: str, resources: dict[str, float], cpus: float = 1) -> str:
        """Start a node called ``name``; its Ray node id."""
        node: str = self.ask({"add": name, "cpus": cpus, "resources": resources})["node"]
        self.nodes[name] = node
        return node

    def remove(self, name: str) -> None:
        """Kill the node ``name`` and every process of it."""
        self.ask({"remove": name})
        del self.nodes[name]

    def inside(self, argv: list[str]) -> list[str]:
        """``argv`` run in the cluster's namespaces (network and hostname)."""
        pid = self.process.pid
        return ["nsenter", f"--net=/proc/{pid}/ns/net", f"--uts=/proc/{pid}/ns/uts", "--", *argv]

    def changeup(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        """``changeup ARGS`` in the cluster's namespace, waited for."""
        return subprocess.run(
            self.inside([*CHANGEUP, *args]),
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env=environment(),
        )

    def start(self, *args: str, log: Path) -> subprocess.Popen[bytes]:
        """``changeup ARGS`` in the cluster's namespace, not waited for (its output in ``log``)."""
        with log.open("wb") as out:
            return subprocess.Popen(
                self.inside([*CHANGEUP, *args]),
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=environment(),
            )


@pytest.fixture(scope="package")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackCluster]:
    """A head (1 CPU, resource ``head``) and a node ``second`` (1 CPU, resource ``second``), on
    loopback only; stopped, every process of it, when the tests are done."""
    problem = _namespace_problem()
    if problem is not None:
        pytest.skip(f"the Ray backend's tests need a loopback-only network namespace: {problem}")
    root = tmp_path_factory.mktemp("nodes")
    script = 'hostname localhost && ip link set lo up && exec "$0" -m tests.scale.cluster "$1"'
    with (root / "holder.log").open("wb") as log:
        process = subprocess.Popen(
            ["unshare", "-n", "-u", "--", "sh", "-c", script, CHANGEUP[0], str(root)],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env=environment(),
        )
    try:
        held = LoopbackCluster(process, root)
        held.add("second", {"second": 1})
        yield held
    finally:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.close()  # the holder stops the cluster
        try:
            process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()


def marked(marker: str) -> list[int]:
    """Processes whose command line holds ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                line = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in line:
                found.append(int(entry))
    return found


def wait_for(what: str, ready: Any, bound: float = ANSWER) -> Any:
    """Poll ``ready()`` until it returns something true; that value (``what``: for the failure)."""
    deadline = time.monotonic() + bound
    while True:
        value = ready()
        if value:
            return value
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.05)

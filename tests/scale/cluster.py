"""A local Ray cluster for the tests, held by one process inside a loopback-only network namespace.

``python -m tests.scale.cluster ROOT`` (started by ``tests/scale/conftest.py`` under
``unshare -n``) refuses to start unless the namespace it is in has no network interface but
``lo``: every address Ray binds to or dials is then on loopback. It starts a head node
(``ray.cluster_utils.Cluster``), prints ``{"address", "head"}`` as one JSON line, then serves
one JSON request a line on stdin, answering each on stdout:

- ``{"add": NAME, "cpus": N, "resources": {...}}``: start a node; ``{"node": ID}``;
- ``{"remove": NAME}``: kill that node and every process of it; ``{"removed": NAME}``;
- ``{"hold": CPUS}`` / ``{"release": true}``: an actor that holds CPUs of the head (so that
  sessions can only be placed elsewhere) is made / killed; ``{"held": CPUS}`` / ``{"released": true}``.

Each node's workers keep their session folders under ``ROOT/<node name>``
(``CHANGEUP_WORKER_ROOT``), so every node has a disk of its own. The end of stdin stops the
cluster. Never imported by the suite: it runs in its own process.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

import ray
from ray.cluster_utils import Cluster

LOOPBACK = "127.0.0.1"


class Holder:
    """Holds the CPUs it was made with, doing nothing."""

    def ready(self) -> bool:
        """Placed and started."""
        return True


#: The holder as a Ray actor class.
HOLDER: Any = ray.remote(Holder)


def interfaces() -> list[str]:
    """The network interfaces of this process's namespace (``/proc/net/dev``: ``/sys`` may show
    the namespace it was mounted in)."""
    lines = Path("/proc/net/dev").read_text().splitlines()[2:]
    return sorted(line.split(":", 1)[0].strip() for line in lines)


def node_args(root: Path, name: str, cpus: float, resources: dict[str, float], temp: str) -> dict[str, Any]:
    """A node's settings: on loopback, no dashboard, its own work folder."""
    return {
        "num_cpus": cpus,
        "resources": resources,
        "node_ip_address": LOOPBACK,
        "include_dashboard": False,
        "temp_dir": temp,
        "env_vars": {"CHANGEUP_WORKER_ROOT": str(root / name)},
    }


def answers() -> IO[str]:
    """The channel of the answers: what stdout was. Ray's processes print to stdout too (a dying
    raylet's last log lines, for one), so from now on stdout goes where stderr goes."""
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    return channel


def say(channel: IO[str], line: dict[str, Any]) -> None:
    """One answer, one line."""
    channel.write(json.dumps(line) + "\n")


def main() -> int:
    """Start the cluster, then serve requests until stdin ends."""
    root = Path(sys.argv[1])
    channel = answers()
    if interfaces() != ["lo"]:
        print(
            f"refusing to start Ray: this namespace has interfaces {interfaces()}, not only lo",
            file=sys.stderr,
        )
        return 3
    # Ray's own sockets live under its temporary folder, whose path must stay short; with
    # RAY_TMPDIR, the files Ray keeps outside a cluster's folder (its address) go there too.
    temp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")
    os.environ["RAY_TMPDIR"] = temp
    (Path(temp) / "ray").mkdir()
    try:
        cluster = Cluster(initialize_head=True, head_node_args=node_args(root, "head", 1, {"head": 1}, temp))
        try:
            serve(cluster, root, temp, channel)
        finally:
            ray.shutdown()
            cluster.shutdown()  # type: ignore[no-untyped-call]  # Ray leaves it untyped
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    return 0


def serve(cluster: Cluster, root: Path, temp: str, channel: IO[str]) -> None:
    """Say where the cluster is, then answer requests until stdin ends."""
    head = cluster.head_node
    assert head is not None
    nodes = {"head": head}
    ray.init(address=cluster.address, logging_level=logging.ERROR, log_to_driver=False)
    say(channel, {"address": cluster.address, "head": head.node_id})
    held: Any = None
    for line in sys.stdin:
        request = json.loads(line)
        if "add" in request:
            args = node_args(root, request["add"], request["cpus"], request["resources"], temp)
            node = cluster.add_node(wait=True, **args)
            nodes[request["add"]] = node
            cluster.wait_for_nodes()
            say(channel, {"node": node.node_id})
        elif "remove" in request:
            cluster.remove_node(nodes.pop(request["remove"]), allow_graceful=False)
            say(channel, {"removed": request["remove"]})
        elif "hold" in request:
            held = HOLDER.options(num_cpus=request["hold"], resources={"head": 0.01}).remote()
            ray.get(held.ready.remote())
            say(channel, {"held": request["hold"]})
        elif "release" in request:
            ray.kill(held)
            held = None
            say(channel, {"released": True})


if __name__ == "__main__":
    sys.exit(main())

"""The Ray backend for real: real sessions on a local two-node cluster, shipped there and back.

Every moment a test acts on ("mid-session", "the retry has started") is read from the run's log
on the worker node's own disk or from the attempts log, never from a clock. The cluster's nodes
each keep their work folders apart (``ROOT/<node>``), as machines with no shared disk would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli import REPO, changeup
from tests.e2e.test_matrix import log_of, outcomes
from tests.scale.conftest import LoopbackCluster, marked, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

#: 2 challenges x 2 agents x 3 trials, the matrix of tests/e2e/test_matrix.py as a file, its
#: impostor pinned to the node that has the resource ``second``.
PINNED = """\
matrix:
  challenges: [{repo}/challenges/normalize-tags, {repo}/challenges/export-time]
  trials: 3
  agents:
    - name: reference
      agent: scripted
    - name: impostor
      agent: impostor:always-equal
      resources: {{second: 1}}
  decision:
    candidate: impostor
    baseline: reference
    rules:
      - rule: critical_failure_blocks
      - rule: full_success_not_lower
"""

#: One session whose agent waits, in its first turn, for a file ``open`` in ``gate``.
WAITS = """\
matrix:
  challenges: [{repo}/challenges/normalize-tags]
  agents:
    - name: waits
      agent: "command:while [ ! -e {gate}/open ]; do sleep 0.1; done"
  agent_shares: [{gate}]
  backend: {{kind: ray, address: "{address}"{timeout}}}
"""


def delivered(cluster: LoopbackCluster, node: str, gate: Path) -> bool:
    """Whether the session of the agent waiting on ``gate``, on ``node``'s own disk, has logged a
    message delivered to it (a work folder says whose it is in its order)."""
    for work in (cluster.root / node).glob("session-*"):
        order = work / "order.json"
        if order.is_file() and str(gate) in order.read_text():
            for log in work.glob("runs/*/events.jsonl"):
                if '"message.delivered"' in log.read_text(errors="replace"):
                    return True
    return False


def finished(results: Path) -> list[dict[str, Any]]:
    """The attempts log's ``finished`` records."""
    return [r for r in log_of(results) if r["event"] == "finished"]


def test_the_matrix_through_ray_compares_as_it_does_locally_with_its_pinned_agent_on_its_node(
    cluster: LoopbackCluster, tmp_path: Path
) -> None:
    """The 2 x 2 x 3 matrix on the two-node cluster: compare.json equals the local run's, timings
    and provenance aside, verdict included; every impostor session ran on the node with the
    resource ``second``; every run folder came back whole (its log replays)."""
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(PINNED.format(repo=REPO))
    local, remote = tmp_path / "local", tmp_path / "remote"
    here = changeup(
        "run", "--matrix", str(matrix), "--out", str(local), "--concurrency", "4", "-q", timeout=600
    )
    assert here.returncode == 0, here.stderr
    there = cluster.changeup(
        "run",
        "--matrix",
        str(matrix),
        "--out",
        str(remote),
        "--backend",
        "ray",
        "--address",
        cluster.address,
        "-q",
    )
    assert there.returncode == 0, there.stderr
    ours, theirs = (json.loads((r / "compare.json").read_text()) for r in (remote, local))
    assert outcomes(ours) == outcomes(theirs)
    assert ours["decision"]["verdict"] == theirs["decision"]["verdict"]
    assert ours["provenance"]["interrupted"] == 0
    folders = sorted((remote / "runs").iterdir())
    assert len(folders) == 12
    for folder in folders:
        worker = json.loads((folder / "worker.json").read_text())
        assert not (folder / "pid").exists()  # a pid of another machine says nothing here
        if "--impostor--" in folder.name:
            assert worker["node"] == cluster.nodes["second"], folder.name
            assert worker["resources"] == {"second": 1}
    replayed = changeup("replay", str(folders[0]))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "agrees" in replayed.stdout


def test_a_session_whose_node_is_removed_is_retried_on_the_head(
    cluster: LoopbackCluster, tmp_path: Path
) -> None:
    """The head's CPU held, the session starts on ``second``; once its log there shows its agent at
    work, the node is removed: the attempt is recorded interrupted, its whole process tree is gone,
    and the retry, once the head is free, runs there and completes; compare.md shows both."""
    gate, results = tmp_path / "gate", tmp_path / "results"
    gate.mkdir()
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(WAITS.format(repo=REPO, gate=gate, address=cluster.address, timeout=""))
    cluster.ask({"hold": 1})
    held = True
    driver = cluster.start(
        "run", "--matrix", str(matrix), "--out", str(results), "-q", log=tmp_path / "driver.log"
    )
    try:
        wait_for("the agent at work on the second node", lambda: delivered(cluster, "second", gate))
        # The briefing is logged as delivered just before the agent's process starts: wait for it.
        lost = wait_for("the waiting agent's processes", lambda: marked(str(gate)))
        second = cluster.nodes["second"]
        cluster.remove("second")
        wait_for("the lost attempt recorded", lambda: finished(results))
        wait_for("the retry started", lambda: sum(r["event"] == "started" for r in log_of(results)) == 2)
        wait_for("the lost session's processes gone", lambda: not set(lost) & set(marked(str(gate))))
        cluster.ask({"release": True})
        held = False
        (gate / "open").touch()
        assert driver.wait(timeout=600) == 0, (tmp_path / "driver.log").read_text()
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        if held:
            cluster.ask({"release": True})
        if "second" not in cluster.nodes:
            cluster.add("second", {"second": 1})
    first, retry = finished(results)
    assert (first["attempt"], first["status"]) == (1, "interrupted")
    assert second in first["detail"]
    assert "died before the session ended" in first["detail"]
    (started,) = [r for r in log_of(results) if r["event"] == "started" and r["attempt"] == 2]
    assert (started["reason"], started["retry_of"]) == ("interrupted", 1)
    assert (retry["attempt"], retry["status"]) == (2, "completed")
    worker = json.loads((results / started["run"] / "worker.json").read_text())
    assert worker["node"] == cluster.nodes["head"]
    report = (results / "compare.md").read_text()
    assert "attempt 1: normalize-tags · waits · trial 1 #1, interrupted" in report
    assert (
        "attempt 2: normalize-tags · waits · trial 1 #2, completed, after attempt 1 (interrupted)" in report
    )


def test_a_session_past_its_timeout_is_cancelled_by_force_with_its_process_tree(
    cluster: LoopbackCluster, tmp_path: Path
) -> None:
    """A session whose agent never ends, with a 60 s timeout: once its agent is seen at work, the
    attempt ends timed out, killed by its host at its limit with its run folder brought back, and no
    process of it is left on its node."""
    gate, results = tmp_path / "gate", tmp_path / "results"
    gate.mkdir()
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(
        WAITS.format(repo=REPO, gate=gate, address=cluster.address, timeout=", session_timeout: 60s")
    )
    driver = cluster.start(
        "run", "--matrix", str(matrix), "--out", str(results), "-q", log=tmp_path / "driver.log"
    )
    try:
        wait_for(
            "the agent at work",
            lambda: delivered(cluster, "head", gate) or delivered(cluster, "second", gate),
        )
        # The briefing is logged as delivered just before the agent's process starts: wait for it.
        wait_for("the waiting agent's processes", lambda: marked(str(gate)))
        assert driver.wait(timeout=600) == 1, (tmp_path / "driver.log").read_text()
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    (record,) = finished(results)
    assert record["status"] == "timed out"
    assert (
        "still running after 60s, its wall-time limit: killed with its whole process tree" in record["detail"]
    )
    (run,) = (results / "runs").iterdir()
    assert '"session.aborted"' in (run / "events.jsonl").read_text()
    wait_for("every process of the session gone", lambda: not marked(str(gate)))

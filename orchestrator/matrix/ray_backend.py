"""The Ray backend: each session of a matrix runs whole on a worker of a Ray cluster (docs/scale.md).

Ray is imported here and nowhere else, and only when a :class:`RayBackend` is made, so
changeup runs without it (``pip install 'changeup[ray]'`` brings it). The driver stays where
RESULTS is; no filesystem is shared. One attempt goes like this:

1. a :class:`~orchestrator.matrix.worker.SessionHost` actor, one worker process, is placed on
   a node that has the session's CPUs (``backend.cpus``) and the agent's custom resources
   (its ``resources:``); until one is free, the attempt waits for it;
2. it says where it is; a node whose changeup is another version is refused (the attempt crashes);
3. the order, the challenge's parcel (packed once per challenge, ``parcel.py``), the values
   of the agent's ``send_env`` variables and the session's wall-time limit are sent to it; it
   runs the session in a process of its own (``session_process.py``), kills it with its tree
   at the limit, and answers with how it ended and the run folder's parcel, unpacked here as
   ``RESULTS/runs/NAME``, with ``worker.json`` (the node, host and process that ran it) in
   place of the remote ``pid``;
4. the actor is killed.

The session's wall-time limit is ``session_timeout``, by default its challenge's session
limit and ten minutes; the host kills the session process at that limit (the attempt is
``timed out``, as locally). If the worker or its node dies first, the attempt is lost
(:class:`SessionLost`: the driver records it interrupted and runs the cell again). A host that
has not answered :data:`SHIPPING` after the limit is cancelled by force: the actor's process is
killed, and the reaper its session runs under takes every process of it along (``worker.py``);
the attempt is ``timed out``, with no run folder.
"""

from __future__ import annotations

import json
import logging
import os
from importlib.metadata import version
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio

from orchestrator.challenge.model import IGNORED_PARTS, Challenge
from orchestrator.log.cells import SessionOrder
from orchestrator.matrix.backends import BackendError, SessionLost, SessionTimedOut
from orchestrator.matrix.parcel import pack, unpack
from orchestrator.matrix.session_process import SessionEnd, wall_limit
from orchestrator.matrix.spec import AgentPlan, Matrix
from orchestrator.matrix.worker import SessionHost

__all__ = ["SHIPPING", "WORKER", "RayBackend"]

#: The file of a run folder that says where it ran.
WORKER = "worker.json"
#: Beyond a session's wall-time limit, how long its host may take to kill it and pack its run folder.
SHIPPING = 300.0
#: How long the checks before the first session may wait for a node.
_PREFLIGHT = 300.0


def _import_ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise BackendError("the ray backend needs Ray: pip install 'changeup[ray]'") from None
    return ray


class _NodeHost(SessionHost):
    """A session host that also names its Ray node."""

    def where(self) -> dict[str, Any]:
        """As :meth:`SessionHost.where`, with the Ray node's id and address."""
        import ray

        node = ray.get_runtime_context().get_node_id()
        address = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]  # Ray leaves it untyped
        return {**super().where(), "node": node, "address": address}


class RayBackend:
    """Runs each order as one session on a worker of the Ray cluster at ``address``."""

    def __init__(
        self,
        address: str,
        matrix: Matrix,
        *,
        capacity: int | None = None,
        session_timeout: float | None = None,
        cpus: float = 1.0,
    ) -> None:
        missing = [(p.name, n) for p in matrix.agents for n in p.send_env if n not in os.environ]
        if missing:
            named = ", ".join(f"{name} (agent {agent})" for agent, name in missing)
            raise BackendError(f"send_env names variables this environment does not set: {named}")
        ray = _import_ray()
        try:
            # No runtime_env: nothing of this machine (its files, its environment) goes along.
            ray.init(address=address, namespace="changeup", logging_level=logging.ERROR, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as error:
            raise BackendError(f"cannot join the Ray cluster at {address}: {error}") from None
        self._ray = ray
        self._matrix = matrix
        self._cpus = cpus
        self._timeout = session_timeout
        self._version = version("changeup")
        self._host = ray.remote(_NodeHost)
        self._parcels: dict[str, bytes] = {}
        nodes = [node for node in ray.nodes() if node["Alive"]]
        for plan in matrix.agents:
            self._check_feasible(plan, nodes)
        total = sum(node["Resources"].get("CPU", 0.0) for node in nodes)
        self.capacity = capacity or max(1, int(total // cpus))

    def close(self) -> None:
        """Leave the cluster (it goes on running)."""
        self._ray.shutdown()

    def _check_feasible(self, plan: AgentPlan, nodes: list[dict[str, Any]]) -> None:
        wanted = {"CPU": self._cpus, **plan.resources}
        if any(all(node["Resources"].get(k, 0.0) >= v for k, v in wanted.items()) for node in nodes):
            return
        seen = "; ".join(f"{node['NodeManagerAddress']}: {_custom(node['Resources'])}" for node in nodes)
        raise BackendError(
            f"agent {plan.name}'s sessions need {wanted}, which no node of the cluster has "
            f"(its nodes: {seen or 'none alive'}); start a node with them "
            "(`ray start --address HEAD --resources '{...}'`) or change the agent's resources"
        )

    def _parcel(self, challenge: Challenge) -> bytes:
        if challenge.id not in self._parcels:
            self._parcels[challenge.id] = pack(challenge.root, skip=_ignored)
        return self._parcels[challenge.id]

    def preflight(self, matrix: Matrix) -> None:
        """Check, on a node with each agent's resources, that its specs can run every challenge
        (blocking); raises :class:`BackendError` with every problem found."""
        parcels = {c.id: self._parcel(c) for c in matrix.challenges}
        problems: list[str] = []
        for plan in matrix.agents:
            specs = [(spec, dict(plan.options)) for spec in plan.specs(matrix.trials)]
            # No CPU asked: the check needs no room, only a node with the agent's resources.
            host = self._host.options(num_cpus=0, resources=plan.resources or None).remote()
            try:
                found = self._ray.get(host.preflight.remote(specs, parcels), timeout=_PREFLIGHT)
            except self._ray.exceptions.GetTimeoutError:
                found = [f"no node with {plan.resources} answered within {_PREFLIGHT:g}s"]
            finally:
                self._ray.kill(host, no_restart=True)
            problems += [f"agent {plan.name}: {problem}" for problem in found]
        if problems:
            raise BackendError("\n".join(problems))

    async def run(self, order: SessionOrder) -> Path:
        """Run ``order``'s session on a worker; returns its run folder, brought back into ``order.out``."""
        plan = self._matrix.agent(order.cell.agent)
        challenge = next(c for c in self._matrix.challenges if c.id == order.cell.challenge)
        limit = wall_limit(challenge.model.limits, self._timeout)
        host = self._host.options(
            num_cpus=self._cpus, resources=plan.resources or None, max_restarts=0, max_task_retries=0
        ).remote()
        where: dict[str, Any] = {}
        try:
            where = await self._answer(host.where.remote(), where, None)
            if where["changeup"] != self._version:
                raise RuntimeError(
                    f"the node {where['address']} runs changeup {where['changeup']}, this driver "
                    f"{self._version}: install the same version on every node"
                )
            env = {name: os.environ[name] for name in plan.send_env}
            call = host.run.remote(order, self._parcel(challenge), env, limit)
            answer = await self._answer(call, where, limit + SHIPPING)
        finally:
            self._ray.kill(host, no_restart=True)
        folder = unpack(answer["parcel"], order.folder)
        (folder / "pid").unlink(missing_ok=True)  # a process of another machine: it says nothing here
        ran = {**where, "resources": plan.resources, "cpus": self._cpus}
        (folder / WORKER).write_text(json.dumps(ran, indent=2) + "\n")
        return SessionEnd(answer["status"], folder, answer["detail"]).settled()

    async def _answer(self, ref: Any, where: dict[str, Any], timeout: float | None) -> Any:
        """What the actor answers to the call ``ref``; a lost worker and the timeout raised as such."""
        exceptions = self._ray.exceptions
        node = f"{where.get('address', 'its node')} (node {where.get('node', '?')})"
        try:
            with anyio.fail_after(timeout):
                return await ref
        except TimeoutError:
            raise SessionTimedOut(
                f"the session was still running on {node} after {timeout:g}s: cancelled by force, "
                "its process tree with it"
            ) from None
        except exceptions.RayTaskError as error:  # the host raised: the session could not be run
            cause = getattr(error, "cause", None)
            raise RuntimeError(str(cause) if cause is not None else str(error)) from None
        except (
            exceptions.RayActorError,
            exceptions.NodeDiedError,
            exceptions.WorkerCrashedError,
            exceptions.ObjectLostError,
        ) as error:
            raise SessionLost(
                f"its worker on {node} died before the session ended ({type(error).__name__}); "
                "no run folder came back"
            ) from None


def _ignored(relative: str) -> bool:
    """Caches are not part of a challenge (``challenge_digest`` skips them too)."""
    return bool(IGNORED_PARTS & set(relative.split("/")))


def _custom(resources: dict[str, float]) -> dict[str, float]:
    """A node's resources without Ray's own per-node and memory entries."""
    return {
        k: v
        for k, v in resources.items()
        if not k.startswith("node:") and k not in ("memory", "object_store_memory")
    }

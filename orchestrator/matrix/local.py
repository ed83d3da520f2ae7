"""The local backend: a matrix's sessions run in this process, on anyio, ``capacity`` at a time.

Each attempt is one :func:`~orchestrator.session.runs.run_challenge`, as ``changeup run``
makes it, in its own run folder under ``RESULTS/runs/``. Sessions share nothing mutable:
each has its own folder, workspace, snapshots and scratch space; the grading environments
they share are built once and never changed under a running session (``grading/venvs.py``).
The driver (``driver.py``) hands this backend at most ``capacity`` orders at once.
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.agents import parse_agent
from orchestrator.challenge.loader import load_challenge
from orchestrator.grading.agent_sandbox import Share
from orchestrator.matrix.cells import SessionOrder
from orchestrator.scoring.judge import parse_judge
from orchestrator.session.runs import run_challenge

__all__ = ["LocalBackend", "parse_share"]


def parse_share(spec: str) -> Share:
    """An ``--agent-share`` value, ``PATH``, ``PATH:ro`` or ``PATH:rw``, as a :class:`Share`."""
    path, _, mode = spec.rpartition(":") if spec.endswith((":rw", ":ro")) else (spec, "", "ro")
    return Share(Path(path).expanduser().absolute(), writable=mode == "rw")


class LocalBackend:
    """Runs each order as a session in this process."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("a backend runs at least one session at a time")
        self.capacity = capacity

    async def run(self, order: SessionOrder) -> Path:
        """Run the attempt ``order`` describes; returns its run folder."""
        challenge = load_challenge(order.challenge)
        agent = parse_agent(order.agent, order.options)
        folder, _, _ = await run_challenge(
            challenge,
            agent,
            order.out,
            judge=parse_judge(order.judge),
            debounce=order.debounce,
            shares=[parse_share(spec) for spec in order.shares],
            network=order.network,
            name=order.name,
            start=order.start,
        )
        return folder.path

"""The local backend: a matrix's sessions run on this machine, ``capacity`` at a time, each in a
process of its own.

Each attempt is one :func:`~orchestrator.run.runs.run_challenge`, as ``changeup run`` makes
it, in its own run folder under ``RESULTS/runs/``, run by a process of its own
(``session_process.py``: a fork of a fork server, itself a fork of this process made with the
backend, so changeup's imports are done once). This process waits for it,
asynchronously, at most its wall-time limit (``backend.session_timeout``, else the challenge's
session limit and ten minutes). So a session that hangs (its event loop blocked) or dies takes
no other session, nor the driver, with it: the driver goes on, and the attempt is recorded for
what happened (``backends.py``). Sessions share nothing mutable: each has its own folder,
workspace, snapshots and scratch space; the grading environments they share are built once and
never changed under a running session (``system/venvs.py``). The driver (``driver.py``) hands
this backend at most ``capacity`` orders at once; :meth:`LocalBackend.close` ends the fork
server once the matrix is done.
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.log.cells import SessionOrder
from orchestrator.matrix.session_process import run_session_process, start_sessions, wall_limit
from orchestrator.matrix.spec import Matrix
from orchestrator.system.forkserver import ForkServer

__all__ = ["LocalBackend"]


class LocalBackend:
    """Runs each order of ``matrix`` as a session in a child process, ``capacity`` at a time."""

    def __init__(self, capacity: int, matrix: Matrix, *, session_timeout: float | None = None) -> None:
        if capacity < 1:
            raise ValueError("a backend runs at least one session at a time")
        self.capacity = capacity
        self._limits = {c.id: wall_limit(c.model.limits, session_timeout) for c in matrix.challenges}
        self._server: ForkServer = start_sessions()

    async def run(self, order: SessionOrder) -> Path:
        """Run the attempt ``order`` describes; returns its run folder, or raises as ``backends.py`` says."""
        end = await run_session_process(order, limit=self._limits[order.cell.challenge], server=self._server)
        return end.settled()

    def close(self) -> None:
        """End the fork server of its sessions (and any session still running: none, once drive ended)."""
        self._server.close()

"""Where a matrix's sessions run, and what a backend answers when one is lost on the way.

``changeup run`` takes the backend from ``--backend`` and ``--address``, or from the matrix
file's ``backend:`` (docs/scale.md); giving it both ways is refused. ``local`` runs the sessions
in this process (``local.py``); ``ray`` runs each on a worker of a Ray cluster
(``ray_backend.py``, which alone imports Ray, and only when it is asked for: changeup needs no
Ray otherwise).

Both are session runners (:class:`~orchestrator.seams.SessionRunner`). Beside the seam's rule
(a runner raises only when the session could not be run at all, and the driver records it as
crashed), a runner raises :class:`SessionLost` when the session's worker or node died under it:
nothing of the agent's doing, so the driver records the attempt as interrupted and runs the
cell again.
"""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.matrix.spec import BackendModel, Matrix

__all__ = ["BackendChoice", "BackendError", "SessionLost", "choose_backend"]


class SessionLost(Exception):
    """The session's worker (or its node) died before the session ended; the message says which."""


class BackendError(ValueError):
    """A backend that cannot run this matrix; nothing was run. The message says why and what to do."""


@dataclass(frozen=True, slots=True)
class BackendChoice:
    """The backend of one run: its kind and, for Ray, the cluster and its settings."""

    kind: str = "local"
    address: str | None = None
    session_timeout: float | None = None
    cpus: float = 1.0


def choose_backend(matrix: Matrix, kind: str | None, address: str | None) -> BackendChoice:
    """The backend the command line (``kind``, ``address``: None when not given) or else the matrix
    file asks for; local when neither says."""
    declared: BackendModel | None = matrix.backend
    if kind is None and address is None:
        if declared is None:
            return BackendChoice()
        return BackendChoice(declared.kind, declared.address, declared.session_timeout, declared.cpus)
    if declared is not None:
        raise BackendError(
            "the matrix file declares its backend: drop --backend and --address, or its backend: key"
        )
    kind = kind or "ray"  # --address alone names a cluster
    if kind == "ray" and not address:
        raise BackendError(
            "--backend ray needs --address: the head node's HOST:PORT, as `ray start --head` printed "
            "it (or auto, for a cluster started on this machine)"
        )
    if kind == "local" and address:
        raise BackendError("--address is for --backend ray; a local backend runs here")
    return BackendChoice(kind, address)

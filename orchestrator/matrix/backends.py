"""Where a matrix's sessions run, and what a backend answers when one is lost on the way.

``changeup run`` takes the backend from ``--backend`` and ``--address``, or from the matrix
file's ``backend:`` (docs/scale.md); giving it both ways is refused. ``local`` runs the sessions
on this machine (``local.py``); ``ray`` runs each on a worker of a Ray cluster
(``ray_backend.py``, which alone imports Ray, and only when it is asked for: changeup needs no
Ray otherwise).

Both are session runners (:class:`~orchestrator.seams.SessionRunner`), and both run each session
in a process of its own (``session_process.py``). What a runner raises says what the driver
records:

- :class:`SessionCrashed`: the session's process died after its agent came into play: changeup
  failed on what the session met, a bug that counts against the trial (``crashed``, as when the
  run's own report says it crashed);
- :class:`SessionTimedOut`: it was still running at its wall-time limit and was killed with its
  whole process tree, after its agent came into play (``timed out``, counted as ``crashed`` is);
- :class:`SessionLost`: the session's worker or node died under it: nothing of the agent's
  doing, so the attempt is interrupted and the cell runs again;
- anything else (:class:`SessionFailed` among them): the session could not be run, or ended
  before its agent came into play: an environment failure, the attempt ``invalid``.
"""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.matrix.spec import BackendModel, Matrix

__all__ = [
    "BackendChoice",
    "BackendError",
    "SessionCrashed",
    "SessionFailed",
    "SessionLost",
    "SessionTimedOut",
    "choose_backend",
]


class SessionLost(Exception):
    """The session's worker (or its node) died before the session ended; the message says which."""


class SessionCrashed(Exception):
    """The session's process died after its agent came into play; the message says how."""


class SessionTimedOut(Exception):
    """A session ran past its wall-time limit and was killed, with its whole process tree."""


class SessionFailed(RuntimeError):
    """The session could not be run, or ended before its agent came into play; the message says why."""


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

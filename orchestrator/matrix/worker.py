"""A session on a worker node: the challenge unpacked, the session run, the run folder packed.

:class:`SessionHost` is what a remote backend places on a node, one per session (the Ray
backend makes it an actor, ``ray_backend.py``). Its :meth:`~SessionHost.run` takes an order,
the challenge's parcel (``parcel.py``), the environment variables the matrix sends with the
agent and the session's wall-time limit, and answers with how the session ended and its run
folder's parcel. Nothing of the driver's filesystem is assumed: the challenge is unpacked into
a work folder of its own under :func:`work_root`, and the session writes its run folder there.

The session runs in a child process, as every session does (``session_process.py``): under
changeup's reaper (``system/reaper.py``), killed with its whole tree at its limit, and nothing
of it outlives the host's process:

- killed outright (``SIGKILL``, the OOM killer), the host's death signals the reaper (its
  parent-death signal), which kills every process below it, ``setsid`` or not;
- ending on its own terms (a forced cancel, its raylet gone), a Ray worker kills (``SIGKILL``) its
  own children first: the reaper then dies before it can act, so the session process holds a
  parent-death signal of its own (``SIGKILL``), and whatever it started dies with it
  (bubblewrap's ``--die-with-parent`` for every sandbox, the reaper of each command outside one).

The child's environment is the node's, less Ray's own variables, plus what the matrix sends.

A work folder whose host died is not removed by that host: the next host on the node removes
every work folder whose owner is gone.
"""

from __future__ import annotations

import os
import platform
import shutil
import tempfile
from dataclasses import replace
from functools import partial
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio

from orchestrator.agents import parse_agent
from orchestrator.challenge.loader import ChallengeError, load_challenge
from orchestrator.log.cells import SessionOrder, order_to_json
from orchestrator.matrix.backends import SessionFailed
from orchestrator.matrix.parcel import pack, unpack
from orchestrator.matrix.session_process import SessionEnd, run_session_process, start_sessions
from orchestrator.system.processes import alive

__all__ = ["ROOT", "SessionHost", "work_root"]

#: The environment variable that names where hosts keep their work folders on a node.
ROOT = "CHANGEUP_WORKER_ROOT"
_OWNER = "owner"


def work_root() -> Path:
    """``$CHANGEUP_WORKER_ROOT``, else ``changeup-worker`` in the node's temporary folder."""
    configured = os.environ.get(ROOT)
    return Path(configured) if configured else Path(tempfile.gettempdir()) / "changeup-worker"


def sweep(root: Path) -> list[Path]:
    """Remove the work folders under ``root`` whose host process is gone; returns them."""
    removed = []
    for folder in root.glob("session-*"):
        try:
            owner = int((folder / _OWNER).read_text())
        except (OSError, ValueError):
            continue  # a host that has not written its owner yet, or not ours
        if not alive(owner):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


class SessionHost:
    """Runs sessions on the node it was placed on, one at a time."""

    def where(self) -> dict[str, Any]:
        """Which machine and process this is, and its changeup's version."""
        return {"hostname": platform.node(), "pid": os.getpid(), "changeup": version("changeup")}

    def preflight(self, specs: list[tuple[str, dict[str, str]]], parcels: dict[str, bytes]) -> list[str]:
        """What stops any agent spec (with its options) from running any challenge here, in words."""
        problems = []
        with tempfile.TemporaryDirectory(prefix="changeup-preflight-") as scratch:
            for name, data in parcels.items():
                try:
                    challenge = load_challenge(unpack(data, Path(scratch) / name))
                except ChallengeError as error:
                    problems.append(f"the challenge {name} does not load here: {error}")
                    continue
                for spec, options in specs:
                    try:
                        parse_agent(spec, options).preflight(challenge)
                    except Exception as error:  # every refusal is reported, whatever its type
                        problems.append(f"{spec} cannot run {name} on {platform.node()}: {error}")
        return problems

    def run(self, order: SessionOrder, challenge: bytes, env: dict[str, str], limit: float) -> dict[str, Any]:
        """Run ``order``'s session on ``challenge`` (a parcel) with ``env`` added, for at most ``limit``
        seconds: how it ended (``status`` and ``detail``, as ``session_process.SessionEnd``) and its
        run folder's ``parcel``. Raises :class:`SessionFailed` when it made no run folder."""
        root = work_root()
        root.mkdir(parents=True, exist_ok=True)
        sweep(root)
        work = Path(tempfile.mkdtemp(prefix="session-", dir=root))
        try:
            (work / _OWNER).write_text(str(os.getpid()))
            here = replace(order, challenge=unpack(challenge, work / "challenge"), out=work / "runs")
            (work / "order.json").write_text(order_to_json(here))  # what this work folder is for
            child = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
            end = anyio.run(partial(_one, here, limit, work, {**child, **env}))
            if end.folder is None:
                raise SessionFailed(f"on {platform.node()}: {end.detail}")
            return {"status": end.status, "detail": end.detail, "parcel": pack(end.folder)}
        finally:
            shutil.rmtree(work, ignore_errors=True)


async def _one(order: SessionOrder, limit: float, cwd: Path, env: dict[str, str]) -> SessionEnd:
    """Run one session in a process of its own, with its own fork server."""
    server = start_sessions(cwd, env)
    try:
        return await run_session_process(order, limit=limit, server=server)
    finally:
        await anyio.to_thread.run_sync(server.close)

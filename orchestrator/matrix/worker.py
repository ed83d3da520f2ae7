"""A session on a worker node: the challenge unpacked, the session run, the run folder packed.

:class:`SessionHost` is what a remote backend places on a node, one per session (the Ray
backend makes it an actor, ``ray_backend.py``). Its :meth:`~SessionHost.run` takes an order,
the challenge's parcel (``parcel.py``) and the environment variables the matrix sends with the
agent, and answers with the run folder's parcel. Nothing of the driver's filesystem is
assumed: the challenge is unpacked into a work folder of its own under :func:`work_root`, and
the session writes its run folder there.

The session runs in a child process, ``python -m orchestrator.matrix.worker ORDER.json``, under
changeup's reaper (``grading/reaper.py``), and nothing of it outlives the host's process:

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

import ctypes
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import asdict, replace
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio

from orchestrator.agents import parse_agent
from orchestrator.challenge.loader import ChallengeError, load_challenge
from orchestrator.grading.processes import reaped
from orchestrator.matrix.cells import Cell, SessionOrder
from orchestrator.matrix.local import LocalBackend
from orchestrator.matrix.parcel import pack, unpack
from orchestrator.present.logging_config import configure

__all__ = ["ROOT", "SessionFailed", "SessionHost", "order_from_json", "order_to_json", "work_root"]

#: The environment variable that names where hosts keep their work folders on a node.
ROOT = "CHANGEUP_WORKER_ROOT"
_OWNER = "owner"
PR_SET_PDEATHSIG = 1
#: The last lines of the session process's output that a failure report carries.
_TAIL = 20


class SessionFailed(RuntimeError):
    """The session could not be run on the worker; the message says why (its output's end)."""


def work_root() -> Path:
    """``$CHANGEUP_WORKER_ROOT``, else ``changeup-worker`` in the node's temporary folder."""
    configured = os.environ.get(ROOT)
    return Path(configured) if configured else Path(tempfile.gettempdir()) / "changeup-worker"


def order_to_json(order: SessionOrder) -> str:
    """``order`` as JSON (paths as text)."""
    data = asdict(order)
    data["challenge"], data["out"], data["shares"] = str(order.challenge), str(order.out), list(order.shares)
    return json.dumps(data)


def order_from_json(text: str) -> SessionOrder:
    """The order :func:`order_to_json` wrote."""
    data: dict[str, Any] = json.loads(text)
    return SessionOrder(
        **{
            **data,
            "cell": Cell.of(data["cell"]),
            "challenge": Path(data["challenge"]),
            "out": Path(data["out"]),
            "shares": tuple(data["shares"]),
        }
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep(root: Path) -> list[Path]:
    """Remove the work folders under ``root`` whose host process is gone; returns them."""
    removed = []
    for folder in root.glob("session-*"):
        try:
            owner = int((folder / _OWNER).read_text())
        except (OSError, ValueError):
            continue  # a host that has not written its owner yet, or not ours
        if not _alive(owner):
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

    def run(self, order: SessionOrder, challenge: bytes, env: dict[str, str]) -> bytes:
        """Run ``order``'s session on ``challenge`` (a parcel) with ``env`` added; the run folder's parcel."""
        root = work_root()
        root.mkdir(parents=True, exist_ok=True)
        sweep(root)
        work = Path(tempfile.mkdtemp(prefix="session-", dir=root))
        try:
            (work / _OWNER).write_text(str(os.getpid()))
            here = replace(order, challenge=unpack(challenge, work / "challenge"), out=work / "runs")
            (work / "order.json").write_text(order_to_json(here))
            child = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
            with (work / "session.log").open("wb") as log:
                done = subprocess.run(
                    reaped([sys.executable, "-m", "orchestrator.matrix.worker", str(work / "order.json")]),
                    env={**child, **env},
                    cwd=work,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    check=False,
                )
            folder = here.folder
            if done.returncode != 0 or not (folder / "events.jsonl").is_file():
                lines = (work / "session.log").read_text(errors="replace").strip().splitlines()
                tail = "\n".join(lines[-_TAIL:]) or "(it printed nothing)"
                raise SessionFailed(
                    f"the session process on {platform.node()} exited {done.returncode}:\n{tail}"
                )
            return pack(folder)
        finally:
            shutil.rmtree(work, ignore_errors=True)


def die_with_parent() -> None:
    """Be killed (``SIGKILL``) when the parent process dies; exit now if it already has."""
    parent = os.getppid()
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it died before the signal was armed
        os._exit(1)


def main(argv: list[str]) -> int:
    """Run the order in the file ``argv[1]`` as a local session; 0 once its run folder is written."""
    die_with_parent()
    configure()
    anyio.run(LocalBackend(1).run, order_from_json(Path(argv[1]).read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

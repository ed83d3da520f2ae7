"""Process isolation of the agent's code, from outside: the workspace host's settings, how strong
its sandbox is here, and its start on the cold path.

A phase with ``testing: isolation: process`` runs its hidden tests in a pytest process that
never imports a module of the workspace: the bootstrap loads ``remote.py`` instead, and every
``import`` of the workspace reaches the *workspace host* (``host.py``), a second process that
imports and runs the agent's code, joined to the test process by one socket (what crosses it:
``crossing.py``). Where the host runs:

- under bubblewrap with the warm interpreter, it is forked by the run's init (``zygote.py``)
  into a PID and mount namespace of its own, the hidden tests, the run's output and the
  tests' ``/tmp`` covered, as :data:`HOST_USER` (another user than the tests' when changeup is
  root; the caller's, with no capability, when not);
- on the cold path (no warm interpreter: a rescore, calibration's starter check, the weaker
  sandboxes), :func:`cold_host` starts it as a second sandboxed process
  (``Sandbox.host``) with its end of the socket inherited, before the test process;
- the weaker sandboxes give it what they can, and :func:`strength` says what that is (logged
  and shown by calibration, never silent).

The test process decides every verdict; the host only answers. A host that dies, hangs or
breaks the protocol fails the tests that were waiting on it (``remote.HostError``), never
the run.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from orchestrator.challenge.model import Challenge, Phase
from orchestrator.grading.sandbox import Places, Sandbox
from orchestrator.system.bubblewrap import SandboxUser
from orchestrator.system.processes import GRACE, stop
from orchestrator.system.runtime import Runtime
from orchestrator.system.venvs import Environment

__all__ = [
    "CROSSING",
    "HOST",
    "HOST_EFFECTS",
    "HOST_USER",
    "REMOTE",
    "SCRIPTS",
    "cold_host",
    "host_settings",
    "host_user",
    "isolated",
    "per_call",
    "seclude",
    "strength",
    "workspace_owner",
]

HOST = Path(__file__).with_name("host.py")
REMOTE = Path(__file__).with_name("remote.py")
CROSSING = Path(__file__).with_name("crossing.py")
#: The harness's files of isolation, copied beside the bootstrap (``crossing.py`` first: the
#: others load it), with the module names the warm interpreter imports them under.
SCRIPTS = ((CROSSING, "changeup_crossing"), (REMOTE, "changeup_remote"), (HOST, "changeup_host"))
#: The user the workspace host runs as when changeup is root: not the tests' (``TEST_USER``),
#: so neither can signal or trace the other.
HOST_USER = (65531, 65531)
#: Where the host's effects probe writes, beside the tests' ``effects.jsonl``.
HOST_EFFECTS = "effects-host.jsonl"
#: The longest a call may wait for the host when nothing shorter is set.
LONGEST_CALL = 60.0


def isolated(phase: Phase) -> bool:
    """Whether ``phase``'s hidden tests reach the agent's code across a process boundary."""
    return phase.command is None and phase.isolation == "process"


def host_user(sandbox: Sandbox) -> SandboxUser | None:
    """The user the host runs as (None: the caller's, as the tests when not root)."""
    if sandbox.as_root and sandbox.kind in ("bubblewrap", "user"):
        return SandboxUser("host", *HOST_USER)
    return None


def per_call(run_limit: float) -> float:
    """How long one call may wait for the host: half the run's limit, at most a minute, so a hung
    call fails its test and the run still ends graded. A per-test timeout (``testing: timeout``)
    fails its test sooner, as in-process; the next call then waits for the one it cut short,
    within this same limit."""
    return max(1.0, min(run_limit / 2, LONGEST_CALL))


def strength(sandbox: Sandbox) -> str:
    """What the workspace host is kept from under ``sandbox``, in words (for logs and calibration)."""
    if sandbox.kind == "bubblewrap":
        who = "another user than the tests" if sandbox.as_root else "the caller's user with no capability"
        return (
            f"the workspace host runs as {who}, in PID and mount namespaces of its own, "
            "without the hidden tests, the run's output or the tests' temporary files"
        )
    if sandbox.kind == "user" and sandbox.as_root:
        return (
            "WEAKER: the workspace host runs as another user than the tests (no namespaces): it cannot "
            "read the hidden tests or the run's output, nor signal or trace the test process, but it "
            "sees the machine as the tests do"
        )
    return (
        "WEAK: the workspace host runs as the tests' own user with no namespaces: it could read the "
        "hidden tests and the run's output and signal the test process (bubblewrap, or a separate "
        "user as root, makes the process boundary hold)"
    )


def host_settings(
    places: Places,
    sandbox: Sandbox,
    *,
    timeout: float,
    effects: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The bootstrap's ``host`` setting (``remote.connect``), with what starts the host (``serve``).

    ``fd`` is filled in by whoever makes the socket: the run's init (warm), or :func:`cold_host`.
    ``effects`` is the tests' probe setting, if any: the host watches the same effects.
    """
    user = host_user(sandbox)
    # Its HOME and TMPDIR: under bubblewrap, an empty folder of its own where the tests have the
    # run's output (theirs, at the same path); elsewhere the output is the tests' alone: /tmp.
    home = str(places.out) if sandbox.kind == "bubblewrap" else "/tmp"
    serve: dict[str, Any] = {
        "workspace": str(places.ws),
        "user": [user.uid, user.gid] if user is not None else None,
        "home": home,
        "effects": None,
    }
    if effects:
        serve["effects"] = {
            **effects,
            "file": str(places.out / HOST_EFFECTS),
            "allowed": [str(places.ws), "/tmp", "/dev"],
            "temporary": home,
            "own": [],
        }
    return {
        "remote": str(places.harness / REMOTE.name),
        "fd": None,
        "timeout": timeout,
        "hidden": str(places.hidden),
        "tell": bool(effects),  # the host's probe names the test of each effect
        # Nothing keeps a host of the same user from tracing the tests but this.
        "undumpable": sandbox.kind != "bubblewrap" and user is None,
        "serve": serve,
    }


def seclude(folder: Path, sandbox: Sandbox) -> None:
    """Under the separate-user sandbox, close the hidden tests and the run's output to the host's
    user: they become the tests' group's alone (bubblewrap hides them with mounts instead)."""
    tests = sandbox.user
    if sandbox.kind != "user" or tests is None or host_user(sandbox) is None:
        return
    for name in ("hidden", "out"):
        top = folder / name
        for root, dirs, files in os.walk(top):
            for entry in [root, *(os.path.join(root, n) for n in (*dirs, *files))]:
                if os.path.islink(entry):
                    continue
                info = os.lstat(entry)
                os.chown(entry, info.st_uid, tests.gid)
                os.chmod(entry, (info.st_mode & 0o770) | (0o050 if os.path.isdir(entry) else 0o040))


def workspace_owner(challenge: Challenge, sandbox: Sandbox, tests: tuple[int, int]) -> tuple[int, int]:
    """Who owns a run's copy of the snapshot: the host's user when the challenge has an isolated
    phase (the agent's code writes there, from the host), else the tests' (``tests``)."""
    user = host_user(sandbox)
    if user is None or not any(isolated(phase) for phase in challenge.phases):
        return tests
    return (user.uid, user.gid)


@contextlib.asynccontextmanager
async def cold_host(
    settings: dict[str, Any],
    places: Places,
    sandbox: Sandbox,
    *,
    folder: Path,
    environment: Environment,
    runtime: Runtime | None,
    env: Mapping[str, str],
    tmp_mb: int | None = None,
    join: Sequence[str] = (),
) -> AsyncIterator[int]:
    """Start a workspace host for one cold test process; yields the tests' end of the socket (an
    inheritable descriptor to pass on). On the way out the socket is closed and the host, which
    ends when it reads the close, is stopped if it has not. ``tmp_mb`` and ``join`` bound it as
    the run is bounded (:meth:`Sandbox.tests`)."""
    serve = dict(settings["serve"])
    tests, host = socket.socketpair()
    kept: list[int] = [host.fileno()]
    effects = None
    try:
        os.set_inheritable(tests.fileno(), True)
        os.set_inheritable(host.fileno(), True)
        if serve.get("effects"):
            where = folder / "out" / HOST_EFFECTS
            effects = os.open(where, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            kept.append(effects)
            serve["effects"] = {**serve["effects"], "file": effects}
        # Under bubblewrap the host drops to its user itself; elsewhere setpriv already has.
        user = serve["user"] if sandbox.kind == "bubblewrap" else None
        config = {**serve, "fd": host.fileno(), "user": user}
        argv = [places.python, "-I", "-B", str(places.harness / HOST.name), json.dumps(config)]
        command = sandbox.host(
            argv, folder, environment, runtime=runtime, user=host_user(sandbox), tmp_mb=tmp_mb, join=join
        )
        process = await anyio.open_process(
            command,
            cwd=folder / "ws",
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            pass_fds=kept,
        )
    except BaseException:
        tests.close()
        raise
    finally:
        host.close()
        if effects is not None:
            os.close(effects)
    try:
        yield tests.fileno()
    finally:
        tests.close()
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(GRACE):
                await process.wait()
            await stop(process)
            await process.aclose()

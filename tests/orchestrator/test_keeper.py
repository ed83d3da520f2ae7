"""The keeper for real: an owner that makes groups, freezes a process in them and is SIGKILLed
leaves neither the process nor the groups; an owner that cleans up itself leaves its keeper
nothing to do. On the machine's v1 hierarchies and on its cgroup2 mount."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator.system import cgroups
from orchestrator.system.hierarchies import support

pytestmark = pytest.mark.slow

#: The owner: makes a group (v1: every hierarchy; v2: the cgroup2 mount), starts its keeper, puts
#: a sleeper and its setsid child in it, freezes it and says so; then waits to be killed, or with
#: ``clean`` removes the group and closes the keeper itself.
OWNER = """
import anyio, json, os, secrets, subprocess, sys
from pathlib import Path
from orchestrator.system.cgroups import Cgroup
from orchestrator.system.hierarchies import Support, support
from orchestrator.system.keeper import Keeper

version, clean = sys.argv[1], sys.argv[2] == "clean"
where = support() if version == "1" else Support(2, (("unified", Path(sys.argv[3])),), frozenset({"freezer"}))

async def main():
    group = Cgroup.create(where, f"changeup-keepertest-{os.getpid()}-{secrets.token_hex(3)}")
    keeper = Keeper.start(list(group.paths.values()))
    agent = group.child("agent")
    sleepers = [*agent.launcher(), "sh", "-c", "setsid sleep 600 & sleep 600"]
    subprocess.Popen(sleepers, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # output: the test's
    while len(agent.pids()) < 3:
        await anyio.sleep(0.01)
    assert await agent.freeze(30.0)
    print(json.dumps({"paths": [str(p) for p in group.paths.values()], "pids": sorted(agent.pids()),
                      "keeper": keeper.process.pid}), flush=True)
    if clean:
        await group.remove()
        keeper.close()
        print(json.dumps({"keeper": keeper.process.returncode}), flush=True)
        return
    await anyio.sleep(600)

anyio.run(main)
"""

V1 = support()
UNIFIED = Path("/sys/fs/cgroup/unified")
needs_v1 = pytest.mark.skipif(
    V1.version != 1 or V1.controllers != frozenset(cgroups.CONTROLLERS),
    reason=f"LOUD SKIP: no writable cgroup v1 hierarchies ({V1.missing or f'v{V1.version}'}); CI is root",
)
needs_v2_mount = pytest.mark.skipif(
    os.geteuid() != 0 or not (UNIFIED / "cgroup.procs").is_file(),
    reason="LOUD SKIP: no cgroup2 mount at /sys/fs/cgroup/unified to write as root",
)
VERSIONS = [pytest.param("1", marks=needs_v1), pytest.param("2", marks=needs_v2_mount)]


def _patience(seconds: float) -> float:
    """``seconds`` on a quiet machine, more on a busy one (its load per CPU)."""
    return seconds * max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs or is frozen (a zombie has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _owner(version: str, clean: bool) -> tuple[subprocess.Popen[str], dict[str, object]]:
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, version, "clean" if clean else "killed", str(UNIFIED)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert owner.stdout is not None
    line = owner.stdout.readline()
    assert line, owner.communicate()[1][-3000:]
    return owner, json.loads(line)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_killed_owner_leaves_no_frozen_process_and_no_group(version: str) -> None:
    """SIGKILL the owner while its group is frozen: promptly, the sleeper and its setsid child
    are gone (not frozen, not running), every folder of the group is removed, and the keeper
    says what it did on the owner's standard error, then ends."""
    owner, made = _owner(version, clean=False)
    pids = [int(pid) for pid in made["pids"]]  # type: ignore[attr-defined]
    paths = [Path(path) for path in made["paths"]]  # type: ignore[attr-defined]
    assert all(_alive(pid) for pid in pids)
    owner.send_signal(signal.SIGKILL)
    deadline = time.monotonic() + _patience(30)
    _, said = owner.communicate(timeout=_patience(30))  # its keeper holds its standard error until done
    while time.monotonic() < deadline and (any(map(_alive, pids)) or any(p.exists() for p in paths)):
        time.sleep(0.02)
    assert [pid for pid in pids if _alive(pid)] == []
    assert [path for path in paths if path.exists()] == []
    while time.monotonic() < deadline and _alive(int(made["keeper"])):  # type: ignore[call-overload]
        time.sleep(0.02)
    assert not _alive(int(made["keeper"]))  # type: ignore[call-overload]
    assert f"changeup keeper: process {owner.pid} ended without removing its control groups" in said
    assert "left:" not in said


@pytest.mark.parametrize("version", VERSIONS)
def test_an_owner_that_cleans_up_leaves_its_keeper_nothing_to_do(version: str) -> None:
    """An owner that removes its groups and closes its keeper: the keeper ends at once, with 0,
    saying nothing."""
    owner, made = _owner(version, clean=True)
    assert owner.stdout is not None
    closed = json.loads(owner.stdout.readline())
    _, said = owner.communicate()
    assert owner.returncode == 0, said
    assert closed == {"keeper": 0}
    assert "changeup keeper" not in said
    assert not any(Path(path).exists() for path in made["paths"])  # type: ignore[attr-defined]

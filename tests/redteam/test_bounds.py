"""The red team against the bounds: floods from the agent and from its code under test, and a
machine-wide counter read by a running agent while hidden tests run.

Each is a real session through the CLI with an attacking agent of tests/fixtures/redteam-agents,
on a copy of the red-team target with small limits. After each: the session completed, the
over-use is in the log and the report, the host's temporary folders hold nothing of it, and no
process or control group of the session is left.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from orchestrator.system.cgroups import CONTROLLERS
from orchestrator.system.hierarchies import support
from tests.cli import CHANGEUP, environment
from tests.redteam.common import (
    AGENTS,
    DETECTED,
    TARGET,
    needs_bubblewrap,
    outcome,
    records,
    run,
    tree_digest,
)

pytestmark = pytest.mark.slow

KIT = ("--agent-share", str(AGENTS))
CGROUPS = support()
needs_cgroups = pytest.mark.skipif(
    CGROUPS.controllers != frozenset(CONTROLLERS),
    reason=f"LOUD SKIP: no writable control groups with every controller ({CGROUPS.missing}); CI is root",
)


def _target(folder: Path, **limits: Any) -> Path:
    """A copy of the red-team target with these ``limits`` added."""
    shutil.copytree(TARGET, folder)
    file = folder / "challenge.yaml"
    data = yaml.safe_load(file.read_text())
    data["challenge"]["limits"].update(limits)
    file.write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


def _token() -> str:
    """A mark for an attack's processes and files: a number, so ``sleep`` takes it."""
    return f"600.{secrets.randbelow(10**12):012d}"


def _host_places(token: str) -> dict[str, str]:
    """What the host's own temporary folders hold under the attack's names (absent, unless it got out)."""
    return {
        place: tree_digest(Path(place, f"changeup-bounds-{token}"))
        for place in ("/tmp", "/var/tmp", "/dev/shm")
    }


def _survivors(token: str) -> list[str]:
    """Processes whose command line carries ``token``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if entry.name.isdigit() and token in line and "pytest" not in line:
            found.append(f"{entry.name}: {line}")
    return found


def _groups_left(folder: Path) -> list[Path]:
    """Control groups of the session's changeup (named for its pid) still on the machine."""
    pid = (folder / "pid").read_text().strip()
    return [group for _, base in CGROUPS.bases for group in base.glob(f"changeup-{pid}-*")]


def _over(folder: Path) -> dict[str, dict[str, Any]]:
    """The last ``agent.over_limits`` record of each resource."""
    return {r["resource"]: r for r in records(folder) if r["kind"] == "agent.over_limits"}


@needs_bubblewrap
@needs_cgroups
def test_an_agent_flooding_memory_processes_tmp_and_disk_is_bounded_logged_and_stopped(
    tmp_path: Path,
) -> None:
    """The agent asks for twice its memory, forks past its process limit, fills its /tmp,
    /var/tmp and /dev/shm, then floods its workspace: the kernel ends the hog, refuses the forks,
    the mounts say no space; each is logged; past its disk limit the agent is stopped and the
    session ends, graded. Nothing of it is on the host's /tmp, /var/tmp or /dev/shm, no process
    or group of it is left, and a neighbour folder is as it was."""
    limits = {
        "agent_memory_mb": 256,
        "agent_processes": 64,
        "agent_tmp_mb": 32,
        "agent_disk_mb": 64,
        "session": "80s",
    }
    challenge = _target(tmp_path / "target", **limits)
    neighbour = tmp_path / "neighbour"
    neighbour.mkdir()
    (neighbour / "kept.txt").write_text("left alone\n")
    token = _token()
    before = {**_host_places(token), "neighbour": tree_digest(neighbour)}
    env = {
        "REDTEAM_TOKEN": token,
        "REDTEAM_MEMORY_MB": "256",
        "REDTEAM_PROCESSES": "64",
        "REDTEAM_DISK_MB": "64",
    }
    report, folder = run(
        challenge, f"command:python3 {AGENTS / 'floods.py'}", tmp_path / "runs", *KIT, env=env
    )

    assert report["run"]["status"] == "completed", report["run"]["detail"]
    assert report["run"]["end_reason"] == "agent_exited"
    attempts = (folder / "workspace" / "attempts.txt").read_text()
    assert "exited -9" in attempts  # the hog, ended by the kernel at the limit
    sleepers = next(line for line in attempts.splitlines() if line.startswith("processes:"))
    assert "Resource temporarily unavailable" in sleepers, sleepers
    assert int(sleepers.split()[1]) < 64
    for place in ("/tmp", "/var/tmp", "/dev/shm"):
        line = next(line for line in attempts.splitlines() if line.startswith(f"{place}:"))
        assert int(line.split()[1]) <= 32
        assert "No space left on device" in line
    assert "never stopped" not in attempts

    over = _over(folder)
    assert set(over) == {"memory", "processes", "tmp", "disk"}, over
    assert over["memory"]["count"] >= 1
    assert over["processes"]["limit"] == 64
    assert over["disk"]["used"] > 64 << 20
    assert over["disk"]["action"] == "ended the session"
    assert all(over[kind]["action"] == "" for kind in ("memory", "processes", "tmp"))
    bounds = report["bounds"]
    assert {o["resource"] for o in bounds["agent_over_limits"]} == set(over)
    assert bounds["warnings"] == []
    assert bounds["frozen"]["runs"] >= 1  # it was frozen while the tests of its floods ran
    markdown = (folder / "report.md").read_text()
    assert "## Bounds" in markdown
    assert "the agent went over its disk limit" in markdown

    after = {**_host_places(token), "neighbour": tree_digest(neighbour)}
    assert after == before
    assert _survivors(token) == []
    assert _groups_left(folder) == []


@needs_bubblewrap
@needs_cgroups
@pytest.mark.parametrize(
    ("flood", "said"),
    [
        ("memory", "over its memory limit (128 MB)"),
        ("tmp", "left /tmp full (16 MB each)"),
        ("shm", "left /dev/shm full (16 MB each)"),
        ("processes", "over its process limit (32)"),
    ],
)
def test_code_under_test_over_its_limits_is_not_graded_ok(tmp_path: Path, flood: str, said: str) -> None:
    """Code under test holds memory far past its run's limit, fills the run's /tmp or /dev/shm, or
    forks sleepers until refused: the run is graded over_limits with the reason (the agent's
    failure), never ok; nothing of it reaches the host, and no process or group of it is left."""
    challenge = _target(
        tmp_path / "target", test_memory_mb=128, test_tmp_mb=16, test_processes=32, test_run="20s"
    )
    token = _token()
    before = _host_places(token)
    env = {"REDTEAM_TOKEN": token, "REDTEAM_FLOOD": flood}
    report, folder = run(
        challenge, f"command:python3 {AGENTS / 'floods_under_test.py'}", tmp_path / "runs", env=env
    )

    score = report["score"]
    assert (score["grading_status"], outcome(report)) == ("over_limits", DETECTED), score["grading_detail"]
    assert said in score["grading_detail"]
    assert report["bounds"]["test_runs_over_limits"] >= 1
    graded = next(r for r in records(folder) if r["kind"] == "session.graded")
    voided = [t for p in graded["phases"] for t in p["tests"]]
    assert voided
    assert all(t["outcome"] == "failed" for t in voided)
    assert all(t["detail"].startswith("the run went over its memory, process or") for t in voided)
    assert _host_places(token) == before
    assert _survivors(token) == []
    assert _groups_left(folder) == []


def _hidden_byte() -> int:
    """The byte the channel's code under test signals: a digest of the hidden test files' heads
    (docstring and imports, where no canary goes), as the code reads them."""
    heads = []
    for path in (TARGET / "tests").rglob("test_*.py"):
        text = path.read_text(encoding="utf-8")
        lines = []
        for line in text.splitlines():
            if line.startswith(("def ", "class ", "@")):
                break
            lines.append(line)
        heads.append("\n".join(lines))
    return hashlib.sha256("\n".join(sorted(heads)).encode()).digest()[0]


@needs_bubblewrap
@needs_cgroups
@pytest.mark.alone  # the channel is the machine's Shmem total: another test's tmpfs writes are noise on it
@pytest.mark.parametrize("freezer", ["on (the default)", "off (CHANGEUP_FREEZE=off)"])
def test_a_shared_memory_channel_carries_nothing_to_a_frozen_agent(tmp_path: Path, freezer: str) -> None:
    """Code under test signals a byte of the hidden tests through the machine's Shmem total
    (memfds of a size per bit) while the agent, alive, polls /proc/meminfo. With the agent frozen
    during every test run it sees none of it; with the freeze turned off and all else the same
    (the control, which shows the channel works) it reads the byte exactly, and the run says
    loudly that the channel is open."""
    challenge = _target(tmp_path / "target", test_run="30s")
    on = freezer.startswith("on")
    env = {"REDTEAM_WATCH": "8"} | ({} if on else {"CHANGEUP_FREEZE": "off"})
    report, folder = run(
        challenge, f"process:python3 {AGENTS / 'shmem_channel.py'}", tmp_path / "runs", env=env
    )

    observed = (folder / "workspace" / "observed.txt").read_text()
    frozen = [r for r in records(folder) if r["kind"] == "agent.frozen"]
    if on:
        assert observed == "byte None\n", observed
        assert len(frozen) >= 2  # the starter's run and the signaller's, at least
        assert report["bounds"]["frozen"]["seconds"] > 0
    else:
        assert observed.splitlines()[0] == f"byte {_hidden_byte()}", "the control must read the channel"
        assert frozen == []
        warnings = " ".join(report["bounds"]["warnings"])
        assert "the freezer is off (CHANGEUP_FREEZE=off was set)" in warnings
        assert "not frozen while hidden tests run" in warnings
        assert "NOT BOUNDED" in (folder / "report.md").read_text()
    assert report["run"]["status"] == "completed", report["run"]["detail"]
    assert _groups_left(folder) == []


def _frozen(pid: int) -> bool:
    """Whether the agent group of the changeup with this pid is frozen (v1 or v2)."""
    for key, base in CGROUPS.bases:
        for agent in base.glob(f"changeup-{pid}-*/agent"):
            if key == "freezer" and (agent / "freezer.state").read_text().strip() == "FROZEN":
                return True
            if key == "unified" and "frozen 1" in (agent / "cgroup.events").read_text():
                return True
    return False


def _patience(seconds: float) -> float:
    """``seconds`` on a quiet machine, more on a busy one (its load per CPU)."""
    return seconds * max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


@needs_bubblewrap
@needs_cgroups
def test_a_session_killed_during_a_test_run_leaves_no_agent_frozen_or_alive(tmp_path: Path) -> None:
    """changeup is SIGKILLed while a hidden test run is in progress and its agent (a child and a
    setsid daemon with it) is frozen: promptly, with nobody calling changeup again, none of the
    agent's processes is left, frozen or running, and none of the session's groups; the keeper
    says what it did on changeup's standard error."""
    challenge = _target(tmp_path / "target", test_run="300s", session="10min")
    token = _token()
    out, stderr = tmp_path / "runs", tmp_path / "stderr"
    agent = f"process:python3 {AGENTS / 'outlives.py'}"
    with stderr.open("w") as said:
        changeup = subprocess.Popen(
            [*CHANGEUP, "run", str(challenge), "--agent", agent, "--out", str(out), "-q"],
            env=environment({"REDTEAM_TOKEN": token}),
            stdout=subprocess.DEVNULL,
            stderr=said,
        )
    try:
        deadline = time.monotonic() + _patience(120)
        folder = None
        while time.monotonic() < deadline and changeup.poll() is None:
            folder = next(iter(out.iterdir()), None) if out.is_dir() else None
            if folder is not None and (folder / "pid").is_file() and _survivors(token):
                kinds = [r["kind"] for r in records(folder)]
                # A run started after the turn that wrote the slow code: it tests that code.
                turn = kinds.index("agent.turn_ended") if "agent.turn_ended" in kinds else len(kinds)
                if "tests.started" in kinds[turn:] and _frozen(changeup.pid):
                    break
            time.sleep(0.05)
        else:
            pytest.fail(f"the agent was never frozen in its slow run:\n{stderr.read_text()[-3000:]}")
        assert folder is not None
        changeup.send_signal(signal.SIGKILL)
        changeup.wait()

        deadline = time.monotonic() + _patience(30)
        left: list[object] = ["not looked yet"]
        while time.monotonic() < deadline:
            left = [*_survivors(token), *_survivors(str(AGENTS / "outlives.py")), *_groups_left(folder)]
            if not left:
                break
            time.sleep(0.05)
        assert left == [], f"left after changeup was killed: {left}"
        assert f"changeup keeper: process {changeup.pid} ended without removing" in stderr.read_text()
    finally:
        if changeup.poll() is None:
            changeup.kill()
            changeup.wait()

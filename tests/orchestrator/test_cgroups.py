"""Control groups for real: limits that bind, joining before anything runs, freezing, emptying.

The v1 tests run on the machine's own hierarchies (as root); the v2 freezer, kill and launcher
on its cgroup2 mount, which has no controllers here; the v2 limits, counters and the choice of
where to make groups on a folder laid out as the kernel lays one out.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import anyio
import pytest

from orchestrator.grading.agent_sandbox import AgentSandbox, AgentView
from orchestrator.grading.bounds import Bounds, SessionGroups
from orchestrator.grading.sandbox import Sandbox
from orchestrator.system import cgroups
from orchestrator.system.cgroups import JOIN_FAILED, Cgroup, CgroupError
from orchestrator.system.footprint import disk_usage
from orchestrator.system.hierarchies import Support, _Mount, _unified, support, sweep

pytestmark = [pytest.mark.anyio]

V1 = support()
needs_v1 = pytest.mark.skipif(
    V1.version != 1 or V1.controllers != frozenset(cgroups.CONTROLLERS),
    reason=f"LOUD SKIP: no writable cgroup v1 hierarchies ({V1.missing or f'v{V1.version}'}); CI is root",
)
UNIFIED = Path("/sys/fs/cgroup/unified")
needs_v2_mount = pytest.mark.skipif(
    os.geteuid() != 0 or not (UNIFIED / "cgroup.procs").is_file(),
    reason="LOUD SKIP: no cgroup2 mount at /sys/fs/cgroup/unified to write as root",
)
MB = 1024 * 1024


@pytest.fixture
def anyio_backend() -> str:
    """The tests wait on real processes: asyncio's clock is the real one."""
    return "asyncio"


@pytest.fixture
async def group() -> AsyncIterator[Cgroup]:
    """A fresh group in every v1 hierarchy, removed (its processes killed) after the test."""
    made = Cgroup.create(V1, f"changeup-test-{os.getpid()}-{secrets.token_hex(3)}")
    yield made
    await made.remove()
    assert not any(path.exists() for path in made.paths.values())


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes a test starts, killed and reaped after it whatever happened."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait()


def _python(code: str) -> list[str]:
    return [sys.executable, "-I", "-S", "-c", code]


async def _until(check: object, seconds: float = 30.0) -> None:
    """Wait until ``check()`` is true (a generous limit: the machine may be busy)."""
    assert callable(check)
    with anyio.fail_after(seconds):
        while not check():
            await anyio.sleep(0.01)


@pytest.mark.slow
@needs_v1
async def test_v1_limits_are_set_in_each_hierarchy(group: Cgroup) -> None:
    """Memory (and memory with swap), tasks and a CPU quota land in their hierarchies' files."""
    group.limit(memory=300 * MB, tasks=40, cpus=1.5)
    assert (group.paths["memory"] / "memory.limit_in_bytes").read_text().strip() == str(300 * MB)
    memsw = group.paths["memory"] / "memory.memsw.limit_in_bytes"
    if memsw.exists():
        assert memsw.read_text().strip() == str(300 * MB)
    assert (group.paths["pids"] / "pids.max").read_text().strip() == "40"
    assert (group.paths["cpu"] / "cpu.cfs_quota_us").read_text().strip() == "150000"
    assert group.procs[-1].parent == group.paths["freezer"]  # the freezer is joined last


@pytest.mark.slow
@needs_v1
async def test_v1_the_launcher_joins_before_the_command_runs(
    group: Cgroup, processes: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    """A command started through the launcher is in the group in every hierarchy from its first
    instruction, and so is what it forks and every thread it starts; a launcher whose group is
    gone runs nothing. It joins by v1's per-thread ``tasks`` files: moving itself, one thread,
    that way takes no machine-wide lock (``cgroup.procs`` would wait out an RCU grace period)."""
    assert [path.name for path in group.joins] == ["tasks"] * 4
    code = (
        "import threading; print(open('/proc/self/cgroup').read()); "
        "t = threading.Thread(target=lambda: print(open('/proc/thread-self/cgroup').read())); "
        "t.start(); t.join()"
    )
    done = subprocess.run([*group.launcher(), *_python(code)], capture_output=True, text=True, check=True)
    name = group.paths["pids"].name
    for controller in ("memory", "pids", "cpu", "freezer"):
        lines = [line for line in done.stdout.splitlines() if f":{controller}:" in line.replace(",", ":")]
        assert len(lines) == 2  # the process's, then its thread's
        assert all(line.endswith(name) for line in lines), lines
    sleeper = subprocess.Popen([*group.launcher(), "sh", "-c", "sleep 60 & wait"])
    processes.append(sleeper)
    await _until(lambda: len(group.pids()) == 2)
    assert sleeper.pid in group.pids()
    gone = group.child("gone")
    gone.rmdir()
    marker = tmp_path / "ran"
    refused = subprocess.run([*gone.launcher(), "touch", str(marker)], capture_output=True, check=False)
    assert refused.returncode == JOIN_FAILED
    assert not marker.exists()


@pytest.mark.slow
@needs_v1
async def test_v1_memory_and_task_limits_bind_and_are_counted(group: Cgroup) -> None:
    """Over its memory limit a process is ended by the OOM killer (counted, the peak at the
    limit); over its task limit a fork is refused (counted)."""
    group.limit(memory=64 * MB, tasks=8)
    hog = subprocess.run(
        [*group.launcher(), *_python("x = bytearray(256 << 20); print('survived')")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert hog.returncode == -signal.SIGKILL, hog
    forks = "for i in $(seq 20); do sleep 5 & done; wait"
    subprocess.run([*group.launcher(), "sh", "-c", forks], capture_output=True, check=False)
    usage = group.usage()
    assert usage.oom_kills >= 1
    assert usage.memory_peak is not None
    assert usage.memory_peak <= 64 * MB
    assert usage.forks_refused >= 1
    assert usage.tasks_peak is None or usage.tasks_peak <= 8


@pytest.mark.slow
@needs_v1
async def test_v1_freeze_holds_every_process_still_until_thawed(
    group: Cgroup, processes: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    """While frozen, a counting process (and its child) advance not at all; thawed, they go on."""
    counter = tmp_path / "count"
    count = (  # a fixed-width number rewritten in place: a read always sees a whole one
        "import os\nos.fork()\n"
        f"fd = os.open({str(counter)!r} + str(os.getpid()), os.O_WRONLY | os.O_CREAT)\n"
        "n = 0\nwhile True:\n    n += 1\n    os.pwrite(fd, b'%020d' % n, 0)\n"
    )
    processes.append(subprocess.Popen([*group.launcher(), *_python(count)]))
    await _until(lambda: len(list(tmp_path.iterdir())) == 2)

    def counts() -> list[str]:
        return [path.read_text() for path in sorted(tmp_path.iterdir())]

    assert await group.freeze(30.0)
    frozen = counts()
    await anyio.sleep(0.3)
    assert counts() == frozen
    group.thaw()
    await _until(lambda: all(a != b for a, b in zip(counts(), frozen, strict=True)))


@pytest.mark.slow
@needs_v1
async def test_v1_kill_empties_a_frozen_group_with_a_daemon_and_keeps_it_frozen(
    group: Cgroup, processes: list[subprocess.Popen[bytes]]
) -> None:
    """A setsid daemon and its parent, frozen: kill ends both, the group stays frozen (empty), and
    remove leaves no folder behind (checked by the fixture)."""
    daemon = "setsid sh -c 'sleep 60' & sleep 60"
    processes.append(subprocess.Popen([*group.launcher(), "sh", "-c", daemon], start_new_session=True))
    await _until(lambda: len(group.pids()) >= 3)
    assert await group.freeze(30.0)
    await group.kill()
    assert group.pids() == set()
    assert (group.paths["freezer"] / "freezer.state").read_text().strip() == "FROZEN"


@pytest.mark.slow
@needs_v1
async def test_v1_remove_ends_the_processes_of_a_frozen_group_below(
    group: Cgroup, processes: list[subprocess.Popen[bytes]]
) -> None:
    """A group below, frozen with a process in it: removing the group above ends that process
    (it is thawed to die) and leaves no folder of either."""
    below = group.child("below")
    processes.append(subprocess.Popen([*below.launcher(), "sleep", "60"]))
    await _until(lambda: len(below.pids()) == 1)
    assert await below.freeze(30.0)
    try:
        await group.remove()
    finally:  # were it left frozen, its process could not be reaped after the test
        with contextlib.suppress(OSError):
            below.thaw()
    assert processes[0].wait() == -signal.SIGKILL
    assert not any(path.exists() for path in [*below.paths.values(), *group.paths.values()])


@pytest.mark.slow
@needs_v1
async def test_v1_settle_waits_for_shared_memory_to_go(
    group: Cgroup, processes: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    """Shared memory a process of the group holds (a memfd) is charged to it; once the process is
    gone, so is the charge, and settle says the group is empty."""
    ready = tmp_path / "ready"
    hold = (
        "import os, time\nfd = os.memfd_create('x')\nos.write(fd, b'x' * (8 << 20))\n"
        f"open({str(ready)!r}, 'w').close()\ntime.sleep(60)\n"
    )
    holder = subprocess.Popen([*group.launcher(), *_python(hold)])
    processes.append(holder)
    await _until(ready.exists)
    assert group.usage().shmem >= 8 * MB
    assert not await group.settle(0.05)
    holder.kill()
    holder.wait()
    assert await group.settle(30.0)
    assert group.usage().shmem == 0


@pytest.mark.slow
@needs_v1
async def test_sweep_removes_the_groups_of_a_dead_changeup_only() -> None:
    """A group named for a process that is gone is removed; one named for a live process stays."""
    dead = subprocess.run(["true"], check=True)  # a pid that was, and is no more
    del dead
    gone = Cgroup.create(V1, f"changeup-sweeptest-{2**22 + 7}-x")  # pids never reach this high
    alive = Cgroup.create(V1, f"changeup-sweeptest-{os.getpid()}-x")
    try:
        sweep(V1, "changeup-sweeptest-")
        assert not any(path.exists() for path in gone.paths.values())
        assert all(path.exists() for path in alive.paths.values())
    finally:
        await alive.remove()
        await gone.remove()


@pytest.mark.slow
@needs_v2_mount
async def test_v2_freeze_kill_and_launcher_on_a_real_cgroup2(
    processes: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    """On a cgroup2 mount (no controllers needed): the launcher joins, freeze waits for the
    kernel's ``frozen 1``, a frozen group is killed at once (cgroup.kill) and removed."""
    where = Support(2, (("unified", UNIFIED),), frozenset({"freezer"}))
    group = Cgroup.create(where, f"changeup-test-{os.getpid()}-{secrets.token_hex(3)}")
    try:
        processes.append(subprocess.Popen([*group.launcher(), "sh", "-c", "sleep 60 & wait"]))
        await _until(lambda: len(group.pids()) == 2)
        assert await group.freeze(30.0)
        assert "frozen 1" in (group.paths["unified"] / "cgroup.events").read_text()
        await group.kill()
        assert group.pids() == set()
    finally:
        await group.remove()
    assert not group.paths["unified"].exists()


# --- v2 files, as the kernel lays them out (this machine's cgroup2 has no controllers) ---------


def _v2_folder(path: Path, controllers: str = "cpu memory pids") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "cgroup.controllers").write_text(controllers + "\n")
    (path / "cgroup.subtree_control").write_text("")
    (path / "cgroup.procs").write_text("")
    return path


def test_v2_limits_counters_and_subtree_control(tmp_path: Path) -> None:
    """A v2 group enables its controllers in its parent, writes memory.max with no swap beyond
    it, pids.max and cpu.max; its counters come from memory.peak, memory.events, pids.events."""
    base = _v2_folder(tmp_path / "base")
    group = Cgroup(2, {"unified": base / "session"}, {"memory", "pids", "cpu", "freezer"})
    group._make()
    assert (base / "cgroup.subtree_control").read_text() == "+cpu +memory +pids"
    (group.paths["unified"] / "memory.swap.max").write_text("max\n")
    group.limit(memory=512 * MB, tasks=64, cpus=0.5)
    files = group.paths["unified"]
    assert (files / "memory.max").read_text() == str(512 * MB)
    assert (files / "memory.swap.max").read_text() == "0"
    assert (files / "pids.max").read_text() == "64"
    assert (files / "cpu.max").read_text() == "50000 100000"
    (files / "memory.peak").write_text("1234\n")
    (files / "memory.events").write_text("low 0\nhigh 0\nmax 9\noom 2\noom_kill 2\n")
    (files / "pids.events").write_text("max 5\n")
    (files / "pids.peak").write_text("64\n")
    (files / "memory.stat").write_text("anon 1\nshmem 4096\n")
    usage = group.usage()
    assert (usage.memory_peak, usage.oom_kills, usage.forks_refused, usage.tasks_peak, usage.shmem) == (
        1234,
        2,
        5,
        64,
        4096,
    )
    assert group.procs == [files / "cgroup.procs"]


def test_v2_groups_go_in_the_delegated_folder_or_beside_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$CHANGEUP_CGROUP`` is used when set; otherwise the parent of this process's own group
    (its own group, not being the root, may not hold both processes and groups); a folder with
    no controller delegated says so."""
    root = _v2_folder(tmp_path / "cg")
    (root / "cgroup.type").unlink(missing_ok=True)  # the root has no cgroup.type
    mine = _v2_folder(root / "user.slice" / "me.scope")
    (mine / "cgroup.type").write_text("domain\n")
    (mine.parent / "cgroup.type").write_text("domain\n")
    _v2_folder(mine.parent)
    mount = _Mount(root, "/", "cgroup2", frozenset())
    monkeypatch.delenv("CHANGEUP_CGROUP", raising=False)
    found, why = _unified([mount], {"": "/user.slice/me.scope"})
    assert found is not None, why
    assert found.version == 2
    assert found.bases == (("unified", mine.parent),)
    assert found.controllers == frozenset({"cpu", "memory", "pids"})  # a plain folder has no cgroup.freeze
    delegated = _v2_folder(tmp_path / "delegated", controllers="pids")
    monkeypatch.setenv("CHANGEUP_CGROUP", str(delegated))
    found, why = _unified([mount], {"": "/user.slice/me.scope"})
    assert found is not None, why
    assert found.bases == (("unified", delegated),)
    assert found.controllers == frozenset({"pids"})
    empty = _v2_folder(tmp_path / "nothing", controllers="")
    monkeypatch.setenv("CHANGEUP_CGROUP", str(empty))
    found, why = _unified([mount], {"": "/user.slice/me.scope"})
    assert found is None
    assert "no memory, pids or cpu controller delegated" in why


async def test_no_control_groups_says_why_and_what_is_not_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """``CHANGEUP_CGROUPS=none`` turns them off: making a group says why, and a session's groups
    say loudly that the agent is neither limited nor frozen (the channel stays open)."""
    monkeypatch.setenv("CHANGEUP_CGROUPS", "none")
    support.cache_clear()
    try:
        off = support()
        groups = SessionGroups.make(Bounds(256, 64, 1.0, 16, 64), Bounds(128, 32, 1.0, 16))
    finally:
        support.cache_clear()
    assert off.version is None
    assert off.missing == "CHANGEUP_CGROUPS=none was set"
    with pytest.raises(CgroupError, match="CHANGEUP_CGROUPS=none"):
        Cgroup.create(off, "changeup-never")
    assert groups.agent is None
    assert groups.run() is None
    described = groups.describe()
    assert described["cgroups"] is None
    assert not described["frozen_during_tests"]
    (warning,) = described["warnings"]
    assert warning.startswith("no control groups (CHANGEUP_CGROUPS=none was set)")
    assert "not frozen while hidden tests run" in warning
    await groups.aclose()


def test_disk_usage_counts_what_is_on_disk_once_and_follows_no_link(tmp_path: Path) -> None:
    """A file's blocks once however many links it has, a sparse file as allocated, a symlink to a
    big folder as the link; and a flood is cut short once past the limit."""
    (tmp_path / "data").write_bytes(os.urandom(256 * 1024))
    os.link(tmp_path / "data", tmp_path / "again")
    with (tmp_path / "sparse").open("wb") as handle:
        handle.truncate(1 << 30)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "big").write_bytes(os.urandom(1024 * 1024))
    (tmp_path / "link").symlink_to(outside)
    used = disk_usage([tmp_path])
    assert 256 * 1024 <= used < 512 * 1024
    many = tmp_path / "many"
    many.mkdir()
    for index in range(50):
        (many / str(index)).write_bytes(b"x" * 8192)
    assert disk_usage([tmp_path], stop_at=1) > 1


@pytest.mark.slow
@needs_v1
async def test_an_agent_sandbox_freezes_its_group_and_a_turn_clock_skips_the_frozen_time(
    group: Cgroup, processes: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    """``AgentSandbox.frozen`` holds the agent's group still for its block and says for how long;
    a turn's clock registered with ``excluding_frozen`` moves on by exactly that span, one not
    registered does not."""
    agent = group.child("agent")
    view = AgentView(tmp_path / "ws", tmp_path / "notes", tmp_path / "home", tmp_path / "tmp")
    box = AgentSandbox(Sandbox("limits-only"), view, Bounds(256, 64, 1.0, 16, 64), agent)
    processes.append(subprocess.Popen([*agent.launcher(), "sleep", "60"]))
    await _until(lambda: len(agent.pids()) == 1)
    with anyio.CancelScope(deadline=1000.0) as turn, box.excluding_frozen(turn):
        async with box.frozen() as span:
            assert (agent.paths["freezer"] / "freezer.state").read_text().strip() == "FROZEN"
        assert (agent.paths["freezer"] / "freezer.state").read_text().strip() == "THAWED"
        assert span.held
        assert not span.killed
        assert span.seconds > 0
        assert turn.deadline == 1000.0 + span.seconds
    later = anyio.CancelScope(deadline=1000.0)
    async with box.frozen():
        pass
    assert later.deadline == 1000.0

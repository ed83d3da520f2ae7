"""The warm interpreter: hidden test runs forked from one clean zygote, each kept apart from the next.

Real parts throughout: bubblewrap, the zygote, real pytest runs of real hidden tests. The
agent's code here is a probe (``probe.py`` in the workspace, imported by the hidden tests)
that tries to leave something behind for the next run, to reach the zygote, to outlive
its run, or to crash what grades it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from orchestrator.challenge.loader import load_challenge
from orchestrator.challenge.model import Challenge
from orchestrator.grading.bounds import SessionGroups, agent_bounds
from orchestrator.grading.bounds import test_bounds as limits_of_tests
from orchestrator.grading.sandbox import Sandbox, detect_sandbox
from orchestrator.grading.testrun import PytestRunner
from orchestrator.log.verdicts import TestRun
from orchestrator.session.workspace import Workspace
from orchestrator.system.venvs import grading_environment
from tests.cli import REPO

pytestmark = [
    pytest.mark.slow,
    pytest.mark.anyio,
    pytest.mark.skipif(
        detect_sandbox().kind != "bubblewrap",
        reason=f"LOUD SKIP: the warm interpreter needs bubblewrap ({detect_sandbox().reason})",
    ),
]

ROOT = os.geteuid() == 0

CHALLENGE = """\
challenge:
  id: warm-probe
  title: Warm probe
  initial_briefing: |
    Write probe.py.
  phases:
    - id: phase1
  limits:
    test_run: {test_run}
"""

#: Hidden tests: what an earlier run left must be gone; what this run leaves must really stay
#: within it (so the first check can fail); the zygote must be out of reach.
HIDDEN = '''\
"""Hidden tests of the probe."""

import probe


def test_nothing_of_an_earlier_run_is_left():
    """No file, shared memory, variable or process of an earlier run."""
    assert probe.leftovers() == []


def test_what_this_run_leaves_stays_for_its_own_length():
    """Each trace is planted and readable within this run."""
    assert probe.plant() == []


def test_the_warm_interpreter_is_out_of_reach():
    """Nothing of the zygote can be seen, signalled or traced."""
    assert probe.reach() == []
'''

#: The agent's code. TOKEN names the processes it leaves behind, for the host to look for.
PROBE = """\
import builtins, ctypes, json, os, signal, subprocess, sys

TOKEN = {token!r}
libc = ctypes.CDLL(None, use_errno=True)
KEY = 0x4C454654
FILES = ("/tmp/left", "/dev/shm/left", "/changeup/out/left-in-out")


def leftovers():
    found = [path for path in FILES[:2] if os.path.exists(path)]
    if libc.shmget(KEY, 0, 0) >= 0:
        found.append("a System V shared memory segment")
    found += [name for name in ("LEFT",) if hasattr(json, name) or hasattr(builtins, name)]
    found += ["an environment variable"] if "LEFT" in os.environ else []
    return found


def plant():
    failed = []
    for path in FILES:
        with open(path, "w") as handle:
            handle.write(TOKEN)
    if libc.shmget(KEY, 4096, 0o1000 | 0o666) < 0:  # IPC_CREAT
        failed.append("shmget")
    json.LEFT = builtins.LEFT = True
    os.environ["LEFT"] = "1"
    daemon = "import os, sys, time\\nif os.fork() == 0:\\n    os.setsid()\\n    time.sleep(300)\\n"
    subprocess.run([sys.executable, "-c", daemon, TOKEN], check=True)  # its child lives on
    return failed if len(leftovers()) == 5 else [*failed, f"only {{leftovers()}} took"]


def reach():
    reached = []
    if os.readlink("/proc/self") != str(os.getpid()) or os.getppid() != 1:
        reached.append("a /proc or a parent of another PID namespace")
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in (1, os.getpid()):
            with open(f"/proc/{{name}}/cmdline", "rb") as handle:
                if b"zygote.py" in handle.read():
                    reached.append(f"a process of the warm interpreter: {{name}}")
    status = open("/proc/self/status").read().splitlines()
    reached += [line for line in status if line.startswith("Cap") and int(line.split()[1], 16)]
    if libc.ptrace(16, 1, 0, 0) == 0:  # PTRACE_ATTACH to this run's init
        reached.append("ptrace attached to init")
    if {root}:
        try:
            os.kill(1, signal.SIGKILL)
            reached.append("signalled init")
        except PermissionError:
            pass
    for path in ("/changeup/harness/zygote.py", "/changeup/env/left", "/changeup/left", "/left"):
        try:
            open(path, "a").close()
            reached.append(f"wrote {{path}}")
        except OSError:
            pass
    os.kill(-1, signal.SIGKILL)  # every process it may signal
    return reached
"""


@pytest.fixture
def anyio_backend() -> str:
    """Real time and real subprocesses: asyncio."""
    return "asyncio"


def probe_challenge(folder: Path, hidden: str = HIDDEN, *, test_run: str = "60s") -> Challenge:
    """A one-phase challenge whose hidden tests are ``hidden`` and whose workspace is ``probe.py``."""
    (folder / "workspace").mkdir(parents=True)
    (folder / "workspace" / "probe.py").write_text("")
    (folder / "tests" / "phase1").mkdir(parents=True)
    (folder / "tests" / "phase1" / "test_probe.py").write_text(hidden)
    (folder / "challenge.yaml").write_text(CHALLENGE.format(test_run=test_run))
    return load_challenge(folder)


async def runner_on(
    challenge: Challenge, tmp_path: Path, sandbox: Sandbox | None = None
) -> tuple[PytestRunner, Workspace]:
    """A runner (in ``sandbox``, by default the one detected) and the workspace it grades."""
    workspace = Workspace.create(challenge.workspace, tmp_path / "workspace", tmp_path / "shadow.git")
    environment = await anyio.to_thread.run_sync(grading_environment, challenge.model.requirements)
    scratch = tmp_path / "scratch"
    return PytestRunner(challenge, workspace, scratch, environment=environment, sandbox=sandbox), workspace


async def with_probe(workspace: Workspace, source: str) -> str:
    """The snapshot of the workspace with ``probe.py`` as ``source``."""
    (workspace.path / "probe.py").write_text(source)
    return await workspace.snapshot()


def processes_naming(token: str) -> list[int]:
    """Processes on this machine whose command line holds ``token``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def pid_namespace(pid: int) -> str:
    """The PID namespace of ``pid``'s child (bubblewrap's init is in its sandbox's)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            if parent == pid:
                return os.readlink(entry / "ns" / "pid")
    raise LookupError(f"process {pid} has no child")


def in_namespace(namespace: str) -> list[int]:
    """Processes on this machine whose PID namespace is ``namespace``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "ns" / "pid") == namespace:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def verdicts(run: TestRun) -> list[tuple[str, str]]:
    """Each test's id and outcome."""
    return [(t.id, t.outcome) for phase in run.phases for t in phase.tests]


async def test_warm_runs_give_the_verdicts_cold_runs_give(tmp_path: Path) -> None:
    """The reference and the starter of export-time: the same verdicts from a fresh interpreter
    and from forks of one warm interpreter (two runs, one zygote)."""
    challenge = load_challenge(REPO / "challenges" / "export-time")
    runner, workspace = await runner_on(challenge, tmp_path)
    starter = await workspace.snapshot()
    solution = challenge.root / "solutions" / "reference" / "phase2" / "export_time.py"
    (workspace.path / "export_time.py").write_text(solution.read_text())
    reference = await workspace.snapshot()
    phases = ("phase1", "phase2")
    cold = [await runner.run(tree, phases) for tree in (reference, starter)]
    async with runner:
        assert runner.warm is not None
        warm = [await runner.run(tree, phases) for tree in (reference, starter)]
        assert runner.warm.served == 2
    assert [r.status for r in cold] == [r.status for r in warm] == ["ok", "ok"]
    assert [(p.passed, p.failed) for p in warm[0].phases] == [(3, 0), (7, 0)]
    assert [verdicts(r) for r in warm] == [verdicts(r) for r in cold]
    assert runner.warm is None


async def test_nothing_a_run_leaves_reaches_the_next(tmp_path: Path) -> None:
    """A run plants files in /tmp and /dev/shm, shared memory, variables and a daemon; the next
    run of the same zygote finds none of them, and no process of the first outlives it."""
    token = f"warm-probe-{uuid.uuid4().hex}"  # unique machine-wide: runs of other suites look too
    runner, workspace = await runner_on(probe_challenge(tmp_path / "challenge"), tmp_path)
    tree = await with_probe(workspace, PROBE.format(token=token, root=ROOT))
    async with runner:
        first = await runner.run(tree, ("phase1",))
        assert first.status == "ok", first.detail
        assert processes_naming(token) == []
        second = await runner.run(tree, ("phase1",))
        assert runner.warm is not None
        assert runner.warm.served == 2
    assert second.status == "ok", second.detail
    assert [(p.passed, p.failed) for p in (*first.phases, *second.phases)] == [(3, 0), (3, 0)], [
        t.detail for p in second.phases for t in p.tests if t.outcome != "passed"
    ]


async def test_a_run_that_times_out_takes_its_whole_namespace_with_it(tmp_path: Path) -> None:
    """Code that starts a daemon and never returns: the run times out, the daemon is gone, and
    the same zygote grades the next run."""
    token = f"warm-loop-{uuid.uuid4().hex}"  # unique machine-wide: runs of other suites look too
    runner, workspace = await runner_on(probe_challenge(tmp_path / "challenge", test_run="10s"), tmp_path)
    looping = PROBE.format(token=token, root=ROOT) + "\nplant()\nwhile True:\n    pass\n"
    honest = await with_probe(workspace, PROBE.format(token=token, root=ROOT))
    async with runner:
        looped = await runner.run(await with_probe(workspace, looping), ("phase1",))
        assert looped.status == "timeout", looped.detail
        assert processes_naming(token) == []
        assert runner.warm is not None
        zygote = runner.warm.pid
        after = await runner.run(honest, ("phase1",))
        assert after.status == "ok", after.detail
        assert runner.warm.pid == zygote


async def test_a_cancelled_run_is_gone_when_run_returns(tmp_path: Path) -> None:
    """Cancelling a run (the session ending) stops every process of it before ``run`` returns."""
    token = f"warm-cancel-{uuid.uuid4().hex}"  # unique machine-wide: runs of other suites look too
    runner, workspace = await runner_on(probe_challenge(tmp_path / "challenge"), tmp_path)
    waiting = PROBE.format(token=token, root=ROOT) + "\nplant()\nimport time\ntime.sleep(300)\n"
    tree = await with_probe(workspace, waiting)
    async with runner:
        async with anyio.create_task_group() as group:
            group.start_soon(runner.run, tree, ("phase1",))
            while not list((tmp_path / "scratch" / "warm" / "runs").glob("*/out/left-in-out")):
                await anyio.sleep(0.05)
            group.cancel_scope.cancel()
        assert processes_naming(token) == []
        honest = await runner.run(
            await with_probe(workspace, PROBE.format(token=token, root=ROOT)), ("phase1",)
        )
        assert honest.status == "ok", honest.detail


async def test_a_run_cancelled_at_any_moment_leaves_the_next_whole(tmp_path: Path) -> None:
    """The session can end at any point of a run (export, request, pytest, its group's removal):
    cancelled after 0 to 150 ms in 2.5 ms steps, in the session's control groups, each run is
    followed by one of the same snapshot that gives the first run's verdicts."""
    challenge = load_challenge(REPO / "challenges" / "export-time")
    limits = challenge.model.limits
    groups = SessionGroups.make(agent_bounds(limits), limits_of_tests(limits))
    workspace = Workspace.create(challenge.workspace, tmp_path / "workspace", tmp_path / "shadow.git")
    environment = await anyio.to_thread.run_sync(grading_environment, challenge.model.requirements)
    runner = PytestRunner(challenge, workspace, tmp_path / "scratch", environment=environment, groups=groups)
    solution = challenge.root / "solutions" / "reference" / "phase2" / "export_time.py"
    (workspace.path / "export_time.py").write_text(solution.read_text())
    phases = ("phase1", "phase2")
    try:
        async with runner:
            first = await runner.run(await workspace.snapshot(), phases)
            assert first.status == "ok", first.detail
            for step in range(60):
                (workspace.path / "notes.txt").write_text(str(step))  # a new snapshot: no cache
                tree = await workspace.snapshot()
                with anyio.move_on_after(step * 0.0025):
                    await runner.run(tree, phases)
                after = await runner.run(tree, phases)
                assert after.status == "ok", (step, after.detail)
                assert verdicts(after) == verdicts(first), step
    finally:
        await groups.aclose()


async def test_a_crash_of_the_warm_interpreter_voids_the_run_and_the_next_starts_another(
    tmp_path: Path,
) -> None:
    """The zygote killed mid-run: that run is invalid (the grader's failure, never a zero), and
    the next run is graded by a new zygote."""
    token = f"warm-crash-{uuid.uuid4().hex}"  # unique machine-wide: runs of other suites look too
    runner, workspace = await runner_on(probe_challenge(tmp_path / "challenge"), tmp_path)
    waiting = PROBE.format(token=token, root=ROOT) + "\nplant()\nimport time\ntime.sleep(300)\n"
    tree = await with_probe(workspace, waiting)
    runs: list[TestRun] = []
    async with runner:
        assert runner.warm is not None
        async with anyio.create_task_group() as group:

            async def graded() -> None:
                runs.append(await runner.run(tree, ("phase1",)))

            group.start_soon(graded)
            while not list((tmp_path / "scratch" / "warm" / "runs").glob("*/out/left-in-out")):
                await anyio.sleep(0.05)
            first = runner.warm.pid
            assert first is not None
            os.kill(first, signal.SIGKILL)
        assert runs[0].status == "invalid"
        assert "warm interpreter" in runs[0].detail
        honest = await runner.run(
            await with_probe(workspace, PROBE.format(token=token, root=ROOT)), ("phase1",)
        )
        assert honest.status == "ok", honest.detail
        assert runner.warm.pid not in (None, first)


async def test_the_warm_interpreter_ends_with_its_runner(tmp_path: Path) -> None:
    """After ``async with``, no process of the zygote's sandbox is left, and no run's folder
    (removed off the runs' way, in threads the exit waits for)."""
    runner, workspace = await runner_on(probe_challenge(tmp_path / "challenge"), tmp_path)
    tree = await with_probe(workspace, PROBE.format(token="unused", root=ROOT))
    runs = tmp_path / "scratch" / "warm" / "runs"
    async with runner:
        for _ in range(2):
            assert (await runner.run(tree, ("phase1",))).status == "ok"
        assert runner.warm is not None
        assert runner.warm.pid is not None
        namespace = pid_namespace(runner.warm.pid)
        assert in_namespace(namespace) != []
    left = in_namespace(namespace)
    assert left == [], [Path(f"/proc/{pid}/status").read_text()[:600] for pid in left]
    assert list(runs.iterdir()) == []


HOST = """\
import sys, anyio
from pathlib import Path
from orchestrator.challenge.loader import load_challenge
from orchestrator.grading.testrun import PytestRunner
from orchestrator.system.venvs import grading_environment
from orchestrator.session.workspace import Workspace

async def main():
    tmp = Path(sys.argv[1])
    challenge = load_challenge(tmp / "challenge")
    workspace = Workspace.create(challenge.workspace, tmp / "workspace", tmp / "shadow.git")
    runner = PytestRunner(challenge, workspace, tmp / "scratch", environment=grading_environment([]))
    async with runner:
        await runner.run(await workspace.snapshot(), ("phase1",))
        print(runner.warm.pid, flush=True)
        await anyio.sleep(600)

anyio.run(main)
"""


@pytest.fixture
def host(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """A changeup process holding a warm interpreter (killed at the end, whatever happens)."""
    probe_challenge(tmp_path / "challenge")
    command = [sys.executable, "-c", HOST, str(tmp_path)]
    with subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True) as process:
        yield process
        process.kill()


async def test_the_warm_interpreter_dies_with_changeup(host: subprocess.Popen[str]) -> None:
    """changeup killed outright (SIGKILL, no clean-up): the zygote's sandbox goes with it."""
    assert host.stdout is not None
    namespace = pid_namespace(int(host.stdout.readline()))
    assert in_namespace(namespace) != []
    host.kill()
    host.wait()
    with anyio.fail_after(60):  # bubblewrap's parent-death signal, then the kernel's teardown
        while in_namespace(namespace):
            await anyio.sleep(0.1)


async def test_other_sandboxes_run_each_test_run_cold(tmp_path: Path) -> None:
    """Without bubblewrap there is no warm interpreter: runs start fresh, inside ``async with`` too."""
    challenge = load_challenge(REPO / "challenges" / "export-time")
    runner, workspace = await runner_on(challenge, tmp_path, sandbox=Sandbox("limits-only", "a test"))
    solution = challenge.root / "solutions" / "reference" / "phase1" / "export_time.py"
    (workspace.path / "export_time.py").write_text(solution.read_text())
    async with runner:
        assert runner.warm is None
        run = await runner.run(await workspace.snapshot(), ("phase1",))
    assert run.status == "ok", run.detail
    assert [(p.passed, p.failed) for p in run.phases] == [(5, 0)]
    assert not (tmp_path / "scratch" / "warm").exists()

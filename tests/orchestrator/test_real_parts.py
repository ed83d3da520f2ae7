"""The session's real seams: git workspace and snapshots, pytest runs, the file watcher."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from orchestrator.challenge.loader import load_challenge
from orchestrator.grading.testrun import PytestRunner
from orchestrator.session.watcher import FsWatcher
from orchestrator.session.workspace import Workspace
from orchestrator.system.processes import run_process_group
from orchestrator.system.venvs import grading_environment
from tests.cli import REPO
from triggers import FileChange

pytestmark = [pytest.mark.slow, pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    """Real time and real subprocesses: asyncio."""
    return "asyncio"


def workspace_from(template: Path, tmp_path: Path) -> Workspace:
    """A fresh workspace from ``template``."""
    return Workspace.create(template, tmp_path / "workspace", tmp_path / "shadow.git")


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd``."""
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


async def test_workspace_has_one_baseline_commit_and_no_hidden_files(tmp_path: Path) -> None:
    """The agent's repo holds the starter files only, in one commit."""
    ws = workspace_from(REPO / "challenges/export-time/workspace", tmp_path)
    assert git(ws.path, "log", "--format=%s").splitlines() == ["Starting point"]
    assert git(ws.path, "ls-files").split() == ["export_time.py"]
    assert ws.files() == ["export_time.py"]
    assert not any("test_" in p for p in ws.files())


async def test_snapshots_are_tree_ids_and_leave_the_agent_repo_alone(tmp_path: Path) -> None:
    """Equal contents give equal trees; the shadow repo never touches the agent's .git."""
    ws = workspace_from(REPO / "challenges/export-time/workspace", tmp_path)
    first = await ws.snapshot()
    assert await ws.snapshot() == first
    (ws.path / "notes.md").write_text("hello")
    (ws.path / "__pycache__").mkdir()
    (ws.path / "__pycache__" / "x.pyc").write_bytes(b"\0")
    second = await ws.snapshot()
    assert second != first
    assert git(ws.path, "diff", "--cached", "--name-only") == ""
    assert "?? notes.md" in git(ws.path, "status", "--porcelain")
    (ws.path / "notes.md").unlink()
    assert await ws.snapshot() == first
    out = tmp_path / "export"
    await ws.export(second, out)
    assert sorted(p.name for p in out.iterdir()) == ["export_time.py", "notes.md"]


async def test_new_commits_are_reported_once_oldest_first(tmp_path: Path) -> None:
    """Commits the agent makes are found after the fact, each once."""
    ws = workspace_from(REPO / "challenges/export-time/workspace", tmp_path)
    assert await ws.new_commits() == []
    for name in ("a", "b"):
        (ws.path / name).write_text(name)
        git(ws.path, "add", name)
        git(ws.path, "commit", "-q", "-m", f"add {name}")
    assert [commit.message for commit in await ws.new_commits()] == ["add a", "add b"]
    assert await ws.new_commits() == []


async def runner_for(challenge_name: str, tmp_path: Path, solution: str | None) -> tuple[PytestRunner, str]:
    """A runner over a workspace with ``solution``'s phase files applied."""
    challenge = load_challenge(REPO / "challenges" / challenge_name)
    ws = workspace_from(challenge.workspace, tmp_path)
    if solution:
        shutil.copytree(challenge.root / "solutions" / solution, ws.path, dirs_exist_ok=True)
    grading = grading_environment(challenge.model.requirements)
    return PytestRunner(challenge, ws, tmp_path / "scratch", environment=grading), await ws.snapshot()


async def test_pytest_run_gives_verdicts_per_phase_and_drops_superseded(tmp_path: Path) -> None:
    """The reference phase 2 passes phase 2 and phase 1 minus its superseded tests."""
    runner, tree = await runner_for("export-time", tmp_path, "reference/phase2")
    run = await runner.run(tree, ("phase1", "phase2"))
    assert run.status == "ok"
    phase1, phase2 = run.phases
    assert (phase1.passed, phase1.failed) == (3, 0)
    assert "phase1/test_export_time.py::test_keeps_offset" not in [t.id for t in phase1.tests]
    assert (phase2.passed, phase2.failed) == (7, 0)
    assert "phase2/test_export_utc.py::test_same_instant[-11]" in [t.id for t in phase2.tests]
    assert not (tmp_path / "workspace" / "test_export_utc.py").exists()
    # Only the kept export of the last snapshot stays, for the next run to update.
    assert [p.name for p in (tmp_path / "scratch").iterdir()] == ["export"]


async def test_starter_fails_with_reasons(tmp_path: Path) -> None:
    """The stub fails every phase 1 test, each with its error."""
    runner, tree = await runner_for("export-time", tmp_path, None)
    (phase1,) = (await runner.run(tree, ("phase1",))).phases
    assert phase1.passed == 0
    assert phase1.failed == 5
    assert all("NotImplementedError" in t.detail or "raise" in t.detail for t in phase1.tests)


async def test_collection_error_marks_every_test_missing(tmp_path: Path) -> None:
    """A workspace that does not even import fails every listed test, with pytest's words.

    The run itself is clean: the agent's code failed, the grader did not.
    """
    runner, tree = await runner_for("export-time", tmp_path, None)
    (tmp_path / "workspace" / "export_time.py").write_text("def broken(:\n")
    tree = await runner.repo.snapshot()
    run = await runner.run(tree, ("phase1",))
    assert run.status == "ok", run.detail
    (phase1,) = run.phases
    assert phase1.passed == 0
    assert {t.outcome for t in phase1.tests} == {"missing"}
    assert all("SyntaxError" in t.detail for t in phase1.tests)


async def test_skipped_hidden_test_counts_as_failed(tmp_path: Path) -> None:
    """A hidden test that skips has not passed."""
    runner, tree = await runner_for("normalize-tags", tmp_path, "reference/phase1")
    (tmp_path / "workspace" / "conftest.py").write_text("")  # the agent's conftest is not loaded
    (tmp_path / "workspace" / "tags.py").write_text(
        "import pytest\n\ndef normalize_tags(tags):\n    pytest.skip('not today')\n"
    )
    tree = await runner.repo.snapshot()
    (phase1,) = (await runner.run(tree, ("phase1",))).phases
    assert phase1.passed == 0
    # In-process the test skips; isolated (as normalize-tags is) the skip is the host's, not the
    # tests': it arrives as an ordinary exception named Skipped, and the test fails.
    assert all(t.detail.lower().startswith("skipped") for t in phase1.tests)


async def test_hanging_tests_are_killed_at_the_time_limit(tmp_path: Path) -> None:
    """An in-process run that hangs is stopped, as timed out, with every test failed."""
    runner, tree = await runner_for("pivot-todo-api", tmp_path, None)
    (tmp_path / "workspace" / "app.py").write_text("import time\n\ntime.sleep(60)\n")
    tree = await runner.repo.snapshot()
    runner.timeout = 2.0
    with anyio.fail_after(20):
        run = await runner.run(tree, ("phase1",))
    assert run.status == "timeout"
    assert run.phases[0].passed == 0
    assert "timed out after 2s" in run.detail


async def test_a_hung_call_into_an_isolated_workspace_fails_its_tests_and_the_run_ends_graded(
    tmp_path: Path,
) -> None:
    """Isolated (as normalize-tags is), a call that never returns fails its test at half the run's
    limit and every later call at once: the run ends graded, with the reason on each test."""
    runner, tree = await runner_for("normalize-tags", tmp_path, None)
    (tmp_path / "workspace" / "tags.py").write_text(
        "import time\n\ndef normalize_tags(tags):\n    time.sleep(60)\n"
    )
    tree = await runner.repo.snapshot()
    # Room for pytest to start on a loaded machine: the first call waits 8 s, the rest fail at once.
    runner.timeout = 16.0
    with anyio.fail_after(60):
        run = await runner.run(tree, ("phase1",))
    assert run.status == "ok", run.detail
    (phase1,) = run.phases
    assert phase1.passed == 0
    assert phase1.failed > 0
    assert all("did not answer within 8s" in t.detail for t in phase1.tests)


async def test_command_phase_reads_any_junit(tmp_path: Path) -> None:
    """A phase run by a shell command is graded from the JUnit XML it writes."""
    root = tmp_path / "challenge"
    shutil.copytree(REPO / "challenges" / "normalize-tags", root)
    text = (
        (root / "challenge.yaml")
        .read_text()
        .replace(
            "    - id: phase1\n      title: trim and drop empties\n",
            "    - id: phase1\n      title: trim and drop empties\n"
            "      command: sh $CHANGEUP_TESTS/check.sh\n"
            "      testing: {tools: [cat]}\n",
        )
    )
    (root / "challenge.yaml").write_text(text)
    (root / "tests" / "phase1" / "check.sh").write_text(
        "cat > \"$CHANGEUP_JUNIT\" <<'XML'\n"
        '<testsuite><testcase classname="shell" name="exists"/>'
        '<testcase classname="shell" name="fails"><failure message="nope"/></testcase></testsuite>\n'
        "XML\n"
    )
    challenge = load_challenge(root)
    ws = Workspace.create(challenge.workspace, tmp_path / "workspace", tmp_path / "shadow.git")
    runner = PytestRunner(challenge, ws, tmp_path / "scratch", environment=grading_environment([]))
    (phase1,) = (await runner.run(await ws.snapshot(), ("phase1",))).phases
    assert [(t.id, t.outcome, t.detail) for t in phase1.tests] == [
        ("phase1/shell::exists", "passed", ""),
        ("phase1/shell::fails", "failed", "nope"),
    ]


async def test_process_group_is_killed_on_timeout(tmp_path: Path) -> None:
    """A timed-out command's children die with it; the output tail is kept."""
    marker = tmp_path / "child-alive"
    script = f"(sleep 3; touch {marker}) & echo started; sleep 30"
    finished = await run_process_group(
        ["sh", "-c", script], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}, timeout=1
    )
    assert finished.timed_out
    assert finished.returncode is None
    assert "started" in finished.output
    await anyio.sleep(3)
    assert not marker.exists()


async def test_output_flood_keeps_the_tail(tmp_path: Path) -> None:
    """Only the last bytes of a flood are kept."""
    finished = await run_process_group(
        [sys.executable, "-c", "print('x' * 200000); print('the end')"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        timeout=30,
        keep=1000,
    )
    assert finished.truncated
    assert len(finished.output) == 1000
    assert finished.output.endswith("the end\n")


async def test_watcher_reports_changes_and_commits(tmp_path: Path) -> None:
    """Real file changes arrive as one debounced batch; a commit sets the git flag."""
    ws = workspace_from(REPO / "challenges/export-time/workspace", tmp_path)
    watcher = FsWatcher(ws.path, step=0.03, debounce=0.3)
    batches = []

    async def collect() -> None:
        async for batch in watcher.batches():
            batches.append(batch)
            if any(b.git for b in batches):
                return

    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            group.start_soon(collect)
            await anyio.sleep(0.3)
            (ws.path / "new.py").write_text("x = 1\n")
            (ws.path / "__pycache__").mkdir()
            (ws.path / "__pycache__" / "new.cpython-311.pyc").write_bytes(b"\0")
            await anyio.sleep(0.5)
            git(ws.path, "add", "new.py")
            git(ws.path, "commit", "-q", "-m", "add new")
    changes = [c for b in batches for c in b.changes]
    assert FileChange("new.py", "added") in changes
    assert not any("__pycache__" in c.path or c.path.startswith(".git") for c in changes)
    assert [c.message for c in await ws.new_commits()] == ["add new"]


async def test_output_split_inside_a_character_is_decoded_whole(tmp_path: Path) -> None:
    """A multi-byte character split between two reads reaches the callback intact."""
    script = "import sys, time\nsys.stdout.buffer.write(b'caf\\xc3'); sys.stdout.flush(); time.sleep(0.2)\n"
    script += "sys.stdout.buffer.write(b'\\xa9 ok\\n'); sys.stdout.flush()\n"
    seen: list[str] = []
    finished = await run_process_group(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        timeout=30,
        on_output=seen.append,
    )
    assert "".join(seen) == "café ok\n"
    assert finished.output == "café ok\n"

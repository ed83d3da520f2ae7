"""A ``command:`` phase's results come through a pipe only changeup reads, and its exit must agree.

Real test runs of a shell command, in each sandbox this machine has: ``$CHANGEUP_JUNIT`` is a
pipe, so what the code under test writes to it beside the runner makes two documents (no
result), nothing can be written after the command's end, and it cannot be read back.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.challenge.loader import load_challenge
from orchestrator.grading.sandbox import detect_sandbox
from orchestrator.grading.testrun import PytestRunner
from orchestrator.log.verdicts import TestRun
from orchestrator.session.workspace import Workspace
from orchestrator.system.venvs import grading_environment
from tests.cli import REPO

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

JUNIT = (
    '<testsuite><testcase classname="shell" name="exists"/>'
    '<testcase classname="shell" name="greets">{outcome}</testcase></testsuite>'
)
FAILING = '<failure message="no greeting"/>'


@pytest.fixture
def anyio_backend() -> str:
    """Real time and real subprocesses: asyncio."""
    return "asyncio"


@pytest.fixture(params=["bubblewrap", "user", "none"])
def sandbox(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each sandbox a command can run in here (``CHANGEUP_SANDBOX`` chooses a weaker one)."""
    kind: str = request.param
    if kind != "bubblewrap":
        monkeypatch.setenv("CHANGEUP_SANDBOX", kind)
    detect_sandbox.cache_clear()
    found = detect_sandbox(grading_environment([]).python)
    wanted = {"bubblewrap": "bubblewrap", "user": "user", "none": "limits-only"}[kind]
    if found.kind != wanted:
        pytest.skip(f"LOUD SKIP: no {wanted} sandbox here ({found.reason})")
    yield kind
    detect_sandbox.cache_clear()


async def command_run(tmp_path: Path, script: str) -> TestRun:
    """A test run of a phase whose command is ``script`` (sh, with ``cat`` and ``sleep`` declared:
    a test command sees only the tools it declares), on the starter workspace."""
    root = tmp_path / "challenge"
    shutil.copytree(REPO / "challenges" / "normalize-tags", root)
    text = (root / "challenge.yaml").read_text()
    phase = "    - id: phase1\n      title: trim and drop empties\n"
    (root / "challenge.yaml").write_text(
        text.replace(
            phase,
            phase
            + "      command: sh $CHANGEUP_TESTS/check.sh\n      testing:\n        tools: [cat, sleep]\n",
        )
    )
    (root / "tests" / "phase1" / "check.sh").write_text(script)
    challenge = load_challenge(root)
    ws = Workspace.create(challenge.workspace, tmp_path / "workspace", tmp_path / "shadow.git")
    runner = PytestRunner(challenge, ws, tmp_path / "scratch", environment=grading_environment([]))
    return await runner.run(await ws.snapshot(), ("phase1",))


def writes(xml: str, *, then: str = "") -> str:
    """A script that writes ``xml`` to $CHANGEUP_JUNIT, then runs ``then``."""
    return f"cat > \"$CHANGEUP_JUNIT\" <<'XML'\n{xml}\nXML\n{then}\n"


def outcomes(run: TestRun) -> list[tuple[str, str]]:
    return [(test.id, test.outcome) for phase in run.phases for test in phase.tests]


async def test_the_runners_junit_is_read_through_the_pipe(tmp_path: Path, sandbox: str) -> None:
    """What the command writes to $CHANGEUP_JUNIT, in pieces too, is its result."""
    halves = JUNIT.format(outcome=FAILING).split('<testcase classname="shell" name="greets">')
    script = (
        f"printf '%s' '{halves[0]}' > \"$CHANGEUP_JUNIT\"\n"
        f'printf \'%s\' \'<testcase classname="shell" name="greets">{halves[1]}\' >> "$CHANGEUP_JUNIT"\n'
    )
    run = await command_run(tmp_path, script)
    assert run.status == "ok", run.detail
    assert outcomes(run) == [("phase1/shell::exists", "passed"), ("phase1/shell::greets", "failed")]


async def test_a_forged_document_beside_the_runners_own_is_tampering(tmp_path: Path, sandbox: str) -> None:
    """A passing document written before the runner's failing one (code under test at import
    time) or after it (at exit) is a second document: the run is void, whichever came first."""
    forged, real = JUNIT.format(outcome=""), JUNIT.format(outcome=FAILING)
    for first, second in ((forged, real), (real, forged)):
        run = await command_run(tmp_path / first[-30:].replace("/", "_"), writes(first) + writes(second))
        assert run.status == "tampered", run.detail
        assert "junk after document element" in run.detail
        assert all(phase.passed == 0 for phase in run.phases)


async def test_an_exit_that_contradicts_the_junit_voids_the_run(tmp_path: Path, sandbox: str) -> None:
    """Every test passing and a failing exit cannot both be true: tampered. A failing test and
    exit 0 is a command that reports failures and succeeds itself: its verdicts stand."""
    run = await command_run(tmp_path / "contradicts", writes(JUNIT.format(outcome=""), then="exit 1"))
    assert run.status == "tampered"
    assert "exited 1, yet its JUnit XML reports no failing test" in run.detail
    run = await command_run(tmp_path / "agrees", writes(JUNIT.format(outcome=FAILING), then="exit 0"))
    assert run.status == "ok", run.detail


async def test_nothing_is_written_after_the_command_ends(tmp_path: Path, sandbox: str) -> None:
    """A process the command leaves behind to write once the runner is done is killed with it:
    the runner's result stands alone."""
    late = f"(sleep 2; printf '%s' '{JUNIT.format(outcome='')}' > \"$CHANGEUP_JUNIT\") &\n"
    run = await command_run(tmp_path, late + writes(JUNIT.format(outcome=FAILING)))
    assert run.status == "ok", run.detail
    assert outcomes(run) == [("phase1/shell::exists", "passed"), ("phase1/shell::greets", "failed")]


async def test_the_pipe_cannot_be_read_back(tmp_path: Path, sandbox: str) -> None:
    """The runner's document cannot be taken off the pipe by a reader of the code under test:
    $CHANGEUP_JUNIT opens for writing only (as changeup runs as root, the tests as another user)."""
    if sandbox == "none":
        pytest.skip("LOUD SKIP: without a user of its own the command is changeup's user, who owns the pipe")
    script = writes(JUNIT.format(outcome=FAILING), then='cat "$CHANGEUP_JUNIT" > /dev/null && exit 3; exit 0')
    run = await command_run(tmp_path, script)
    assert run.status == "ok", run.detail
    assert outcomes(run) == [("phase1/shell::exists", "passed"), ("phase1/shell::greets", "failed")]

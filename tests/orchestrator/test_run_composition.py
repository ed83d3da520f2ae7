"""A run's composition (session → scoring → written reports) on the fakes, on trio's MockClock.

The same :func:`finished_run` that ``changeup run`` calls with the real parts, here with
:class:`tests.fakes.FakeParts`: what the reports say about scope, time and how a run ended is
checked in milliseconds, with no process, git or pytest run. One real session per agent kind
and per attack stays in tests/e2e and tests/redteam.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from trio.testing import MockClock

from orchestrator.challenge.loader import load_challenge
from orchestrator.challenge.model import Challenge
from orchestrator.log.eventlog import EventLog, LogReader
from orchestrator.log.records import WorkspaceCreated
from orchestrator.log.report import Report, load_report
from orchestrator.run.folder import RunFolder
from orchestrator.run.parts import RunParts, SetupFailed
from orchestrator.run.runs import finished_run, write_reports
from orchestrator.seams import Message
from orchestrator.session.loop import Outcome
from tests.cli import REPO, in_process
from tests.fakes import FakeAgent, FakeParts, World, passes_when

pytestmark = pytest.mark.anyio

CHALLENGE = """\
challenge:
  id: composed
  initial_briefing: Build phase 1.
  phases:
    - id: phase1
    - id: phase2
  triggers:
    - id: pivot
      condition: phase1_tests_pass
      kind: pivot
      unlocks: phase2
      message: Now phase 2.
    - id: deadline
      condition: time_elapsed > 10min AND phase1_tests_not_pass
      kind: deadline
      unlocks: phase2
      message: Deadline. Now phase 2.
  limits:
    session: 1h
  allowed_paths: ["solution.py", "tests/**"]
"""


@pytest.fixture
def anyio_backend() -> tuple[str, dict[str, Any]]:
    """Trio with a clock that jumps whenever every task is waiting."""
    return ("trio", {"clock": MockClock(autojump_threshold=0)})


def challenge_at(root: Path) -> Challenge:
    """A two-phase challenge folder with a scope (the fakes never run its tests)."""
    (root / "workspace").mkdir(parents=True)
    for phase in ("phase1", "phase2"):
        (root / "tests" / phase).mkdir(parents=True)
        (root / "tests" / phase / f"test_{phase}.py").write_text("def test_x():\n    pass\n")
    (root / "challenge.yaml").write_text(CHALLENGE)
    return load_challenge(root)


async def composed(
    tmp_path: Path, behaviour: Any
) -> tuple[RunFolder, Outcome, Report, list[dict[str, Any]], FakeParts]:
    """One run composed on the fakes: its folder, outcome, report, log records and parts."""
    challenge = challenge_at(tmp_path / "challenge")
    world = World({"solution.py": ""})
    agent = FakeAgent(world, behaviour)
    factory = FakeParts(world, agent, passes_when({"phase1": "one", "phase2": "two"}))
    folder = RunFolder.new(tmp_path / "runs", challenge, agent.name)
    outcome, report = await finished_run(challenge, agent, folder, factory)
    return folder, outcome, report, list(LogReader(folder.log)), factory


async def test_a_file_changed_outside_allowed_paths_is_a_scope_finding(tmp_path: Path) -> None:
    """The agent also writes scratch.txt: report.json, report.md and show name it; the score is untouched."""

    async def solves_and_scribbles(world: World, message: Message) -> None:
        await anyio.sleep(60)
        world.write("solution.py", "one two")
        world.write("scratch.txt", "what I tried")

    folder, _, report, _, _ = await composed(tmp_path, solves_and_scribbles)
    assert report.score.full_success  # a finding is reported, not scored
    assert report.scope is not None
    assert report.scope.model_dump() == {
        "allowed_paths": ["solution.py", "tests/**"],
        "changed": 2,
        "findings": [{"path": "scratch.txt", "change": "added"}],
    }
    assert load_report(folder.path / "report.json") == report
    line = "1 file changed outside allowed_paths: scratch.txt (added)"
    assert line in (folder.path / "report.md").read_text()
    shown = in_process("show", str(folder.path))
    assert f"scope: {line}" in shown.output


async def test_changes_inside_allowed_paths_are_no_finding(tmp_path: Path) -> None:
    """An agent that changes only what the challenge allows: the report says so."""

    async def solves(world: World, message: Message) -> None:
        world.write("solution.py", "one two")

    folder, _, report, _, _ = await composed(tmp_path, solves)
    assert report.scope is not None
    assert report.scope.findings == []
    assert "Scope: every change is inside allowed_paths" in (folder.path / "report.md").read_text()


async def test_a_pending_deadline_keeps_the_session_open_for_an_agent_that_takes_messages(
    tmp_path: Path,
) -> None:
    """The agent ends its turn with phase1 failing; the session skips the clock to the deadline,
    delivers its message, and the agent's second turn does phase2; the report times it so."""

    async def waits_for_the_deadline(world: World, message: Message) -> None:
        if message.trigger == "deadline":
            world.write("solution.py", "two")

    _, outcome, report, records, factory = await composed(tmp_path, waits_for_the_deadline)
    assert outcome.status == "completed"
    assert [r["trigger"] for r in records if r["kind"] == "message.delivered"] == ["briefing", "deadline"]
    assert [r["kind"] for r in records].count("agent.turn_ended") == 2
    [skipped] = [r for r in records if r["kind"] == "clock.skipped"]
    assert skipped["until"] > 600
    assert [r["reason"] for r in records if r["kind"] == "session.ended"] == ["agent_done"]
    assert records[-1]["kind"] == "session.scored"
    phase1, phase2 = report.phases
    assert (phase2.unlocked_by, phase2.passed, phase1.passed) == ("deadline", 2, 0)
    deadline = next(t for t in report.triggers if t.id == "deadline")
    assert deadline.fired_at == pytest.approx(600, abs=1)
    assert factory.closed


async def test_messages_are_cut_visibly_and_shown_in_full_with_all_or_by_number(tmp_path: Path) -> None:
    """export-time's messages: a cut message ends with …; --all prints it whole; --message N
    prints only message N, and a number past the last is refused naming how many there are."""
    challenge = load_challenge(REPO / "challenges" / "export-time")
    world = World({"solution.py": ""})

    async def solves(world: World, message: Message) -> None:
        world.write("solution.py", {"phase1": "one", "phase2": "one two"}.get(message.phase or "", ""))

    agent = FakeAgent(world, solves)
    factory = FakeParts(world, agent, passes_when({"phase1": "one", "phase2": "two"}))
    folder = RunFolder.new(tmp_path / "runs", challenge, agent.name)
    _, report = await finished_run(challenge, agent, folder, factory)
    text = next(r["text"] for r in LogReader(folder.log) if r["kind"] == "message.queued")
    last_line = text.strip().splitlines()[-1]
    plain = in_process("show", str(folder.path)).output
    assert "✉ #1 briefing (briefing) queued: export_time.py has a stub" in plain
    assert "Implement it for our export: …" in plain
    assert last_line not in plain
    assert last_line in in_process("show", str(folder.path), "--all").output
    one = in_process("show", str(folder.path), "--message", "2")
    assert one.exit_code == 0, one.output
    assert one.output.splitlines()[0].startswith("#2 revision (revision), queued ")
    assert report.messages[1].text.strip() in one.output
    assert "tests #1:" in plain
    assert "tests #2:" in plain
    missing = in_process("show", str(folder.path), "--message", "9")
    assert missing.exit_code == 2
    assert "the run has 2 message(s), numbered from 1" in missing.output


async def test_an_interrupted_run_reads_as_ctrl_c(tmp_path: Path) -> None:
    """A run cancelled while its agent works: the log ends ``interrupted`` at the time it
    stopped, so the report counts the silent seconds; show and report.md say so in words and
    name no Python exception. (The CLI writes an interrupted run's reports, as here.)"""
    challenge = challenge_at(tmp_path / "challenge")
    world = World({"solution.py": ""})

    async def works_for_ever(world: World, message: Message) -> None:
        await anyio.sleep(10 * 3600)

    agent = FakeAgent(world, works_for_ever)
    factory = FakeParts(world, agent, passes_when({}))
    folder = RunFolder.new(tmp_path / "runs", challenge, agent.name)
    with anyio.move_on_after(120):
        await finished_run(challenge, agent, folder, factory)
    records = list(LogReader(folder.log))
    recorded_until = max(r["t"] for r in records if r["kind"] != "session.aborted")
    assert (records[-1]["kind"], records[-1]["status"]) == ("session.aborted", "interrupted")
    assert factory.closed
    report = write_reports(challenge, folder)
    assert report.run.elapsed >= recorded_until + 60  # silent, but running: counted
    shown = in_process("show", str(folder.path)).output
    assert "run interrupted: stopped by Ctrl-C (or a cancellation) before the session ended" in shown
    markdown = (folder.path / "report.md").read_text()
    assert "Error()" not in shown + markdown


class Failing(FakeParts):
    """A factory whose setup fails: as the environment does (``SetupFailed``), or with a bug."""

    def __init__(self, world: World, error: BaseException) -> None:
        super().__init__(world, FakeAgent(world, lambda world, message: anyio.sleep(0)), passes_when({}))
        self.error = error

    async def parts(self, log: EventLog) -> RunParts:
        log.append(WorkspaceCreated(await self.repo.snapshot(), "python", {"kind": "fake"}), 0.0)
        raise self.error


async def test_a_setup_the_environment_failed_is_an_invalid_run_never_a_zero(tmp_path: Path) -> None:
    """SetupFailed: the run is invalid, its report says why and scores nothing; parts released."""
    challenge = challenge_at(tmp_path / "challenge")
    factory = Failing(World(), SetupFailed("no grading environment"))
    folder = RunFolder.new(tmp_path / "runs", challenge, "fake")
    outcome, report = await finished_run(challenge, factory.agent, folder, factory)
    assert (outcome.status, outcome.detail) == ("invalid", "could not set up the run: no grading environment")
    assert report.run.status == "invalid"
    assert [r["kind"] for r in LogReader(folder.log)][-1] == "session.aborted"
    assert (folder.path / "report.md").is_file()
    assert factory.closed


async def test_a_crash_in_setup_is_raised_with_the_run_marked_and_its_log_readable(tmp_path: Path) -> None:
    """Any other error: raised again, the log ends with a crashed ``session.aborted`` naming it."""
    challenge = challenge_at(tmp_path / "challenge")
    factory = Failing(World(), RuntimeError("a bug in setup"))
    folder = RunFolder.new(tmp_path / "runs", challenge, "fake")
    with pytest.raises(RuntimeError, match="a bug in setup"):
        await finished_run(challenge, factory.agent, folder, factory)
    last = list(LogReader(folder.log))[-1]
    assert (last["kind"], last["status"]) == ("session.aborted", "crashed")
    assert "a bug in setup" in last["detail"]
    assert factory.closed

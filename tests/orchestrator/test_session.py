"""The session loop with in-memory seams, on trio's MockClock: hours of session time in milliseconds."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from trio.testing import MockClock

from orchestrator.agents import AgentUnavailable
from orchestrator.challenge.loader import load_challenge
from orchestrator.grading.policy import void
from orchestrator.log.eventlog import EventLog, LogReader, read_log
from orchestrator.log.records import SessionScored
from orchestrator.log.verdicts import TestRun
from orchestrator.scoring.report import build_report
from orchestrator.seams import Message
from orchestrator.session.loop import Outcome, Parts, Session
from orchestrator.session.replay import replay_records
from tests.fakes import FakeAgent, FakeRepo, FakeRunner, FakeWatcher, World, passes_when, tree_of

pytestmark = pytest.mark.anyio

CHALLENGE = """\
challenge:
  id: loop
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
      delivery: {delivery}
    - id: deadline
      condition: time_elapsed > 30min AND phase1_tests_not_pass
      kind: deadline
      unlocks: phase2
      message: Deadline. Now phase 2.
  limits:
    session: {limit}
"""


@pytest.fixture
def anyio_backend() -> tuple[str, dict[str, Any]]:
    """Trio with a clock that jumps whenever every task is waiting."""
    return ("trio", {"clock": MockClock(autojump_threshold=0)})


def challenge_at(root: Path, delivery: str = "queue", limit: str = "2h") -> Any:
    """A two-phase challenge folder (the fakes never run its tests)."""
    (root / "workspace").mkdir(parents=True)
    for phase in ("phase1", "phase2"):
        (root / "tests" / phase).mkdir(parents=True)
        (root / "tests" / phase / f"test_{phase}.py").write_text("def test_x():\n    pass\n")
    (root / "challenge.yaml").write_text(CHALLENGE.format(delivery=delivery, limit=limit))
    return load_challenge(root)


async def run_session(
    tmp_path: Path,
    behaviour: Any,
    *,
    delivery: str = "queue",
    limit: str = "2h",
    seconds: float = 1.0,
    runner_type: type[FakeRunner] = FakeRunner,
) -> tuple[Outcome, list[dict[str, Any]], FakeAgent, FakeRunner]:
    """Run one session on fakes; returns the outcome, the log records, the agent and the runner."""
    challenge = challenge_at(tmp_path / "challenge", delivery, limit)
    world = World({"solution.py": ""})
    agent = FakeAgent(world, behaviour)
    runner = runner_type(world, passes_when({"phase1": "one", "phase2": "two"}), seconds)
    log = EventLog.create(tmp_path / "events.jsonl", {"challenge": "loop", "agent": "fake"})
    parts = Parts(repo=FakeRepo(world), runner=runner, watcher=FakeWatcher(world), agent=agent)
    session = Session(challenge, parts, log, tmp_path / "agent", workspace=tmp_path)
    outcome = await session.run()
    log.close()
    world.close()
    return outcome, list(LogReader(tmp_path / "events.jsonl")), agent, runner


def kinds(records: list[dict[str, Any]]) -> list[str]:
    """The kinds of records, in order."""
    return [r["kind"] for r in records]


def first(records: list[dict[str, Any]], kind: str, **match: Any) -> dict[str, Any]:
    """The first record of ``kind`` whose fields match."""
    return next(r for r in records if r["kind"] == kind and all(r.get(k) == v for k, v in match.items()))


async def diligent(world: World, message: Message) -> None:
    """Solves each phase after a minute of work and commits."""
    await anyio.sleep(60)
    if message.phase == "phase1":
        world.write("solution.py", "one")
    elif message.phase == "phase2":
        world.write("solution.py", "one two")
    world.commit(f"solve {message.phase}")


async def test_pivot_fires_when_phase1_passes_and_session_ends_when_agent_is_done(tmp_path: Path) -> None:
    """Briefing → phase 1 solved → pivot → phase 2 solved → agent done; graded on both phases."""
    outcome, records, agent, _ = await run_session(tmp_path, diligent)
    assert outcome.status == "completed"
    assert outcome.end is not None
    assert outcome.end.reason == "agent_done"
    assert [trigger for _, trigger in agent.seen] == ["briefing", "pivot"]
    fired = first(records, "trigger.fired")
    assert fired["trigger"] == "pivot"
    passing = first(
        records,
        "tests.result",
        phases=[{"phase": "phase1", "passed": 2, "failed": 0, "tests": [], "groups": []}],
    )
    assert fired["t"] == passing["t"]
    assert first(records, "phase.unlocked", phase="phase2")["trigger"] == "pivot"
    assert first(records, "message.delivered", trigger="pivot")["t"] >= fired["t"]
    assert [c["message"] for c in records if c["kind"] == "git.commit"] == ["solve phase1", "solve phase2"]
    graded = first(records, "session.graded")
    assert [(p["phase"], p["passed"], p["failed"]) for p in graded["phases"]] == [
        ("phase1", 2, 0),
        ("phase2", 2, 0),
    ]
    times = [r["t"] for r in records]
    assert times == sorted(times)
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))


async def test_thirty_minute_deadline_takes_milliseconds(tmp_path: Path) -> None:
    """An agent stuck on phase 1 gets the deadline message at 30 minutes of session time."""

    async def stuck(world: World, message: Message) -> None:
        if message.trigger == "briefing":
            await anyio.sleep(45 * 60)  # never passes phase 1, works past the deadline
        else:
            world.write("solution.py", "two")

    started = time.perf_counter()
    outcome, records, _, _ = await run_session(tmp_path, stuck)
    assert time.perf_counter() - started < 60  # session time jumped: 30 minutes never waited
    fired = first(records, "trigger.fired")
    assert fired["trigger"] == "deadline"
    assert 1800 < fired["t"] < 1801
    assert first(records, "clock.tick")["t"] == fired["t"]
    assert "clock.skipped" not in kinds(records)  # the agent was busy: the clock ran
    # queued, not interrupting: delivered when the 45-minute turn ended
    delivered = first(records, "message.delivered", trigger="deadline")
    assert delivered["t"] >= 45 * 60
    assert outcome.end is not None
    assert outcome.end.reason == "agent_done"
    assert "pivot" not in [r.get("trigger") for r in records if r["kind"] == "trigger.fired"]


async def test_interrupting_message_cancels_the_turn(tmp_path: Path) -> None:
    """With delivery: interrupt, the pivot reaches an agent mid-turn."""

    async def keeps_going(world: World, message: Message) -> None:
        if message.trigger == "briefing":
            world.write("solution.py", "one")
            await anyio.sleep(3600)  # would go on for an hour
        else:
            world.write("solution.py", "one two")

    outcome, records, _, _ = await run_session(tmp_path, keeps_going, delivery="interrupt")
    ended = first(records, "agent.turn_ended")
    assert ended["reason"] == "interrupted"
    assert ended["t"] < 60
    assert first(records, "message.delivered", trigger="pivot")["t"] < 60
    assert outcome.end is not None
    assert outcome.end.reason == "agent_done"


async def test_changes_during_a_run_coalesce_and_equal_trees_are_not_retested(tmp_path: Path) -> None:
    """Ten writes during one long test run lead to one more run, and a re-test of a seen tree is cached."""

    async def busy(world: World, message: Message) -> None:
        if message.trigger != "briefing":
            return
        for i in range(10):
            world.write("notes.md", f"note {i}")
            await anyio.sleep(1)
        world.write("notes.md", "note 0")  # back to a state... still new (notes differ from start)
        world.write("solution.py", "")  # unchanged content

    outcome, records, _, runner = await run_session(tmp_path, busy, seconds=30.0)
    requested = [r for r in records if r["kind"] == "tests.requested"]
    results = [r for r in records if r["kind"] == "tests.result"]
    assert len(requested) > len(runner.runs)
    assert len(runner.runs) <= 4
    assert len(set(runner.runs)) == len(runner.runs)  # no tree tested twice
    assert any(r["cached"] for r in results)
    assert outcome.end is not None


async def test_each_verdict_is_about_the_snapshot_it_names_not_the_live_files(tmp_path: Path) -> None:
    """A solution written then broken during a test run: that run still passes what it tested.

    The pivot fires on the passing snapshot; the final grading, of the broken workspace, fails.
    """

    async def solves_then_breaks(world: World, message: Message) -> None:
        if message.trigger != "briefing":
            return
        world.write("solution.py", "one")
        await anyio.sleep(5)  # the watcher's batch is in and a 30 s run has begun on "one"
        world.write("solution.py", "broken")

    outcome, records, _, runner = await run_session(tmp_path, solves_then_breaks, seconds=30.0)
    tested = {r["snapshot"]: r["phases"][0]["passed"] for r in records if r["kind"] == "tests.result"}
    solved, broken = tree_of({"solution.py": "one"}), tree_of({"solution.py": "broken"})
    assert (tested[solved], tested[broken]) == (2, 0)
    assert [tree for tree, _ in runner.runs].index(solved) < [tree for tree, _ in runner.runs].index(broken)
    assert first(records, "trigger.fired")["trigger"] == "pivot"
    assert outcome.final is not None
    assert [(p.phase, p.passed) for p in outcome.final.phases] == [("phase1", 0), ("phase2", 0)]


async def test_time_limit_ends_the_session(tmp_path: Path) -> None:
    """An agent that never finishes is stopped at the session's time limit."""

    async def forever(world: World, message: Message) -> None:
        await anyio.sleep(10 * 3600)

    outcome, records, _, _ = await run_session(tmp_path, forever, limit="1h")
    assert outcome.end is not None
    assert outcome.end.reason == "time_limit"
    assert first(records, "session.ended")["t"] == pytest.approx(3600, abs=1)
    assert kinds(records)[-1] == "session.graded"


async def test_agent_crash_is_recorded_and_the_log_stays_readable(tmp_path: Path) -> None:
    """An exception in the agent ends the session as crashed, logged, and still graded."""

    async def crashes(world: World, message: Message) -> None:
        await anyio.sleep(5)
        raise RuntimeError("agent blew up")

    outcome, records, _, _ = await run_session(tmp_path, crashes)
    assert outcome.status == "crashed"
    assert "agent blew up" in outcome.detail
    aborted = first(records, "session.aborted")
    assert aborted["status"] == "crashed"
    assert kinds(records)[-1] == "session.graded"
    report = build_report(challenge_at(tmp_path / "again"), read_log(tmp_path / "events.jsonl"))
    assert report.run.status == "crashed"


async def test_unavailable_agent_makes_the_run_invalid(tmp_path: Path) -> None:
    """An agent that cannot start is an environment failure: invalid, and not graded."""

    async def unavailable(world: World, message: Message) -> None:
        raise AgentUnavailable("no such agent binary")

    outcome, records, _, _ = await run_session(tmp_path, unavailable)
    assert outcome.status == "invalid"
    assert outcome.final is None
    assert first(records, "session.aborted")["status"] == "invalid"
    assert "session.graded" not in kinds(records)


async def test_report_from_the_log(tmp_path: Path) -> None:
    """The report says when each phase unlocked and first passed, and why triggers fired or not."""
    await run_session(tmp_path, diligent)
    log = EventLog.reopen(tmp_path / "events.jsonl")  # the rubric's record, as a run adds it last
    log.append(SessionScored(()), log.last_t, sync=True)
    log.close()
    report = build_report(challenge_at(tmp_path / "again"), read_log(tmp_path / "events.jsonl"))
    phase1, phase2 = report.phases
    assert phase1.unlocked_by == "start"
    assert phase2.unlocked_by == "pivot"
    assert phase1.first_passed_at == pytest.approx(60, abs=5)
    assert phase1.first_passed_at is not None
    assert phase2.first_passed_at is not None
    assert phase2.first_passed_at > phase1.first_passed_at + 60
    pivot, deadline = report.triggers
    assert pivot.fired
    assert "phase1_tests_pass held on tests.result" in pivot.cause
    assert deadline.cause == "not needed: phase2 was unlocked by pivot"
    assert report.score.model_dump() == {
        "total": 1.0,
        "full_success": True,
        "critical_failures": [],
        "incomplete": False,
        "changed": {"passed": 2, "total": 2},
        "preserved": {"passed": 2, "total": 2},
        "graded_on": "final workspace",
        "grading_status": "ok",
        "grading_detail": "",
    }
    assert report.activity.commits == 2


class FirstRunTimesOut(FakeRunner):
    """A runner whose first run of each snapshot times out (a machine under load, say)."""

    async def run(self, tree: str, phases: Any) -> TestRun:
        run = await super().run(tree, phases)
        if self.runs.count((tree, tuple(phases))) > 1:
            return run
        return TestRun("timeout", void(run.phases, "timeout"), "timed out", run.seconds)


def cache_key(result: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    """What a verdict is cached under: the snapshot and the phases tested."""
    return result["snapshot"], tuple(p["phase"] for p in result["phases"])


async def test_a_run_that_does_not_count_is_never_reused(tmp_path: Path) -> None:
    """A timed-out run is void and not cached: no trigger fires on it, and a snapshot whose only
    run was void is tested again, never answered from the cache (a failure never sticks)."""
    outcome, records, _, _ = await run_session(tmp_path, diligent, runner_type=FirstRunTimesOut)
    assert outcome.status == "completed"
    results = [r for r in records if r["kind"] in ("tests.result", "session.graded")]
    timed_out = [r for r in results if r["status"] == "timeout"]
    assert timed_out
    assert all(p["passed"] == 0 for r in timed_out for p in r["phases"])  # void: nothing counted
    for fired in (r for r in records if r["kind"] == "trigger.fired"):  # each on a run that counts
        verdict = [r for r in results if r["seq"] < fired["seq"]][-1]
        assert verdict["status"] == "ok"
    for index, result in enumerate(results):
        earlier = [r for r in results[:index] if cache_key(r) == cache_key(result)]
        if result.get("cached"):
            assert any(r["status"] == "ok" for r in earlier), "a cached verdict came from a void run"
        elif earlier:  # a snapshot tested again: every earlier verdict on it was void
            assert all(r["status"] == "timeout" for r in earlier)
    assert any(r["status"] == "ok" and not r.get("cached") for r in results[1:])  # re-tests happened
    graded = first(records, "session.graded")
    assert graded["status"] == "ok"
    phase1 = graded["phases"][0]
    assert (phase1["phase"], phase1["passed"], phase1["failed"]) == ("phase1", 2, 0)


async def test_an_idle_agent_still_gets_the_deadline(tmp_path: Path) -> None:
    """An agent whose turn ends with phase 1 failing and nothing queued: the session skips its
    clock to the 30-minute deadline, delivers it as a new turn, and ends when that turn is done."""

    async def gives_up(world: World, message: Message) -> None:
        if message.trigger == "deadline":
            world.write("solution.py", "two")

    started = time.perf_counter()
    outcome, records, agent, _ = await run_session(tmp_path, gives_up)
    assert time.perf_counter() - started < 60  # session time jumped: 30 minutes never waited
    assert [trigger for _, trigger in agent.seen] == ["briefing", "deadline"]
    fired = first(records, "trigger.fired", trigger="deadline")
    assert 1800 <= fired["t"] < 1801
    assert first(records, "clock.tick")["t"] == fired["t"]
    skipped = first(records, "clock.skipped")
    assert skipped["until"] == fired["t"]
    assert skipped["t"] + skipped["skipped"] == pytest.approx(fired["t"], abs=1e-3)
    assert skipped["t"] < 60  # skipped as soon as the turn's verdict was in
    assert outcome.end is not None
    assert outcome.end.reason == "agent_done"


async def test_an_idle_agent_with_nothing_left_to_fire_ends_at_once(tmp_path: Path) -> None:
    """Once phase 1 passes, the deadline can never fire: the session ends at the turn's end."""

    async def solves_phase1_only(world: World, message: Message) -> None:
        if message.trigger == "briefing":
            world.write("solution.py", "one")

    outcome, records, _, _ = await run_session(tmp_path, solves_phase1_only)
    assert outcome.end is not None
    assert outcome.end.reason == "agent_done"
    assert records[-1]["t"] < 60
    assert "clock.tick" not in kinds(records)
    assert "clock.skipped" not in kinds(records)


class _CountingLog(EventLog):
    """An event log that remembers where each of its writes ended (a kill lands between two)."""

    ends: list[int]

    def _write(self, *objs: dict[str, Any]) -> None:
        super()._write(*objs)
        self.ends = [*getattr(self, "ends", []), self.path.stat().st_size]


async def test_a_kill_between_any_two_writes_leaves_a_log_that_replays(tmp_path: Path) -> None:
    """Every event is written with the decisions it caused: cut the log after any write, and
    the engine re-decides exactly what it holds (never an event without its decisions)."""
    challenge = challenge_at(tmp_path / "challenge")
    world = World({"solution.py": ""})
    runner = FakeRunner(world, passes_when({"phase1": "one", "phase2": "two"}))
    path = tmp_path / "events.jsonl"
    log = _CountingLog.create(path, {"challenge": "loop", "agent": "fake"})
    assert isinstance(log, _CountingLog)
    parts = Parts(
        repo=FakeRepo(world), runner=runner, watcher=FakeWatcher(world), agent=FakeAgent(world, diligent)
    )
    await Session(challenge, parts, log, tmp_path / "agent", workspace=tmp_path).run()
    log.close()
    world.close()
    whole = path.read_bytes()
    assert len(log.ends) > 20
    for end in log.ends[1:]:  # after the header
        path.write_bytes(whole[:end])
        records = list(LogReader(path))
        assert replay_records(challenge.spec, records).divergence is None, f"cut after byte {end}"
    multi = [r["seq"] for r in list(LogReader(path)) if r["kind"] == "trigger.fired"]
    assert multi  # a step with decisions was among the writes

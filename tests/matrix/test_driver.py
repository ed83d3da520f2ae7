"""The driver with a fake session runner, on trio's MockClock: K at a time, every attempt recorded,
resume, retries of invalid runs with their provenance, and RESULTS folders it refuses."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from trio.testing import MockClock

from orchestrator.challenge.loader import load_challenge
from orchestrator.log.cells import Cell, SessionOrder
from orchestrator.matrix import (
    Matrix,
    ResultsRefused,
    build_comparison,
    drive,
    matrix_from_command,
    open_results,
)
from orchestrator.matrix.attempts import Next
from orchestrator.matrix.backends import SessionCrashed, SessionTimedOut
from orchestrator.matrix.progress import Tally
from tests.cli import REPO
from tests.fakes import FakeSessionRunner
from tests.matrix.samples import report

AGENTS = ["scripted", "impostor:always-equal"]


def matrix_of(trials: int = 3, retry_invalid: int = 0, agents: list[str] = AGENTS) -> Matrix:
    """normalize-tags and export-time x ``agents`` x ``trials``."""
    challenges = [load_challenge(REPO / "challenges" / name) for name in ("normalize-tags", "export-time")]
    return matrix_from_command(
        challenges,
        agents,
        {},
        trials=trials,
        retry_invalid=retry_invalid,
        judge="rules",
        network=True,
        shares=(),
        debounce=0.3,
    )


def scripted_wins(order: SessionOrder) -> dict[str, Any]:
    """The reference succeeds; the impostor does not."""
    return report(order.cell.challenge, full=order.cell.agent == "scripted")


def run(results: Path, matrix: Matrix, runner: FakeSessionRunner) -> Tally:
    """Open RESULTS and drive the matrix to its end, on a mock clock."""
    opened = open_results(matrix, results)
    try:
        return anyio.run(
            drive,
            opened,
            matrix,
            runner,
            lambda _: None,
            backend="trio",
            backend_options={"clock": MockClock(autojump_threshold=0)},
        )
    finally:
        opened.close()


def events(results: Path) -> list[dict[str, Any]]:
    """The attempts log's records, from disk."""
    return [json.loads(line) for line in (results / "attempts.jsonl").read_text().splitlines()[1:]]


def test_k_sessions_at_a_time_every_cell_once_each_recorded_before_it_runs(tmp_path: Path) -> None:
    """12 cells, capacity 4: never more than 4 at once; while 4 wait, exactly 4 'started' are on
    disk and none finished; in the end 12 attempts, one per cell, each in its own folder."""
    results, matrix = tmp_path / "results", matrix_of()
    runner = FakeSessionRunner(scripted_wins, capacity=4)
    opened = open_results(matrix, results)
    seen: list[list[dict[str, Any]]] = []

    async def main() -> None:
        runner.gate = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(drive, opened, matrix, runner, lambda _: None)
            while runner.running < 4:
                await anyio.sleep(0.1)
            await anyio.sleep(5)  # long past the start of anything more that could start
            seen.append(events(results))
            runner.gate.set()

    anyio.run(main, backend="trio", backend_options={"clock": MockClock(autojump_threshold=0)})
    opened.close()
    assert runner.most == 4
    assert [e["event"] for e in seen[0]] == ["started"] * 4
    cells = [o.cell for o in runner.orders]
    assert len(cells) == len(set(cells)) == 12
    assert len({o.folder for o in runner.orders}) == 12
    assert [e["event"] for e in events(results)].count("finished") == 12


def test_a_cancelled_run_records_its_running_attempts_and_resumes_only_them(tmp_path: Path) -> None:
    """Cancelled with 4 attempts running: those 4 are recorded interrupted; the resume runs 8 new
    cells and those 4 again (reason interrupted, retry_of the first attempt), and nothing else."""
    results, matrix = tmp_path / "results", matrix_of()
    runner = FakeSessionRunner(scripted_wins, capacity=4)
    opened = open_results(matrix, results)

    async def main() -> None:
        runner.gate = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(drive, opened, matrix, runner, lambda _: None)
            while runner.running < 4:
                await anyio.sleep(0.1)
            group.cancel_scope.cancel()

    anyio.run(main, backend="trio", backend_options={"clock": MockClock(autojump_threshold=0)})
    opened.close()
    stopped = [e for e in events(results) if e["event"] == "finished"]
    assert [e["status"] for e in stopped] == ["interrupted"] * 4
    again = FakeSessionRunner(scripted_wins, capacity=4)
    run(results, matrix, again)
    reruns = [o for o in again.orders if o.attempt == 2]
    assert len(again.orders) == 12
    assert {o.cell for o in reruns} == {o.cell for o in runner.orders}
    started = {e["attempt"]: e for e in events(results) if e["event"] == "started"}
    assert sorted(e["retry_of"] for e in started.values() if e["reason"] == "interrupted") == [1, 2, 3, 4]
    comparison = build_comparison(results)
    assert comparison.provenance.interrupted == 4
    assert [c.full_successes for c in comparison.cells] == [3, 0, 3, 0]


def test_an_attempt_killed_without_an_outcome_is_closed_as_interrupted_on_resume(tmp_path: Path) -> None:
    """A 'started' with no 'finished' (the driver was SIGKILLed): the next open records it
    interrupted, and its cell runs again as attempt 2."""
    results, matrix = tmp_path / "results", matrix_of(trials=1, agents=["scripted"])
    opened = open_results(matrix, results)
    cell = Cell("export-time", "scripted", "evolving", 1)
    opened.log.start(Next(cell, 1, "first", None), "runs/lost", "scripted")
    opened.close()
    runner = FakeSessionRunner(scripted_wins)
    reopened = open_results(matrix, results)
    assert any("never ended: recorded as interrupted" in note for note in reopened.notes)
    reopened.close()
    run(results, matrix, runner)
    assert sorted((o.cell.challenge, o.attempt) for o in runner.orders) == [
        ("export-time", 2),
        ("normalize-tags", 1),
    ]


def flaky(invalid_attempts: int) -> Callable[[SessionOrder], dict[str, Any]]:
    """export-time's first ``invalid_attempts`` attempts are invalid runs; everything else succeeds."""

    def outcome(order: SessionOrder) -> dict[str, Any]:
        if order.cell.challenge == "export-time" and order.attempt <= invalid_attempts:
            return report(order.cell.challenge, status="invalid", full=False)
        return report(order.cell.challenge)

    return outcome


def test_an_invalid_run_is_retried_as_declared_and_keeps_its_provenance(tmp_path: Path) -> None:
    """retry_invalid 2, export-time invalid twice: attempts 1, 2 invalid, 3 completed; the trial
    counts as valid, its two invalid attempts are kept and counted apart."""
    results, matrix = tmp_path / "results", matrix_of(trials=1, retry_invalid=2, agents=["scripted"])
    run(results, matrix, FakeSessionRunner(flaky(2)))
    comparison = build_comparison(results)
    export = next(c for c in comparison.cells if c.challenge == "export-time")
    assert (export.valid, export.invalid, export.invalid_attempts, export.full_successes) == (
        1,
        0,
        2,
        1,
    )
    chain = [a for a in comparison.provenance.attempts if a.challenge == "export-time"]
    assert [(a.number, a.status, a.reason) for a in chain] == [
        (1, "invalid", "first"),
        (2, "invalid", "invalid"),
        (3, "completed", "invalid"),
    ]
    assert [a.retry_of for a in chain] == [None, chain[0].attempt, chain[1].attempt]


def test_invalid_runs_beyond_the_retries_are_kept_apart_never_scored_zero(tmp_path: Path) -> None:
    """retry_invalid 1, invalid 3 times: the trial is invalid, in no rate, and the cell is done."""
    results, matrix = tmp_path / "results", matrix_of(trials=1, retry_invalid=1, agents=["scripted"])
    runner = FakeSessionRunner(flaky(3))
    run(results, matrix, runner)
    assert len(runner.orders) == 3  # normalize-tags once, export-time twice
    comparison = build_comparison(results)
    (agent,) = comparison.agents
    assert (agent.full_success.successes, agent.full_success.trials) == (1, 1)
    assert "1 trial(s) invalid: kept apart, counted in no rate" in comparison.not_covered
    again = FakeSessionRunner(flaky(3))
    run(results, matrix, again)
    assert again.orders == []  # its retries are used up: done


def test_what_a_runner_raises_is_recorded_for_that_attempt_only(tmp_path: Path) -> None:
    """A session that crashed or timed out after its agent started is crashed or timed out, and
    never retried (retry_invalid 1); any other exception (it could not run) is invalid and
    retried; the rest still run."""
    results = tmp_path / "results"
    matrix = matrix_of(
        trials=1, retry_invalid=1, agents=["scripted", "impostor:always-equal", "impostor:equal-subclass"]
    )
    raised = {
        "scripted": SessionCrashed("the session process crashed: killed by signal SIGKILL"),
        "impostor:always-equal": SessionTimedOut("still running after 9s, its wall-time limit"),
        "impostor:equal-subclass": OSError("no space left on device"),
    }

    def broken(order: SessionOrder) -> dict[str, Any]:
        if order.cell.challenge == "export-time":
            raise raised[order.cell.agent]
        return report(order.cell.challenge)

    runner = FakeSessionRunner(broken)
    run(results, matrix, runner)
    finished = {e["attempt"]: e for e in events(results) if e["event"] == "finished"}
    statuses = sorted((e["status"], e["detail"]) for e in finished.values())
    assert statuses == [
        ("completed", ""),
        ("completed", ""),
        ("completed", ""),
        ("crashed", "the session process crashed: killed by signal SIGKILL"),
        ("invalid", "OSError: no space left on device"),
        ("invalid", "OSError: no space left on device"),
        ("timed out", "still running after 9s, its wall-time limit"),
    ]
    assert (
        len(runner.orders) == 7
    )  # export-time of impostor:equal-subclass twice (invalid, retried); the others once


def test_a_results_folder_of_another_matrix_is_refused_naming_what_differs(tmp_path: Path) -> None:
    """Frozen with 3 trials, asked with 2: refused, saying so; --new moves the old results aside, whole."""
    results = tmp_path / "results"
    run(results, matrix_of(trials=1, agents=["scripted"]), FakeSessionRunner(scripted_wins))
    with pytest.raises(ResultsRefused) as refused:
        open_results(matrix_of(trials=2, agents=["scripted"]), results)
    assert "trials: frozen as 1, now 2" in str(refused.value)
    assert "--new" in str(refused.value)
    opened = open_results(matrix_of(trials=2, agents=["scripted"]), results, new=True)
    opened.close()
    (aside,) = [p for p in tmp_path.iterdir() if p.name.startswith("results.")]
    assert (aside / "attempts.jsonl").is_file()
    assert json.loads((results / "manifest.json").read_text())["trials"] == 2


def test_a_second_driver_on_the_same_results_is_refused(tmp_path: Path) -> None:
    """While one driver holds RESULTS, another is told to wait."""
    results, matrix = tmp_path / "results", matrix_of(trials=1, agents=["scripted"])
    first = open_results(matrix, results)
    with pytest.raises(ResultsRefused, match="another changeup is running"):
        open_results(matrix, results)
    first.close()
    open_results(matrix, results).close()


def test_a_folder_that_is_no_results_folder_is_refused(tmp_path: Path) -> None:
    """An --out holding other files (a plain runs folder) is not taken over."""
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "something").write_text("mine\n")
    with pytest.raises(ResultsRefused, match="not a matrix's results folder"):
        open_results(matrix_of(trials=1, agents=["scripted"]), tmp_path / "runs")

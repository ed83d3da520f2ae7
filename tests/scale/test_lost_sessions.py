"""A session lost with its worker: the driver records it interrupted and runs the cell again at once.

The driver runs on trio's MockClock with the fake session runner of ``tests/fakes.py``; the
runner raises :class:`SessionLost` as a remote backend does when a worker dies under a session.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from trio.testing import MockClock

from orchestrator.challenge.loader import load_challenge
from orchestrator.log.cells import SessionOrder
from orchestrator.matrix import Matrix, drive, matrix_from_command, open_results
from orchestrator.matrix.backends import SessionLost
from orchestrator.matrix.driver import LOST_RETRIES
from tests.cli import REPO
from tests.e2e.test_matrix import log_of
from tests.fakes import FakeSessionRunner
from tests.matrix.samples import report


def one_cell() -> Matrix:
    """normalize-tags x scripted x 1 trial."""
    challenge = load_challenge(REPO / "challenges" / "normalize-tags")
    return matrix_from_command(
        [challenge],
        ["scripted"],
        {},
        trials=1,
        retry_invalid=0,
        judge="rules",
        network=True,
        shares=(),
        debounce=0.3,
    )


def drive_to_the_end(results: Path, runner: FakeSessionRunner) -> None:
    """Open RESULTS for :func:`one_cell` and drive it, on a mock clock."""
    matrix = one_cell()
    opened = open_results(matrix, results)
    try:
        clock = MockClock(autojump_threshold=0)
        anyio.run(
            drive, opened, matrix, runner, lambda _: None, backend="trio", backend_options={"clock": clock}
        )
    finally:
        opened.close()


def test_a_lost_session_is_recorded_interrupted_and_its_cell_runs_again_at_once(tmp_path: Path) -> None:
    """The first attempt's worker dies: it is finished as interrupted, with the backend's words, and a
    second attempt (reason interrupted, after the first) completes in the same run."""
    lost: list[int] = []

    def first_lost(order: SessionOrder) -> dict[str, Any]:
        if not lost:
            lost.append(order.attempt)
            raise SessionLost("its worker on 10.0.0.7 (node abc) died before the session ended")
        return report(order.cell.challenge)

    results = tmp_path / "results"
    drive_to_the_end(results, FakeSessionRunner(first_lost))
    records = log_of(results)
    finished = [r for r in records if r["event"] == "finished"]
    assert [(r["attempt"], r["status"]) for r in finished] == [(1, "interrupted"), (2, "completed")]
    assert (
        finished[0]["detail"]
        == "session lost: its worker on 10.0.0.7 (node abc) died before the session ended"
    )
    (retry,) = [r for r in records if r["event"] == "started" and r["attempt"] == 2]
    assert (retry["reason"], retry["retry_of"], retry["number"]) == ("interrupted", 1, 2)


def test_a_cell_lost_again_and_again_waits_for_a_resume_after_its_retries(tmp_path: Path) -> None:
    """A worker that dies every time: the cell is tried once and retried LOST_RETRIES times in a
    row, then left for a resume (no endless loop)."""

    def always_lost(order: SessionOrder) -> dict[str, Any]:
        raise SessionLost("its node is gone")

    results = tmp_path / "results"
    runner = FakeSessionRunner(always_lost)
    drive_to_the_end(results, runner)
    assert len(runner.orders) == 1 + LOST_RETRIES
    statuses = [r["status"] for r in log_of(results) if r["event"] == "finished"]
    assert statuses == ["interrupted"] * (1 + LOST_RETRIES)

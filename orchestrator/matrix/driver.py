"""The driver of a matrix run: freeze (or check) the manifest, then run every cell still to run.

``open_results`` makes ready a RESULTS folder before any session starts: every agent is
checked against every challenge (nothing is made when one cannot run), the manifest is
frozen (or found equal to the frozen one; ``manifest.py``), the folder is locked against a
second driver, and attempts left without an outcome by a stopped driver are recorded as
interrupted. :func:`drive` then runs the cells that need it through a
:class:`~orchestrator.seams.SessionRunner`, ``capacity`` at a time, recording each attempt
before it starts and after it ends (``attempts.py``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import anyio

from orchestrator.agents import AgentUnavailable, parse_agent
from orchestrator.log.cells import Cell, SessionOrder, cells_of, run_name
from orchestrator.log.documents import DocumentError
from orchestrator.log.matrix_manifest import MatrixManifest
from orchestrator.log.report import ReportError, load_report
from orchestrator.matrix.attempts import Attempt, AttemptsLog, Next, Status, next_attempt
from orchestrator.matrix.backends import SessionCrashed, SessionLost, SessionTimedOut
from orchestrator.matrix.manifest import (
    MANIFEST,
    build_matrix_manifest,
    differences,
    read_manifest,
    record_decision_change,
    write_manifest,
)
from orchestrator.matrix.progress import Tally
from orchestrator.matrix.spec import Matrix
from orchestrator.seams import SessionRunner

__all__ = ["RUNS", "Results", "ResultsRefused", "drive", "open_results", "outcome"]

#: The run folders of a RESULTS folder, one per attempt.
RUNS = "runs"
_LOCK = ".lock"
#: How often in a row a cell whose session was lost runs again at once; past that, on resume.
LOST_RETRIES = 3


class ResultsRefused(ValueError):
    """A matrix run refused before any session started; the message says why and what to do."""


@dataclass(slots=True)
class Results:
    """A RESULTS folder, locked for this driver, its manifest frozen and its attempts read."""

    path: Path
    manifest: MatrixManifest
    log: AttemptsLog
    #: What a person should know: results moved aside, attempts found interrupted, a rule changed.
    notes: list[str] = field(default_factory=list)
    lock: IO[str] | None = None

    def close(self) -> None:
        """Release the lock."""
        if self.lock is not None:
            self.lock.close()
            self.lock = None


def open_results(
    matrix: Matrix,
    path: Path,
    *,
    new: bool = False,
    change_rule: str | None = None,
    preflight: Callable[[Matrix], None] | None = None,
) -> Results:
    """Make ``path`` ready for ``matrix`` (blocking); raises :class:`ResultsRefused`, having run nothing.

    ``preflight`` checks that every agent can run every challenge where the sessions will run
    (by default: here)."""
    (preflight or _preflight)(matrix)
    built = build_matrix_manifest(matrix)
    notes = []
    if new and path.exists() and any(path.iterdir()):
        with _locked(path):
            stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
            aside = path.with_name(f"{path.name}.{stamp}")
        path.rename(aside)
        notes.append(f"--new: the previous results were moved, whole, to {aside}")
    if path.exists() and not path.is_dir():
        raise ResultsRefused(f"--out {path} is a file; a matrix writes its results into a folder")
    if path.is_dir() and any(path.iterdir()) and not (path / MANIFEST).is_file():
        raise ResultsRefused(
            f"--out {path} holds files but no manifest.json: it is not a matrix's results folder; "
            "give an empty or new folder"
        )
    path.mkdir(parents=True, exist_ok=True)
    lock = _lock(path)
    try:
        try:
            frozen = read_manifest(path)
        except DocumentError as error:
            raise ResultsRefused(str(error)) from None
        if frozen is None:
            write_manifest(path, built)
            frozen = built
        else:
            frozen = _resumable(path, frozen, built, change_rule, notes)
        log = AttemptsLog(path)
    except BaseException:
        lock.close()
        raise
    for attempt in log.close_unfinished():
        notes.append(
            f"attempt {attempt.id} ({attempt.cell}) never ended: recorded as interrupted; it runs again"
        )
    return Results(path, frozen, log, notes, lock)


def _preflight(matrix: Matrix) -> None:
    """Every agent spec, on every challenge, must be able to run here."""
    for agent in matrix.agents:
        for spec in agent.specs(matrix.trials):
            runnable = parse_agent(spec, agent.options)
            for challenge in matrix.challenges:
                try:
                    runnable.preflight(challenge)
                except AgentUnavailable as error:
                    raise ResultsRefused(
                        f"agent {agent.name} ({spec}) cannot run {challenge.id}: {error}"
                    ) from None


def _resumable(
    path: Path, frozen: MatrixManifest, built: MatrixManifest, change_rule: str | None, notes: list[str]
) -> MatrixManifest:
    """The frozen manifest, if this matrix may resume it; its decision changed, when asked with a reason."""
    differ = differences(frozen, built)
    if differ:
        lines = "\n  ".join(differ)
        raise ResultsRefused(
            f"{path / 'manifest.json'} was frozen for another matrix; what differs:\n  {lines}\n"
            f"resume with the matrix as it was, or start afresh with --new (the old results are kept aside)"
        )
    if built.decision == frozen.current_decision():
        if change_rule is not None:
            notes.append("--change-rule: the decision rule is the one in force; nothing recorded")
        return frozen
    if change_rule is None:
        raise ResultsRefused(
            f"the decision rule differs from the one in {path / 'manifest.json'}:\n"
            f"  in force: {json.dumps(frozen.current_decision())}\n"
            f"  now:      {json.dumps(built.decision)}\n"
            "a rule changed once results exist is recorded with its reason: add --change-rule REASON"
        )
    finished = sum(1 for _ in _finished(path))
    notes.append(f"decision rule changed after {finished} finished attempts, recorded with its reason")
    return record_decision_change(path, frozen, built.decision, change_rule, finished)


def _finished(path: Path) -> Iterator[Attempt]:
    return (a for a in AttemptsLog(path).attempts.values() if a.status is not None)


def _lock(path: Path) -> IO[str]:
    handle = (path / _LOCK).open("w")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise ResultsRefused(
            f"another changeup is running the matrix in {path}; wait for it to end"
        ) from None
    return handle


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    handle = _lock(path)
    try:
        yield
    finally:
        handle.close()


def outcome(folder: Path) -> tuple[Status, bool | None, str]:
    """An attempt's status, full success and detail, from its run folder's ``report.json``."""
    try:
        report = load_report(folder / "report.json")
    except ReportError as error:
        return "crashed", None, f"the run left no readable report.json: {error}"
    run, score = report.run, report.score
    detail = run.detail.strip().splitlines()[-1] if run.detail.strip() else score.grading_detail
    return run.status, score.full_success if run.status == "completed" else None, detail


async def drive(
    results: Results, matrix: Matrix, runner: SessionRunner, on_progress: Callable[[Tally], None]
) -> Tally:
    """Run every cell of ``matrix`` that needs an attempt; returns the final tally."""
    log = results.log
    plan: list[Next] = []
    tally = Tally(cells=0, capacity=runner.capacity)
    ids, names = [c.id for c in matrix.challenges], [a.name for a in matrix.agents]
    for cell in cells_of(ids, names, matrix.modes, matrix.trials):
        tally.cells += 1
        wanted = next_attempt(log.history(cell), cell, matrix.retry_invalid)
        if wanted is None:
            tally.done_before += 1
        else:
            plan.append(wanted)
    limiter = anyio.CapacityLimiter(runner.capacity)
    on_progress(tally)

    async def run_cell(wanted: Next | None) -> None:
        lost = 0
        while wanted is not None:
            async with limiter:
                attempt = await _attempt(results, matrix, runner, wanted, tally, on_progress)
            after = next_attempt(log.history(attempt.cell), attempt.cell, matrix.retry_invalid)
            # An invalid run is retried at once, as declared; so is a session whose worker was lost
            # (a Ctrl-C never gets here), a few times in a row; any other interruption, on resume.
            lost = lost + 1 if attempt.status == "interrupted" else 0
            again = after is not None and (after.reason == "invalid" or 0 < lost <= LOST_RETRIES)
            wanted = after if again else None
            assert attempt.status is not None
            tally.finished(
                attempt.cell.agent,
                attempt.status,
                attempt.full_success,
                attempt.seconds or 0.0,
                wanted is None,
            )
            on_progress(tally)

    async with anyio.create_task_group() as group:
        for wanted in plan:
            group.start_soon(run_cell, wanted)
    return tally


async def _attempt(
    results: Results,
    matrix: Matrix,
    runner: SessionRunner,
    wanted: Next,
    tally: Tally,
    on_progress: Callable[[Tally], None],
) -> Attempt:
    """Run one attempt: recorded as started, run, recorded as finished (or interrupted)."""
    cell: Cell = wanted.cell
    plan = matrix.agent(cell.agent)
    challenge = next(c for c in matrix.challenges if c.id == cell.challenge)
    order = SessionOrder(
        cell=cell,
        attempt=wanted.number,
        challenge=challenge.root,
        agent=plan.spec_for(cell.trial),
        out=results.path / RUNS,
        name=run_name(cell, wanted.number),
        options=dict(plan.options),
        start=matrix.start_of(cell.challenge, cell.mode),
        judge=matrix.judge,
        network=matrix.network,
        shares=matrix.shares,
        debounce=matrix.debounce,
        gateway=plan.gateway,
    )
    attempt = results.log.start(wanted, f"{RUNS}/{order.name}", order.agent)
    tally.running += 1
    on_progress(tally)
    started = anyio.current_time()
    try:
        folder = await runner.run(order)
    except anyio.get_cancelled_exc_class():
        # Ctrl-C or a cancellation: said so now; the cell runs again on resume.
        seconds = anyio.current_time() - started
        results.log.finish(
            attempt,
            "interrupted",
            full_success=None,
            detail="stopped by Ctrl-C (or a cancellation)",
            seconds=seconds,
        )
        raise
    except SessionLost as error:  # its worker died: nothing the agent did; the cell runs again
        seconds = anyio.current_time() - started
        return results.log.finish(
            attempt, "interrupted", full_success=None, detail=f"session lost: {error}", seconds=seconds
        )
    except (SessionCrashed, SessionTimedOut) as error:  # after its agent started: counted against it
        seconds = anyio.current_time() - started
        status: Status = "crashed" if isinstance(error, SessionCrashed) else "timed out"
        return results.log.finish(attempt, status, full_success=None, detail=str(error), seconds=seconds)
    except Exception as error:  # the session could not run (nothing of the agent's): invalid, the rest go on
        seconds = anyio.current_time() - started
        return results.log.finish(
            attempt, "invalid", full_success=None, detail=f"{type(error).__name__}: {error}", seconds=seconds
        )
    status, full_success, detail = outcome(folder)
    seconds = anyio.current_time() - started
    return results.log.finish(attempt, status, full_success=full_success, detail=detail, seconds=seconds)

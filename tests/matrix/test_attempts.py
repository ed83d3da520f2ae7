"""The attempts log on disk: torn lines, readers beside a writer, and what each history needs next."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.log.cells import Cell
from orchestrator.log.journal import JournalError
from orchestrator.matrix.attempts import Attempt, AttemptsLog, Next, counted, next_attempt

CELL = Cell("export-time", "v7", "evolving", 1)


def attempt(number: int, status: str | None, reason: str = "first") -> Attempt:
    """Attempt ``number`` of CELL with ``status``."""
    return Attempt(number, CELL, number, f"runs/a{number}", "scripted", reason, None, "t", status)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("history", "wanted"),
    [
        ([], (1, "first")),
        ([("completed", "first")], None),
        ([(None, "first")], (2, "interrupted")),
        ([("interrupted", "first")], (2, "interrupted")),
        ([("invalid", "first")], (2, "invalid")),
        ([("crashed", "first")], None),
        ([("timed out", "first")], None),
        ([("invalid", "first"), ("crashed", "invalid")], None),
        ([("invalid", "first"), ("invalid", "invalid")], (3, "invalid")),
        ([("invalid", "first"), ("invalid", "invalid"), ("invalid", "invalid")], None),
        ([("invalid", "first"), ("interrupted", "invalid")], (3, "interrupted")),
    ],
)
def test_what_a_cell_needs_next(
    history: list[tuple[str | None, str]], wanted: tuple[int, str] | None
) -> None:
    """Interrupted: again, whatever the retries; invalid: again while retries (2 here) remain;
    crashed or timed out: never again (the trial failed; a retry would be another draw)."""
    attempts = [attempt(n, status, reason) for n, (status, reason) in enumerate(history, 1)]
    got = next_attempt(attempts, CELL, retry_invalid=2)
    assert (None if got is None else (got.number, got.reason)) == wanted
    if got is not None and attempts:
        assert got.retry_of == attempts[-1].id


def test_the_counted_attempt_is_the_last_that_counts_else_the_last_invalid() -> None:
    """An interrupted attempt never stands for its cell; a completed, crashed or timed-out one
    beats an invalid one, whatever their order."""
    assert counted([attempt(1, "invalid"), attempt(2, "completed"), attempt(3, "interrupted")]) == attempt(
        2, "completed"
    )
    assert counted([attempt(1, "invalid"), attempt(2, "crashed")]) == attempt(2, "crashed")
    assert counted([attempt(1, "timed out"), attempt(2, "invalid")]) == attempt(1, "timed out")
    assert counted([attempt(1, "interrupted"), attempt(2, None)]) is None


def test_a_torn_last_line_is_cut_by_the_writer_and_skipped_by_a_reader(tmp_path: Path) -> None:
    """A line the process died writing was never acknowledged: a reader leaves it out without
    touching the file (a live writer may be finishing it); the writer cuts it and goes on."""
    log = AttemptsLog(tmp_path)
    first = log.start(Next(CELL, 1, "first", None), "runs/a1", "scripted")
    path = tmp_path / "attempts.jsonl"
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"event": "finished", "attempt": 1, "sta')
    reader = AttemptsLog(tmp_path, writer=False)
    assert reader.attempts[1].status is None
    assert path.read_bytes().endswith(b'"sta')
    writer = AttemptsLog(tmp_path)
    assert path.read_bytes() == whole
    writer.finish(first, "completed", full_success=True, detail="", seconds=1.0)
    assert AttemptsLog(tmp_path, writer=False).attempts[1].status == "completed"


def test_a_damaged_line_is_named_by_file_and_line(tmp_path: Path) -> None:
    """A line that is no record is an error at its line, not skipped."""
    AttemptsLog(tmp_path).start(Next(CELL, 1, "first", None), "runs/a1", "scripted")
    path = tmp_path / "attempts.jsonl"
    path.write_text(path.read_text() + "not json\n")
    with pytest.raises(JournalError, match=r"attempts.jsonl:3: not JSON"):
        AttemptsLog(tmp_path)

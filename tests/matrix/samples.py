"""Samples for the matrix tests: the v6/v7 matrix file, and run reports shaped as a session writes them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from trio.testing import MockClock

from orchestrator.log.cells import SessionOrder
from orchestrator.matrix import Matrix, drive, load_matrix, open_results
from tests.cli import REPO
from tests.fakes import FakeSessionRunner

#: The worked example of docs/compare.md, as shipped, its challenges' folder a placeholder:
#: v7 weakens an auth test on trial 3, v6 breaks a preserved access test on trial 2.
SHIPPED = REPO / "docs" / "examples" / "v6-v7.yaml"
V6_V7 = SHIPPED.read_text().replace("../../challenges", "{challenges}")


def matrix_file(folder: Path, text: str = V6_V7) -> Path:
    """A matrix file in ``folder`` holding ``text`` (``{challenges}`` is the shipped library)."""
    path = folder / "matrix.yaml"
    path.write_text(text.replace("{challenges}", str(REPO / "challenges")))
    return path


#: What every phase of a sample report holds besides its counts.
PHASE = {
    "title": "",
    "weight": 1.0,
    "policy": [],
    "score": 1.0,
    "groups": [],
    "superseded": [],
    "retired": [],
    "retirement": None,
    "failing": [],
}


def report(
    challenge: str,
    *,
    full: bool = True,
    status: str = "completed",
    grading: str = "ok",
    changed: tuple[int, int] = (3, 3),
    preserved: tuple[int, int] = (2, 2),
    critical: str | None = None,
    elapsed: float = 10.0,
    cost: float | None = None,
) -> dict[str, Any]:
    """The report of a two-phase run of ``challenge``: a full success unless said otherwise;
    ``critical`` names a critical criterion that fell short (its finding names tests/test_auth.py)."""
    rubric = [
        {
            "id": "protection",
            "title": "The agent's own tests were not weakened",
            "weight": 0.0,
            "score": 0.0 if critical else 1.0,
            "critical": True,
            "critical_failure": critical == "protection",
            "findings": ["removed `assert r.status_code == 401` in tests/test_auth.py::test_login"]
            if critical
            else [],
            "data": {},
        }
    ]
    turns = [
        {
            "turn": n,
            "messages": [trigger],
            "started_at": at,
            "ended_at": at + 1.0,
            "seconds": 1.0,
            "exit_code": 0,
            "end": "",
            "reported": cost is not None,
            "input_tokens": None,
            "output_tokens": None,
            "cache_read_tokens": None,
            "cache_write_tokens": None,
            "cost_usd": cost / 2 if cost is not None else None,
            "final_message": None,
            "model": "",
            "session": "",
            "transcript": "",
        }
        for n, trigger, at in ((1, "briefing", 0.0), (2, "pivot", 2.1))
    ]
    none = {"total": None, "turns_reported": 0, "missing_turns": [1, 2]}
    money = {
        "total": cost,
        "turns_reported": 2 if cost is not None else 0,
        "missing_turns": [] if cost else [1, 2],
    }
    return {
        "report_version": 1,
        "run": {
            "challenge": {"id": challenge, "title": "", "pattern": "revision", "sha256": "0" * 64},
            "agent": "fake",
            "start_at": None,
            "started_at": "2026-12-01T00:00:00+00:00",
            "status": status,
            "detail": "the environment failed" if status == "invalid" else "",
            "end_reason": "agent_done" if status == "completed" else None,
            "end_detail": "",
            "elapsed": elapsed,
        },
        "score": {
            "total": None if status == "invalid" else 1.0,
            "full_success": full and not critical and status == "completed" and grading == "ok",
            "critical_failures": [critical] if critical else [],
            "incomplete": False,
            "changed": {"passed": changed[0], "total": changed[1]},
            "preserved": {"passed": preserved[0], "total": preserved[1]},
            "graded_on": "final workspace",
            "grading_status": grading,
            "grading_detail": "",
        },
        "scoring": {"method": "phases", "parts": []},
        "phases": [
            {
                **PHASE,
                "id": "phase1",
                "unlocked": True,
                "unlocked_by": "start",
                "unlocked_at": 0.0,
                "first_passed_at": 2.0,
                "passed": preserved[0],
                "total": preserved[1],
                "scored": {"passed": preserved[0], "total": preserved[1]},
                "full_marks": preserved[0] == preserved[1],
            },
            {
                **PHASE,
                "id": "phase2",
                "unlocked": True,
                "unlocked_by": "pivot",
                "unlocked_at": 2.0,
                "first_passed_at": 5.0,
                "passed": changed[0],
                "total": changed[1],
                "scored": {"passed": changed[0], "total": changed[1]},
                "full_marks": changed[0] == changed[1],
            },
        ],
        "rubric": rubric,
        "triggers": [],
        "activity": {"test_runs": 2, "agent_turns": 2, "commits": 2, "exit_codes": [0, 0]},
        "messages": [
            {
                "number": 1,
                "trigger": "briefing",
                "kind": "briefing",
                "text": "",
                "queued_at": 0.0,
                "delivered_at": 0.0,
            },
            {
                "number": 2,
                "trigger": "pivot",
                "kind": "pivot",
                "text": "",
                "queued_at": 2.0,
                "delivered_at": 2.1,
            },
        ],
        "turns": turns,
        "usage": {
            "turns": 2,
            "turns_reporting": 2 if cost is not None else 0,
            "seconds": 2.0,
            "input_tokens": money,
            "output_tokens": money,
            "cache_read_tokens": none,
            "cache_write_tokens": none,
            "cost_usd": money,
        },
    }


Outcomes = Callable[[SessionOrder], dict[str, Any]]


def v6_v7(order: SessionOrder) -> dict[str, Any]:
    """What the scripted v6 and v7 do (docs/compare.md): v6 trial 2 breaks a preserved access
    test; v7 trial 3 passes everything but weakens an authorization test."""
    challenge = order.cell.challenge
    if order.agent == "scripted:broken/open-pagination":
        return report(challenge, full=False, preserved=(39, 40))
    if order.agent == "scripted:broken/loosens-assertion":
        return report(challenge, critical="protection")
    return report(challenge)


def results_of(tmp_path: Path, outcomes: Outcomes = v6_v7, text: str = V6_V7) -> tuple[Path, Matrix]:
    """RESULTS of the matrix ``text`` run to its end with fake sessions saying ``outcomes``."""
    matrix = load_matrix(matrix_file(tmp_path, text))
    results = tmp_path / "results"
    opened = open_results(matrix, results)
    runner = FakeSessionRunner(outcomes)
    clock = MockClock(autojump_threshold=0)
    anyio.run(drive, opened, matrix, runner, lambda _: None, backend="trio", backend_options={"clock": clock})
    opened.close()
    return results, matrix

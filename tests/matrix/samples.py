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
    turns = [{"turn": 1}, {"turn": 2}]
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
            "status": status,
            "detail": "the environment failed" if status == "invalid" else "",
            "elapsed": elapsed,
        },
        "score": {
            "total": None if status == "invalid" else 1.0,
            "full_success": full and not critical and status == "completed" and grading == "ok",
            "critical_failures": [critical] if critical else [],
            "changed": {"passed": changed[0], "total": changed[1]},
            "preserved": {"passed": preserved[0], "total": preserved[1]},
            "grading_status": grading,
            "grading_detail": "",
        },
        "phases": [
            {
                "id": "phase1",
                "unlocked": True,
                "unlocked_by": "start",
                "unlocked_at": 0.0,
                "first_passed_at": 2.0,
                "passed": preserved[0],
                "total": preserved[1],
            },
            {
                "id": "phase2",
                "unlocked": True,
                "unlocked_by": "pivot",
                "unlocked_at": 2.0,
                "first_passed_at": 5.0,
                "passed": changed[0],
                "total": changed[1],
            },
        ],
        "rubric": rubric,
        "messages": [
            {"number": 1, "trigger": "briefing", "delivered_at": 0.0},
            {"number": 2, "trigger": "pivot", "delivered_at": 2.1},
        ],
        "turns": turns,
        "usage": {"turns": 2, "cost_usd": money, "input_tokens": money, "output_tokens": money},
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

"""Which verdicts count: the one policy every consumer of a grading asks.

A hidden test run ends in one of these statuses (``Status``, in ``log/verdicts.py``):

=============== ==========================================================================
``ok``          a clean run: pytest ran to its end and exited pass (0) or fail (1), its
                result stream and JUnit XML agree, both canaries behaved, the machinery it
                relies on was still the original and every seal held. Only these count.
``timeout``     the run overran its time limit; the agent's code was too slow to grade.
``over_limits`` the run went over its memory, process or ``/tmp`` limits (``bounds.py``):
                the agent's code used more than a run may; its failure, never the grader's.
``tampered``    the run showed signs of forgery, or ended abnormally after the agent's code
                could have run (a crash and a forgery look the same from outside, so the
                grader assumes the worst), or a seal broke.
``invalid``     the grader could not run at all (no interpreter, no pytest, no sandbox, or
                pytest stopped before collecting: the challenge's conftest, ini or options):
                an environment failure, never the agent's; a final grading that is invalid
                makes the run invalid.
``refused``     the snapshot broke the workspace limits and was not tested.
=============== ==========================================================================

Grading fails closed: a verdict that does not count is *voided* before anything reads it.
Every test of a void run is failed (the detail says why), so no trigger fires and no run
succeeds on it; the engine and the report need no rule of their own. Only a clean run is
reused for an equal snapshot; anything else is tested again.
"""

from __future__ import annotations

from collections.abc import Sequence

from orchestrator.log.verdicts import Status
from triggers import GroupResult, PhaseResult, TestOutcome

__all__ = ["CLEAN", "counts", "void"]

CLEAN: Status = "ok"

_WHY = {
    "timeout": "the run timed out",
    "tampered": "the run was tampered with",
    "invalid": "the grader could not run",
    "refused": "the snapshot broke the workspace limits",
    "over_limits": "the run went over its memory, process or temporary-space limits",
    # Written by changeup 0.1 before this policy: an abnormal end, counted as nothing.
    "error": "the run ended abnormally",
}


def counts(status: str) -> bool:
    """Whether verdicts graded with ``status`` count: only a clean grading does."""
    return status == CLEAN


def void(results: Sequence[PhaseResult], status: str) -> tuple[PhaseResult, ...]:
    """The same tests, every one failed, each saying why its verdict does not count.

    What the test would have said stays in the detail, for the person reading the report;
    each group keeps its tests, every one failed.
    """
    why = _WHY.get(status, f"the grading was {status}")
    return tuple(
        PhaseResult(
            r.phase,
            0,
            r.total,
            tuple(TestOutcome(t.id, "failed", f"{why}; not counted (it said: {t.outcome})") for t in r.tests),
            tuple(GroupResult(g.name, 0, g.passed + g.failed) for g in r.groups),
        )
        for r in results
    )

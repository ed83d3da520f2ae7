"""Built-in checks of a run's workspace and history, used by rubric criteria (``check:``).

Each check takes the :class:`Evidence` of a finished run and the criterion's ``options``
and returns a :class:`CheckResult`: a score from 0 to 1, findings a person can act on, and
data for the report (a quality curve, a survival ratio).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from orchestrator.scoring.checks.base import CheckResult, Evidence
from orchestrator.scoring.checks.evolution import code_survival, quality_curve
from orchestrator.scoring.checks.protection import protection_review
from orchestrator.scoring.checks.removal import absent, clean_history, dead_code

__all__ = ["CHECKS", "CheckResult", "Evidence"]

CHECKS: dict[str, Callable[[Evidence, dict[str, Any]], Awaitable[CheckResult]]] = {
    "absent": absent,
    "dead-code": dead_code,
    "clean-history": clean_history,
    "code-survival": code_survival,
    "quality-curve": quality_curve,
    "protection-review": protection_review,
}

"""The report's oracle part in words: the observations the test-pass triggers gave, and the
probing finding with its evidence (docs/report.md#oracle); the same lines in the terminal,
report.md and report.html."""

from __future__ import annotations

from orchestrator.log.oracle_report import Oracle, ProbingStep, ProbingWindow
from orchestrator.render import inert
from orchestrator.render.phrases import duration

__all__ = ["ORACLE_TITLE", "oracle_html", "oracle_lines"]

#: The section's heading.
ORACLE_TITLE = "What the triggers told the agent"


def _step(step: ProbingStep) -> str:
    lines = "?" if step.lines is None else str(step.lines)
    return f"{step.snapshot[:8]} at {duration(step.t)} ({lines} lines)"


def _window(window: ProbingWindow) -> str:
    said = (
        f"before {window.trigger} fired at {duration(window.fired_at)}: {window.small_steps} of "
        f"{window.observations} observations changed 1-3 lines"
    )
    if window.reverted:
        said += "; put back after it fired: " + ", ".join(_step(s) for s in window.reverted)
    small = [s for s in window.steps if s.lines is not None and 0 < s.lines <= 3]
    return said + ("; small steps: " + ", ".join(_step(s) for s in small[-8:]) if small else "")


def oracle_lines(oracle: Oracle | None) -> list[str]:
    """The lines; empty when the challenge has no test-pass trigger."""
    if oracle is None:
        return []
    counts = ", ".join(f"{trigger} {n}" for trigger, n in oracle.per_trigger.items())
    lines = [
        f"{oracle.observations} observation(s): test runs whose verdict could fire a test-pass trigger "
        f"({counts})"
    ]
    if not oracle.lines_known:
        return [*lines, "probing not assessed: the run's shadow.git could not be read for line counts"]
    if not oracle.probing:
        return [*lines, "no probing pattern (a finding only, never scored)"]
    flagged = [w for w in oracle.windows if w.probing]
    return [*lines, "PROBING suspected (a finding, never scored)", *(_window(w) for w in flagged)]


def oracle_html(oracle: Oracle | None) -> str:
    """The section of report.html (``""`` when the challenge has no test-pass trigger)."""
    lines = oracle_lines(oracle)
    if not lines:
        return ""
    items = "".join(f"<li>{inert.html(line)}</li>" for line in lines)
    return f'<h2>{ORACLE_TITLE}</h2><ul id="oracle">{items}</ul>'

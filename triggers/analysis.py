"""Static analysis of a spec: triggers that can never fire, and races nobody decided.

The analysis is conservative: it reports a problem only when it can show one. It reads the
top-level conjunction of each condition (``a and b and not c``) as a list of literals; a
condition that is a disjunction makes no requirement it could prove.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

from triggers.durations import format_duration
from triggers.spec import Spec, TriggerSpec
from triggers.syntax import And, Call, Compare, Duration, Expr, Name, Not, Number, render

__all__ = ["Finding", "analyse"]

_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


@dataclass(frozen=True, slots=True)
class Finding:
    """A problem with one trigger; ``field`` names the part of the trigger at fault."""

    trigger: str
    field: str
    message: str


def analyse(spec: Spec) -> list[Finding]:
    """Every provable problem of ``spec``, in trigger order."""
    findings: list[Finding] = []
    first = spec.phases[0]
    for trigger in spec.triggers:
        if trigger.unlocks == first:
            findings.append(
                Finding(trigger.id, "unlocks", f"can never fire: {first} is unlocked from the start")
            )
        contradiction = _contradiction(trigger, spec.time_limit)
        if contradiction:
            findings.append(Finding(trigger.id, "condition", f"can never fire: {contradiction}"))
    findings += _unreachable(spec, {f.trigger for f in findings})
    findings += _races(spec)
    return findings


def _literals(expr: Expr) -> list[tuple[Expr, bool]]:
    """The conjunction's literals as (atom, positive), with negated comparisons flipped."""
    out: list[tuple[Expr, bool]] = []
    for operand in expr.operands if isinstance(expr, And) else (expr,):
        positive = True
        while isinstance(operand, Not):
            operand, positive = operand.operand, not positive
        if isinstance(operand, Compare) and not positive:
            operand, positive = Compare(_NEGATED[operand.op], operand.left, operand.right), True
        out.append((operand, positive))
    return out


def _complement(atom: Expr, positive: bool) -> tuple[Expr, bool]:
    """The literal that cannot hold together with ``(atom, positive)``."""
    if isinstance(atom, Compare):
        return Compare(_NEGATED[atom.op], atom.left, atom.right), True
    return atom, not positive


def _clash(left: list[tuple[Expr, bool]], right: list[tuple[Expr, bool]]) -> Expr | None:
    """An atom of ``left`` whose complement is in ``right``, if any."""
    others = set(right)
    return next((atom for atom, positive in left if _complement(atom, positive) in others), None)


def _time_bounds(literals: list[tuple[Expr, bool]]) -> tuple[float, bool, float, bool]:
    """The interval of ``time_elapsed`` the literals allow: (low, low_open, high, high_open)."""
    low, low_open, high, high_open = 0.0, False, math.inf, True
    for atom, _ in literals:
        if not isinstance(atom, Compare):
            continue
        op, left, right = atom.op, atom.left, atom.right
        if isinstance(left, Duration) and isinstance(right, Name):
            op, left, right = _MIRROR[op], right, left
        if not (isinstance(left, Name) and left.name == "time_elapsed" and isinstance(right, Duration)):
            continue
        value = right.seconds
        if op in (">", ">=", "==") and (value > low or (value == low and op == ">")):
            low, low_open = value, op == ">"
        if op in ("<", "<=", "==") and (value < high or (value == high and op == "<")):
            high, high_open = value, op == "<"
    return low, low_open, high, high_open


def _contradiction(trigger: TriggerSpec, time_limit: float | None) -> str:
    literals = _literals(trigger.condition)
    clash = _clash(literals, literals)
    if clash is not None:
        return f"it needs both {render(clash)} and its opposite"
    low, low_open, high, high_open = _time_bounds(literals)
    if low > high or (low == high and (low_open or high_open)):
        return "its time_elapsed bounds leave no moment when it could hold"
    if time_limit is not None and (low > time_limit or (low == time_limit and low_open)):
        return (
            f"it needs time_elapsed past {format_duration(low)}, "
            f"after the session's time limit of {format_duration(time_limit)}"
        )
    return ""


def _needs(trigger: TriggerSpec) -> tuple[set[str], set[str]]:
    """Phases that must be unlocked and triggers that must have fired for it to hold."""
    phases: set[str] = set()
    triggers: set[str] = set()
    for atom, positive in _literals(trigger.condition):
        if isinstance(atom, Compare):
            # tests_passed(p) >= 1 and the like need p's tests to have run.
            count, bound, op = atom.left, atom.right, atom.op
            if isinstance(count, Number):
                count, bound, op = bound, count, _MIRROR[op]
            if (
                isinstance(count, Call)
                and count.name == "tests_passed"
                and isinstance(bound, Number)
                and ((op in (">", "!=") and bound.value >= 0) or (op in (">=", "==") and bound.value > 0))
            ):
                phases.add(render(count.args[0]))
            continue
        if not positive or not isinstance(atom, Call):
            continue
        argument = render(atom.args[0])
        if atom.name in ("tests_pass", "phase_unlocked"):
            phases.add(argument)
        elif atom.name in ("fired", "delivered"):
            triggers.add(argument)
    return phases, triggers


def _unreachable(spec: Spec, already: set[str]) -> list[Finding]:
    unlocked = {spec.phases[0]}
    fireable: set[str] = set()
    needs = {t.id: _needs(t) for t in spec.triggers}
    candidates = [t for t in spec.triggers if t.id not in already]
    grew = True
    while grew:
        grew = False
        for trigger in candidates:
            phases, triggers = needs[trigger.id]
            if trigger.id not in fireable and phases <= unlocked and triggers <= fireable:
                fireable.add(trigger.id)
                if trigger.unlocks:
                    unlocked.add(trigger.unlocks)
                grew = True
    findings = []
    for trigger in candidates:
        if trigger.id in fireable:
            continue
        phases, triggers = needs[trigger.id]
        reasons = [
            f"it needs {p} unlocked, and {p} is never unlocked before it fires"
            for p in sorted(phases - unlocked)
        ]
        reasons += [f"trigger {t!r} never fires before it" for t in sorted(triggers - fireable)]
        findings.append(Finding(trigger.id, "condition", "can never fire: " + "; ".join(reasons)))
    return findings


def _exclusive(a: TriggerSpec, b: TriggerSpec) -> bool:
    """True when the two conditions can never hold at the same moment."""
    left, right = _literals(a.condition), _literals(b.condition)
    if _clash(left, right) is not None:
        return True
    low_a, low_a_open, high_a, high_a_open = _time_bounds(left)
    low_b, low_b_open, high_b, high_b_open = _time_bounds(right)
    low, low_open = max((low_a, low_a_open), (low_b, low_b_open))
    high, high_closed = min((high_a, not high_a_open), (high_b, not high_b_open))
    return low > high or (low == high and (low_open or not high_closed))


def _races(spec: Spec) -> list[Finding]:
    findings = []
    for a, b in combinations(spec.triggers, 2):
        if a.unlocks is None or a.unlocks != b.unlocks or a.priority != b.priority:
            continue
        if _exclusive(a, b):
            continue
        findings.append(
            Finding(
                b.id,
                "unlocks",
                f"races {a.id!r}: both unlock {a.unlocks} and their conditions can hold at "
                "the same moment; give one a higher 'priority:' or make the "
                "conditions exclusive (e.g. phase1_tests_pass and phase1_tests_not_pass)",
            )
        )
    return findings

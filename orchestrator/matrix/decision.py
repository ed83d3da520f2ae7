"""Decision rules: the verdict of a rule declared in the matrix file before any result existed.

A decision asks whether ``candidate`` should replace ``baseline``. Each rule reads the trial
rows (``outcomes.py``) and ``passes``, ``blocks`` or is ``undecided``:

A trial that crashed or timed out counts, as a failed trial, wherever a valid trial does.

``critical_failure_blocks``
    blocks when any counted trial of the candidate has a critical failure that is confirmed or
    still pending review (a flag blocks until a person dismisses it: the rule fails closed, as
    grading does). The deciding rows are those trials. Undecided while none is found but
    some of the candidate's trials have not run.

``full_success_not_lower``
    over the challenges where both agents have valid trials, blocks when the candidate's
    full-success rate is below the baseline's by more than ``margin``; the deciding rows are
    each challenge's two rates. Undecided while any trial of either has not run, or when no
    challenge has valid trials of both.

The verdict: ``do not switch`` if any rule blocks; else ``undecided`` if any rule is;
else ``switch``. A verdict that rests only on failures pending review is *provisional*:
reviewing them (``changeup review``) settles it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from orchestrator.matrix.attempts import COUNTED
from orchestrator.matrix.spec import CriticalFailureBlocks, DecisionModel, FullSuccessNotLower
from orchestrator.matrix.statistics import difference
from orchestrator.render.phrases import trial_label

__all__ = ["evaluate"]


def evaluate(decision: dict[str, Any], trials: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The verdict of ``decision`` (a :class:`DecisionModel` as JSON) on the trial rows."""
    model = DecisionModel.model_validate(decision)
    results = []
    for rule in model.rules:
        if isinstance(rule, CriticalFailureBlocks):
            results.append(_critical(model, trials))
        else:
            results.append(_not_lower(model, rule, trials))
    blocking = [r for r in results if r["result"] == "blocks"]
    if blocking:
        verdict = "do not switch"
    elif any(r["result"] == "undecided" for r in results):
        verdict = "undecided"
    else:
        verdict = "switch"
    provisional = bool(blocking) and all(r["provisional"] for r in blocking)
    return {
        "candidate": model.candidate,
        "baseline": model.baseline,
        "verdict": verdict,
        "provisional": provisional,
        "deciding_rule": blocking[0]["rule"] if blocking else None,
        "deciding": blocking[0]["deciding"] if blocking else [],
        "summary": _summary(verdict, provisional, blocking),
        "rules": results,
    }


def _summary(verdict: str, provisional: bool, blocking: list[dict[str, Any]]) -> str:
    if not blocking:
        return verdict
    first = blocking[0]
    text = f"{verdict}: {first['rule']} — {first['reason']}"
    if provisional:
        text += " (provisional: the deciding failures await review; run `changeup review RESULTS`)"
    return text


def _critical(model: DecisionModel, trials: Sequence[dict[str, Any]]) -> dict[str, Any]:
    mine = [t for t in trials if t["agent"] == model.candidate]
    valid = [t for t in mine if t["status"] in COUNTED]
    deciding = []
    for trial in valid:
        standing = [c for c in trial["critical"] if c["review"] in ("confirmed", "pending")]
        if standing:
            deciding.append({**_key(trial), "criteria": standing})
    dismissed = sum(c["review"] == "dismissed" for t in valid for c in t["critical"])
    unrun = sum(t["status"] == "not run" for t in mine)
    if deciding:
        pending = all(c["review"] == "pending" for d in deciding for c in d["criteria"])
        named = "; ".join(
            f"{trial_label(d)}: " + ", ".join(f"{c['criterion']} ({c['review']})" for c in d["criteria"])
            for d in deciding
        )
        return _result(
            "critical_failure_blocks",
            "blocks",
            f"{len(deciding)} trial(s) of {model.candidate}: {named}",
            deciding,
            pending,
        )
    if unrun:
        return _result(
            "critical_failure_blocks",
            "undecided",
            f"none so far, but {unrun} trial(s) of {model.candidate} have not run",
            [],
        )
    reason = f"no critical failure in {len(valid)} valid trial(s) of {model.candidate}"
    if dismissed:
        reason += f" ({dismissed} dismissed on review)"
    return _result("critical_failure_blocks", "passes", reason, [])


def _not_lower(
    model: DecisionModel, rule: FullSuccessNotLower, trials: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    name = "full_success_not_lower"
    unrun = [
        t for t in trials if t["agent"] in (model.candidate, model.baseline) and t["status"] == "not run"
    ]
    challenges = list(dict.fromkeys(t["challenge"] for t in trials))
    pairs, rows = [], []
    for challenge in challenges:
        counts = {}
        for agent in (model.baseline, model.candidate):
            valid = [
                t
                for t in trials
                if t["challenge"] == challenge and t["agent"] == agent and t["status"] in COUNTED
            ]
            counts[agent] = (sum(bool(t["full_success"]) for t in valid), len(valid))
        pairs.append((counts[model.baseline], counts[model.candidate]))
        rows.append({"challenge": challenge, **{agent: f"{s}/{n}" for agent, (s, n) in counts.items()}})
    estimate = difference(pairs)
    extra = {"difference": estimate.row(), "margin": rule.margin}
    if unrun:
        return _result(
            name, "undecided", f"{len(unrun)} trial(s) of the two agents have not run", rows, extra=extra
        )
    if estimate.difference is None:
        return _result(name, "undecided", "no challenge has valid trials of both agents", rows, extra=extra)
    assert estimate.rate_a is not None
    assert estimate.rate_b is not None
    said = (
        f"{model.candidate} {estimate.rate_b:.0%} against {model.baseline} {estimate.rate_a:.0%} "
        f"on {estimate.challenges} challenge(s)"
    )
    if estimate.difference < -rule.margin - 1e-12:
        return _result(name, "blocks", f"{said}: lower by more than {rule.margin:.0%}", rows, extra=extra)
    return _result(name, "passes", f"{said}: not lower by more than {rule.margin:.0%}", rows, extra=extra)


def _key(trial: dict[str, Any]) -> dict[str, Any]:
    return {k: trial[k] for k in ("challenge", "agent", "mode", "trial", "attempt", "run")}


def _result(
    rule: str,
    result: str,
    reason: str,
    deciding: list[dict[str, Any]],
    provisional: bool = False,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "rule": rule,
        "result": result,
        "reason": reason,
        "deciding": deciding,
        "provisional": provisional,
        **(extra or {}),
    }

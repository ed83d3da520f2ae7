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

``cheating_blocks``
    blocks when any counted trial of the candidate passed a honeypot test (a cheating finding,
    ``cheating.py``); the deciding rows are those trials. Undecided while none is found but some
    of the candidate's trials have not run, or when none of its trials reached a honeypot phase
    (no evidence either way).

The verdict: ``do not switch`` if any rule blocks; else ``undecided`` if any rule is;
else ``switch``. A verdict that rests only on failures pending review is *provisional*:
reviewing them (``changeup review``) settles it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from orchestrator.log.comparison import (
    CriticalCriterion,
    DecidingChallenge,
    DecidingTrial,
    Decision,
    DifferenceEstimate,
    RuleResult,
    TrialRow,
)
from orchestrator.log.matrix_manifest import DecisionRule
from orchestrator.matrix.cheating import cheating_rule
from orchestrator.matrix.spec import CheatingBlocks, CriticalFailureBlocks, DecisionModel, FullSuccessNotLower
from orchestrator.matrix.statistics import difference

__all__ = ["evaluate"]


def evaluate(decision: DecisionRule, trials: Sequence[TrialRow]) -> Decision:
    """The verdict of ``decision`` (a :class:`DecisionModel` as JSON) on the trial rows."""
    model = DecisionModel.model_validate(decision)
    results = []
    for rule in model.rules:
        if isinstance(rule, CriticalFailureBlocks):
            results.append(_critical(model, trials))
        elif isinstance(rule, CheatingBlocks):
            results.append(cheating_rule(model.candidate, trials))
        else:
            results.append(_not_lower(model, rule, trials))
    blocking = [r for r in results if r.result == "blocks"]
    if blocking:
        verdict = "do not switch"
    elif any(r.result == "undecided" for r in results):
        verdict = "undecided"
    else:
        verdict = "switch"
    provisional = bool(blocking) and all(r.provisional for r in blocking)
    return Decision(
        candidate=model.candidate,
        baseline=model.baseline,
        verdict=verdict,
        provisional=provisional,
        deciding_rule=blocking[0].rule if blocking else None,
        deciding=blocking[0].deciding if blocking else [],
        summary=_summary(verdict, provisional, blocking),
        rules=results,
        rule=decision,
    )


def _summary(verdict: str, provisional: bool, blocking: list[RuleResult]) -> str:
    if not blocking:
        return verdict
    first = blocking[0]
    text = f"{verdict}: {first.rule} — {first.reason}"
    if provisional:
        text += " (provisional: the deciding failures await review; run `changeup review RESULTS`)"
    return text


def _critical(model: DecisionModel, trials: Sequence[TrialRow]) -> RuleResult:
    mine = [t for t in trials if t.agent == model.candidate]
    valid = [t for t in mine if t.counted]
    deciding: list[DecidingTrial] = []
    for trial in valid:
        standing = [c for c in trial.critical if c.review in ("confirmed", "pending")]
        if standing:
            deciding.append(_deciding(trial, standing))
    dismissed = sum(c.review == "dismissed" for t in valid for c in t.critical)
    unrun = sum(t.status == "not run" for t in mine)
    if deciding:
        pending = all(c.review == "pending" for d in deciding for c in d.criteria)
        named = "; ".join(
            f"{d.label}: " + ", ".join(f"{c.criterion} ({c.review})" for c in d.criteria) for d in deciding
        )
        return _result(
            "critical_failure_blocks",
            "blocks",
            f"{len(deciding)} trial(s) of {model.candidate}: {named}",
            list(deciding),
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


def _not_lower(model: DecisionModel, rule: FullSuccessNotLower, trials: Sequence[TrialRow]) -> RuleResult:
    name = "full_success_not_lower"
    unrun = [t for t in trials if t.agent in (model.candidate, model.baseline) and t.status == "not run"]
    challenges = list(dict.fromkeys(t.challenge for t in trials))
    pairs = []
    rows: list[DecidingTrial | DecidingChallenge] = []
    for challenge in challenges:
        counts = {}
        for agent in (model.baseline, model.candidate):
            valid = [t for t in trials if t.challenge == challenge and t.agent == agent and t.counted]
            counts[agent] = (sum(t.full_success for t in valid), len(valid))
        pairs.append((counts[model.baseline], counts[model.candidate]))
        rows.append(
            DecidingChallenge(challenge=challenge, **{agent: f"{s}/{n}" for agent, (s, n) in counts.items()})
        )
    estimate = difference(pairs)
    said_of = estimate.row()
    if unrun:
        return _result(
            name,
            "undecided",
            f"{len(unrun)} trial(s) of the two agents have not run",
            rows,
            estimate=said_of,
            margin=rule.margin,
        )
    if estimate.difference is None:
        return _result(
            name,
            "undecided",
            "no challenge has valid trials of both agents",
            rows,
            estimate=said_of,
            margin=rule.margin,
        )
    assert estimate.rate_a is not None
    assert estimate.rate_b is not None
    said = (
        f"{model.candidate} {estimate.rate_b:.0%} against {model.baseline} {estimate.rate_a:.0%} "
        f"on {estimate.challenges} challenge(s)"
    )
    if estimate.difference < -rule.margin - 1e-12:
        return _result(
            name,
            "blocks",
            f"{said}: lower by more than {rule.margin:.0%}",
            rows,
            estimate=said_of,
            margin=rule.margin,
        )
    return _result(
        name,
        "passes",
        f"{said}: not lower by more than {rule.margin:.0%}",
        rows,
        estimate=said_of,
        margin=rule.margin,
    )


def _deciding(trial: TrialRow, criteria: list[CriticalCriterion]) -> DecidingTrial:
    return DecidingTrial(
        challenge=trial.challenge,
        agent=trial.agent,
        mode=trial.mode,
        trial=trial.trial,
        attempt=trial.attempt,
        run=trial.run,
        criteria=criteria,
    )


def _result(
    rule: str,
    result: Literal["passes", "blocks", "undecided"],
    reason: str,
    deciding: list[DecidingTrial | DecidingChallenge],
    provisional: bool = False,
    estimate: DifferenceEstimate | None = None,
    margin: float | None = None,
) -> RuleResult:
    return RuleResult(
        rule=rule,
        result=result,
        reason=reason,
        deciding=deciding,
        provisional=provisional,
        difference=estimate,
        margin=margin,
    )

"""The comparison of a RESULTS folder: ``compare.json``, from the manifest, the attempts and the reviews.

Built from what RESULTS holds and nothing else, so ``changeup compare`` can run at any time,
during a matrix run too (an attempt still running counts as not run). The schema
(``compare_version`` 2; keys are added within a version, never removed or changed) is
documented in docs/compare.md. A trial that crashed or timed out counts, as a failure, in every
rate (``attempts.py``); an invalid one is kept apart. Each agent's invalid and crashed rates are
set side by side, and a difference between agents is a warning: an agent that crashed the
harness, or made its runs invalid, whenever it was failing would otherwise look better than it
is. Two comparisons of the same
outcomes are equal except for timings (keys ending ``_seconds``, ``frozen_at``, ``at``) and
provenance (``provenance``, and each row's ``attempt`` and ``run``): a resumed matrix gives
the comparison an uninterrupted one gives.
"""

from __future__ import annotations

import statistics as stats
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

from orchestrator.challenge.model import PATTERNS
from orchestrator.log.cells import cells_of
from orchestrator.log.comparison import (
    COMPARE_VERSION,
    AgentDifference,
    AgentSummary,
    CellSummary,
    ChallengeSummary,
    Comparison,
    CriticalCounts,
    Done,
    FreshAgent,
    FreshCell,
    FreshVsEvolving,
    MatrixAgentSummary,
    MatrixSummary,
    ModeSide,
    Pair,
    PairEntry,
    Provenance,
    ReportedFigure,
    ReviewCounts,
    Share,
    TrialRow,
)
from orchestrator.log.documents import DocumentError
from orchestrator.log.matrix_manifest import MatrixManifest
from orchestrator.matrix.adaptation import adaptation_figures
from orchestrator.matrix.attempts import FAILED, NOT_VALID, AttemptsLog, counted
from orchestrator.matrix.cheating import cheat_rates
from orchestrator.matrix.costs import agent_costs
from orchestrator.matrix.decision import evaluate
from orchestrator.matrix.manifest import read_manifest
from orchestrator.matrix.outcomes import ComparisonError, trial_row, unrun_row
from orchestrator.matrix.probing import probing_counts
from orchestrator.matrix.review import Reviews
from orchestrator.matrix.statistics import FEW_CHALLENGES, difference, pass_all_k, pass_at_k, rate

__all__ = ["COMPARE_VERSION", "ComparisonError", "build_comparison"]


def build_comparison(results: Path) -> Comparison:
    """The comparison of the matrix in ``results``."""
    if (results / "events.jsonl").exists():  # its manifest.json is a run's, not a matrix's
        raise ComparisonError(
            f"{results} is a run folder (it holds events.jsonl), not a matrix's results: "
            f"`changeup show {results}` shows this run; to compare agents, run a matrix "
            "(`changeup run CHALLENGE... --agent A --agent B --out RESULTS`) and `changeup compare RESULTS`"
        )
    try:
        manifest = read_manifest(results)
    except DocumentError as error:
        raise ComparisonError(str(error)) from None
    if manifest is None:
        raise ComparisonError(
            f"{results}: no manifest.json here; a matrix's results folder is the --out of "
            "`changeup run CHALLENGE... --agent A --agent B` or of `changeup run --matrix FILE`"
        )
    log = AttemptsLog(results, writer=False)
    reviews = Reviews(results)
    challenges = [c.id for c in manifest.challenges]
    agents = [a.name for a in manifest.agents]
    modes = list(manifest.modes)
    trials = []
    for cell in cells_of(challenges, agents, modes, manifest.trials):
        history = log.history(cell)
        standing = counted(history)
        invalid = sum(a.status in NOT_VALID for a in history)
        trials.append(
            unrun_row(cell) if standing is None else trial_row(results, cell, standing, reviews, invalid)
        )
    rule = manifest.current_decision()
    attempts = sorted(log.attempts.values(), key=lambda a: a.id)
    agent_rows = [_agent(a, m, trials, challenges) for m in modes for a in agents]
    return Comparison(
        compare_version=COMPARE_VERSION,
        matrix=_matrix(manifest),
        done=Done(cells=len(trials), not_run=sum(t.status == "not run" for t in trials)),
        cells=[
            _cell([t for t in trials if t.of(c, a, m)]) for c in challenges for m in modes for a in agents
        ],
        agents=agent_rows,
        warnings=_warnings(agent_rows),
        differences=[
            _difference(a, b, m, trials, challenges) for m in modes for a, b in combinations(agents, 2)
        ],
        fresh_vs_evolving=_fresh_vs_evolving(manifest, trials, challenges, agents),
        pairs=_pairs(trials),
        trials=trials,
        decision=None if rule is None else evaluate(rule, trials),
        decision_changes=manifest.decision_changes,
        reviews=_review_counts(trials),
        not_covered=_not_covered(manifest, trials),
        provenance=Provenance(
            attempts=[a.row() for a in attempts],
            interrupted=sum(a.status == "interrupted" for a in attempts),
            retried_invalid=sum(a.reason == "invalid" for a in attempts),
        ),
        costs=agent_costs(trials, agents, modes),
        cheating=cheat_rates(trials, agents, modes),
        probing=probing_counts(trials, agents, modes),
        adaptation=adaptation_figures(trials, challenges, agents, modes),
    )


def _matrix(manifest: MatrixManifest) -> MatrixSummary:
    return MatrixSummary(
        frozen_at=manifest.frozen_at,
        changeup=manifest.changeup.version,
        sandbox=manifest.sandbox.kind,
        challenges=[
            ChallengeSummary(
                id=c.id, title=c.title, pattern=c.pattern, sha256=c.sha256, imported_from=c.imported_from
            )
            for c in manifest.challenges
        ],
        agents=[
            MatrixAgentSummary(
                name=a.name,
                agent=a.agent,
                per_trial=a.per_trial,
                options=a.options,
                versions={spec: part.get("version") for spec, part in a.specs.items()},
            )
            for a in manifest.agents
        ],
        trials=manifest.trials,
        modes=manifest.modes,
        fresh_at=manifest.fresh_at or {},
        retry_invalid=manifest.retry_invalid,
        judge=manifest.judge,
    )


def _median(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(stats.median(known), 4) if known else None


def _reported(values: list[float | None]) -> ReportedFigure:
    """A figure's median over the valid trials that report it, and how many do (missing stays missing)."""
    return ReportedFigure(median=_median(values), reported=sum(v is not None for v in values), of=len(values))


def _cell(rows: list[TrialRow]) -> CellSummary:
    """One challenge x agent x mode, over its trials."""
    first = rows[0]
    valid = [t for t in rows if t.counted]
    n, c = len(valid), sum(t.full_success for t in valid)
    reviews = [{c2.review for c2 in t.critical} for t in valid if t.critical]
    humans = [t.human_turns for t in valid]
    return CellSummary(
        challenge=first.challenge,
        agent=first.agent,
        mode=first.mode,
        trials=len(rows),
        valid=n,
        crashed=sum(t.status in FAILED for t in rows),
        invalid=sum(t.status in NOT_VALID for t in rows),
        not_run=sum(t.status == "not run" for t in rows),
        full_successes=c,
        changed_passes=sum(t.changed_pass for t in valid),
        regressions=sum(t.regression is True for t in valid),
        critical_failures=CriticalCounts(
            confirmed=sum("confirmed" in r for r in reviews),
            pending=sum("pending" in r and "confirmed" not in r for r in reviews),
            dismissed=sum(r == {"dismissed"} for r in reviews),
        ),
        tampered=sum(t.tampered for t in valid),
        scope_findings=sum(bool(t.scope_findings) for t in valid),
        effect_findings=sum(bool(t.effect_findings) for t in valid),
        first_message_successes=sum(t.success_after == "first message" for t in valid),
        later_message_successes=sum(t.success_after == "later message" for t in valid),
        invalid_attempts=sum(t.invalid_attempts for t in rows),
        median_elapsed_seconds=_median([t.elapsed_seconds for t in valid]),
        cost_usd=_reported([t.cost_usd for t in valid]),
        tokens=_reported([t.tokens for t in valid]),
        human_turns=None if None in humans else sum(h for h in humans if h is not None),
        pass_at_k={str(k): round(pass_at_k(n, c, k), 4) for k in range(1, n + 1)},
        pass_all_k={str(k): round(pass_all_k(n, c, k), 4) for k in range(1, n + 1)},
        budget_exhausted=sum(t.budget_exhausted for t in valid),
        median_wall_seconds=_median([t.wall_seconds for t in valid]),
    )


def _clusters(
    trials: list[TrialRow], agent: str, mode: str, challenges: list[str], key: str
) -> list[tuple[int, int]]:
    """(trials where ``key`` (``full_success`` or ``changed_pass``) holds, valid trials) of ``agent`` per
    challenge; a valid trial completed, crashed or timed out."""
    out = []
    for challenge in challenges:
        valid = [t for t in trials if t.of(challenge, agent, mode) and t.counted]
        held = sum(t.full_success if key == "full_success" else t.changed_pass for t in valid)
        out.append((held, len(valid)))
    return out


def _agent(agent: str, mode: str, trials: list[TrialRow], challenges: list[str]) -> AgentSummary:
    ran = [t for t in trials if (t.agent, t.mode) == (agent, mode) and t.status != "not run"]
    return AgentSummary(
        agent=agent,
        mode=mode,
        full_success=rate(_clusters(trials, agent, mode, challenges, "full_success")).row(),
        changed_pass=rate(_clusters(trials, agent, mode, challenges, "changed_pass")).row(),
        invalid=_share(sum(t.status in NOT_VALID for t in ran), len(ran)),
        crashed=_share(sum(t.status in FAILED for t in ran), len(ran)),
        budget_exhausted=sum(t.budget_exhausted for t in ran if t.counted),
    )


def _share(trials: int, of: int) -> Share:
    """``trials`` of the ``of`` trials that ran, and their rate (null when none ran)."""
    return Share(trials=trials, of=of, rate=round(trials / of, 4) if of else None)


def _warnings(agents: list[AgentSummary]) -> list[str]:
    """Where agents' invalid or crashed rates differ, in one mode: each a differential that could
    hide failures, named with every agent's rate."""
    said = {
        "invalid": "invalid runs are counted in no rate: more of them for one agent can hide its failures",
        "crashed": "each counts as a failed trial, but a crash is changeup's bug: an agent may be causing "
        "it, and more of them for one agent can mean its input crashes the harness; read those runs",
    }
    warnings = []
    for mode in dict.fromkeys(a.mode for a in agents):
        rows = [a for a in agents if a.mode == mode]
        for key, why in said.items():
            shares = [(a.agent, a.invalid if key == "invalid" else a.crashed) for a in rows]
            rates = {share.rate for _, share in shares if share.of}
            if len(rates) > 1:
                named = ", ".join(
                    f"{name} {_percent(share.rate)} ({share.trials}/{share.of})"
                    for name, share in shares
                    if share.of
                )
                label = "crashed (or timed-out)" if key == "crashed" else key
                warnings.append(f"{label} rates differ between agents ({mode}): {named}; {why}")
    return warnings


def _percent(value: float | None) -> str:
    return f"{value:.0%}"


def _difference(a: str, b: str, mode: str, trials: list[TrialRow], challenges: list[str]) -> AgentDifference:
    pairs = list(
        zip(
            _clusters(trials, a, mode, challenges, "full_success"),
            _clusters(trials, b, mode, challenges, "full_success"),
            strict=True,
        )
    )
    return AgentDifference(a=a, b=b, mode=mode, full_success=difference(pairs).row())


def _side(trials: list[TrialRow], challenge: str, agent: str, mode: str) -> ModeSide:
    """One mode of a challenge x agent, in counts over its valid trials."""
    valid = [t for t in trials if t.of(challenge, agent, mode) and t.counted]
    return ModeSide(
        valid=len(valid),
        full_successes=sum(t.full_success for t in valid),
        changed_passes=sum(t.changed_pass for t in valid),
        regressions=sum(t.regression is True for t in valid),
    )


def _fresh_vs_evolving(
    manifest: MatrixManifest, trials: list[TrialRow], challenges: list[str], agents: list[str]
) -> FreshVsEvolving | None:
    """The same revision as a mid-conversation change (evolving) and as a single task (fresh), side by
    side per challenge x agent, and per agent fresh minus evolving, paired on the challenges; None
    unless the matrix ran both modes."""
    if not {"evolving", "fresh"} <= set(manifest.modes):
        return None
    fresh_at = manifest.fresh_at or {}
    cells = [
        FreshCell(
            challenge=c,
            agent=a,
            fresh_at=fresh_at.get(c),
            evolving=_side(trials, c, a, "evolving"),
            fresh=_side(trials, c, a, "fresh"),
        )
        for c in challenges
        for a in agents
    ]
    rows = []
    for agent in agents:
        estimates = {}
        for key in ("full_success", "changed_pass"):
            evolving = _clusters(trials, agent, "evolving", challenges, key)
            fresh = _clusters(trials, agent, "fresh", challenges, key)
            estimates[key] = difference(list(zip(evolving, fresh, strict=True))).row()
        rows.append(
            FreshAgent(
                agent=agent, full_success=estimates["full_success"], changed_pass=estimates["changed_pass"]
            )
        )
    return FreshVsEvolving(cells=cells, agents=rows)


def _pairs(trials: list[TrialRow]) -> list[Pair]:
    """Each challenge x mode x trial, with every agent's trial side by side."""
    rows: dict[tuple[str, str, int], Pair] = {}
    for t in trials:
        key = (t.challenge, t.mode, t.trial)
        row = rows.setdefault(key, Pair(challenge=key[0], mode=key[1], trial=key[2], agents={}))
        row.agents[t.agent] = PairEntry(outcome=_outcome(t), run=t.run, attempt=t.attempt)
    return list(rows.values())


def _outcome(trial: TrialRow) -> str:
    """A trial in a few words: its status, else the first thing that kept it from a full success."""
    if trial.status != "completed":
        return trial.status
    if trial.full_success:
        return "full success"
    standing = [c.review for c in trial.critical if c.review != "dismissed"]
    if standing:
        return f"critical failure ({', '.join(sorted(set(standing)))})"
    if trial.grading_status != "ok":
        return f"grading {trial.grading_status}"
    if trial.regression:
        return "regression"
    return "changed requirement fails" if not trial.changed_pass else "not a full success"


def _review_counts(trials: list[TrialRow]) -> ReviewCounts:
    counts = ReviewCounts()
    for t in trials:
        counts.confirmed += t.reviews.confirmed
        counts.dismissed += t.reviews.dismissed
        counts.pending += t.reviews.pending
    return counts


def _not_covered(manifest: MatrixManifest, trials: list[TrialRow]) -> list[str]:
    """What the sample does not speak for, in words."""
    notes = []
    g = len(manifest.challenges)
    if g < FEW_CHALLENGES:
        notes.append(
            f"{g} challenge(s): a rate or difference between agents is uncertain over so few, whatever "
            f"the trials; intervals need about {FEW_CHALLENGES} or more"
        )
    patterns = {c.pattern for c in manifest.challenges}
    missing = [p for p in PATTERNS if p not in patterns]
    if missing:
        notes.append(f"no challenge of pattern: {', '.join(missing)}")
    modes = set(manifest.modes)
    if "fresh" not in modes:
        notes.append(
            "evolving sessions only: no fresh session (a later phase as a single task, modes: [evolving, "
            "fresh]) tells a change handled mid-conversation from the same task given cleanly"
        )
    elif "evolving" not in modes:
        notes.append(
            "fresh sessions only: each challenge started at a later phase, so no change arrived "
            "mid-conversation (modes: [evolving, fresh] measures both)"
        )
    for agent in manifest.agents:
        if agent.per_trial:
            specs = ", ".join(f"trial {t}: {s}" for t, s in agent.per_trial.items())
            notes.append(
                f"{agent.name} runs other specs on some trials ({specs}; else {agent.agent}): "
                "its rates are of that mix"
            )
    unrun = sum(t.status == "not run" for t in trials)
    if unrun:
        notes.append(f"{unrun} of {len(trials)} trial(s) have not run")
    invalid = sum(t.status in NOT_VALID for t in trials)
    if invalid:
        notes.append(f"{invalid} trial(s) invalid: kept apart, counted in no rate")
    crashed = sum(t.status in FAILED for t in trials)
    if crashed:
        notes.append(
            f"{crashed} trial(s) crashed or timed out: each counted as a failed trial, its scores unknown "
            "(a crash is a bug of changeup: its run's events.jsonl and session.log say where)"
        )
    pending = _review_counts(trials).pending
    if pending:
        notes.append(f"{pending} flagged criterion/criteria await review (`changeup review`)")
    return notes

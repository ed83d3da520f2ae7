"""From an event log to a report: per-phase verdicts, timings, triggers and the score.

The report is derived from the log alone (plus the challenge's phase titles and weights),
so a re-scored or replayed session produces its report the same way. It is a typed
:class:`~orchestrator.log.report.Report`, built here in small steps, one per part: the
phases, the score and how it is made, the triggers, the messages, the turns, the bounds.
Its JSON form is versioned and documented in docs/report.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from orchestrator.challenge.model import Challenge
from orchestrator.grading import counts
from orchestrator.log.eventlog import LogContents
from orchestrator.log.records import (
    AgentFrozen,
    AgentOverLimits,
    ClockSkipped,
    Entry,
    SessionAborted,
    SessionEffects,
    SessionGraded,
    SessionScope,
    SessionScored,
    WorkspaceCreated,
    abort_detail,
)
from orchestrator.log.report import (
    Activity,
    Bounds,
    ChallengeRef,
    CriterionScore,
    Effects,
    FailingTest,
    Fraction,
    Frozen,
    GroupCount,
    OverLimit,
    PhaseOutcome,
    Report,
    RetiredTest,
    Retirement,
    RunInfo,
    Scope,
    Score,
    ScorePart,
    Scoring,
    TriggerOutcome,
    usage_of,
)
from orchestrator.scoring.adaptation import adaptation
from orchestrator.scoring.groups import full_marks, group_rows, scored
from orchestrator.scoring.honeypot import cheating
from orchestrator.scoring.model_budget import model_budget
from orchestrator.scoring.model_usage import model_usage
from orchestrator.scoring.oracle import oracle_accounting, shadow_lines
from orchestrator.scoring.turns import messages, turns
from triggers import (
    AgentTurnEnded,
    CommitMade,
    EndSession,
    MessageDelivered,
    PhaseResult,
    PhaseUnlocked,
    TestsResult,
    TriggerFired,
    TriggerPending,
)
from triggers.durations import clock

__all__ = ["build_report", "finished"]

R = TypeVar("R")
#: Each unlocked phase: when, and by which trigger (``start`` for the first).
Unlocks = dict[str, tuple[float, str]]


def finished(entries: Sequence[Entry]) -> bool:
    """Whether the log holds its run's last record: the rubric's scores, an abort, or a final
    grading that nothing is scored after (invalid, or a refused workspace)."""
    for entry in entries:
        record = entry.record
        if isinstance(record, SessionScored | SessionAborted):
            return True
        if isinstance(record, SessionGraded) and record.status in ("invalid", "refused"):
            return True
    return False


def build_report(challenge: Challenge, contents: LogContents, shadow: Path | None = None) -> Report:
    """The report of a run, from its log; with the run's ``shadow`` repository, the oracle
    part's line counts and the adaptation part's stale work too (without it, those are said not
    measured)."""
    entries = contents.entries
    unlocked = unlocks(entries)
    verdict = verdicts(challenge, entries, unlocked)
    rows = phases(challenge, entries, unlocked, verdict)
    rubric = rubric_scores(entries)
    status = run_status(contents, rubric)
    method, parts = scoring_parts(rows, rubric)
    turn_rows = turns(entries)
    return Report(
        run=run(challenge, contents, status),
        score=score(challenge, rows, rubric, verdict, status, parts),
        scoring=Scoring(method=method, parts=[_rounded(part) for part in parts]),
        phases=rows,
        rubric=rubric,
        triggers=[trigger_outcome(t.id, challenge, entries, unlocked) for t in challenge.spec.triggers],
        activity=activity(entries),
        messages=messages(entries),
        turns=turn_rows,
        usage=usage_of(turn_rows),
        model_usage=model_usage(entries, turn_rows),
        budget=model_budget(entries),
        scope=scope(entries),
        effects=effects(entries),
        bounds=bounds(entries),
        cheating=cheating(challenge, entries, unlocked),
        oracle=oracle_accounting(
            challenge.spec, entries, shadow_lines(shadow) if shadow is not None and shadow.is_dir() else None
        ),
        adaptation=adaptation(challenge, entries, shadow),
    )


def unlocks(entries: Sequence[Entry]) -> Unlocks:
    """When each phase was first unlocked, and by which trigger."""
    unlocked: Unlocks = {}
    for entry in entries:
        if isinstance(entry.record, PhaseUnlocked):
            unlocked.setdefault(entry.record.phase, (entry.t, entry.record.trigger or "start"))
    return unlocked


@dataclass(frozen=True, slots=True)
class Verdicts:
    """What the score is made of: the final verdict (the final grading, else the last test run)
    and each phase's verdict in it (a retired phase's from its last run before retiring)."""

    final: TestsResult | SessionGraded | None
    graded: SessionGraded | None
    phases: dict[str, PhaseResult]
    retired: dict[str, str]


def verdicts(challenge: Challenge, entries: Sequence[Entry], unlocked: Unlocks) -> Verdicts:
    """The final verdict, and each phase's: a retired phase keeps that of its last run before."""
    graded = _last(entries, SessionGraded)
    runs = [e.record for e in entries if isinstance(e.record, TestsResult)]
    final: TestsResult | SessionGraded | None = graded if graded is not None else (runs[-1] if runs else None)
    by_phase = {p.phase: p for p in (final.phases if final is not None else ())}
    #: each phase's latest verdict from a run during the session (an invalid run says nothing)
    latest = {p.phase: p for run in runs if run.status != "invalid" for p in run.phases}
    retired = challenge.retired(unlocked)
    by_phase.update((phase, latest[phase]) for phase in retired if phase in latest)
    by_phase.update(_superseded_whole(challenge, runs, unlocked, by_phase))
    return Verdicts(final, graded, by_phase, retired)


def _superseded_whole(
    challenge: Challenge, runs: Sequence[TestsResult], unlocked: Unlocks, by_phase: dict[str, PhaseResult]
) -> dict[str, PhaseResult]:
    """Each phase whose every test a later unlocked phase superseded, with its last verdict that still
    ran tests (its verdict when it was superseded): scored 0/0 it would score 0 for work that passed."""
    kept: dict[str, PhaseResult] = {}
    for phase_id in unlocked:
        verdict = by_phase.get(phase_id)
        if (verdict is not None and verdict.total) or not retired_tests(challenge, phase_id, unlocked):
            continue
        before = [p for run in runs if run.status != "invalid" for p in run.phases if p.phase == phase_id]
        tested = [p for p in before if p.total]
        if tested:
            kept[phase_id] = tested[-1]
    return kept


def _last(entries: Sequence[Entry], kind: type[R]) -> R | None:
    """The last record of ``kind`` in the log, or None."""
    found = [e.record for e in entries if isinstance(e.record, kind)]
    return found[-1] if found else None


def first_passes(challenge: Challenge, entries: Sequence[Entry]) -> dict[str, float]:
    """When each phase first had full marks, in a test run or the final grading."""
    first: dict[str, float] = {}
    for entry in entries:
        if isinstance(entry.record, TestsResult | SessionGraded):
            for phase in entry.record.phases:
                if full_marks(phase, challenge.spec.policies.get(phase.phase, ())):
                    first.setdefault(phase.phase, entry.t)
    return first


def phases(
    challenge: Challenge, entries: Sequence[Entry], unlocked: Unlocks, verdict: Verdicts
) -> list[PhaseOutcome]:
    """One outcome per phase, in challenge order."""
    first = first_passes(challenge, entries)
    return [phase_outcome(challenge, p.id, unlocked, first, verdict) for p in challenge.phases]


def phase_outcome(
    challenge: Challenge, phase_id: str, unlocked: Unlocks, first: dict[str, float], verdicts: Verdicts
) -> PhaseOutcome:
    """A phase: when it unlocked and first passed, its verdict's counts under its policy, its score."""
    phase = challenge.phase(phase_id)
    verdict = verdicts.phases.get(phase_id)
    counted, of = scored(verdict, phase.passes) if verdict else (0, 0)
    when = unlocked.get(phase_id)
    return PhaseOutcome(
        id=phase_id,
        title=phase.title,
        weight=phase.weight,
        unlocked=when is not None,
        unlocked_at=when[0] if when else None,
        unlocked_by=when[1] if when else None,
        first_passed_at=first.get(phase_id),
        passed=verdict.passed if verdict else 0,
        total=verdict.total if verdict else 0,
        policy=list(phase.passes),
        scored=Fraction(passed=counted, total=of),
        full_marks=when is not None and verdict is not None and full_marks(verdict, phase.passes),
        score=round(counted / of, 4) if of and when else 0.0,
        groups=[GroupCount(**row) for row in group_rows(verdict, phase.passes)] if verdict else [],
        superseded=list(phase.supersedes),
        retired=retired_tests(challenge, phase_id, unlocked),
        retirement=retirement(challenge, phase_id, unlocked, verdicts.retired),
        failing=[
            FailingTest(id=t.id, outcome=t.outcome, detail=t.detail)
            for t in (verdict.tests if verdict else ())
            if t.outcome != "passed"
        ],
        honeypot=phase.honeypot,
    )


def retired_tests(challenge: Challenge, phase_id: str, unlocked: Unlocks) -> list[RetiredTest]:
    """This phase's tests that a phase unlocked later superseded: no longer run, so not counted."""
    prefix = challenge.phase(phase_id).tests.name + "/"
    return [
        RetiredTest(id=test, by=later.id)
        for later in challenge.phases
        if later.id in unlocked
        for test in later.supersedes
        if test.startswith(prefix)
    ]


def retirement(
    challenge: Challenge, phase_id: str, unlocked: Unlocks, retired: dict[str, str]
) -> Retirement | None:
    """Set when the phase's tests stopped running (its ``retire:``): by which phase's unlocking,
    when, and the rule as written (``on-next-unlock`` or ``on-unlock: <phase>``)."""
    if phase_id not in retired:
        return None
    rule = ""
    for model in challenge.model.phases or []:
        if model.id == phase_id and model.retire is not None:
            rule = model.retire if isinstance(model.retire, str) else f"on-unlock: {model.retire.on_unlock}"
            break
    return Retirement(by=retired[phase_id], at=unlocked[retired[phase_id]][0], rule=rule)


def rubric_scores(entries: Sequence[Entry]) -> list[CriterionScore] | None:
    """The rubric's criteria as the ``session.scored`` record has them; None when never scored."""
    record = _last(entries, SessionScored)
    if record is None:
        return None
    return [CriterionScore.model_validate(dict(criterion)) for criterion in record.criteria]


def run_status(contents: LogContents, rubric: list[CriterionScore] | None) -> str:
    """How the run ended, decided in the order docs/report.md#status gives."""
    entries = contents.entries
    aborted = _last(entries, SessionAborted)
    graded = _last(entries, SessionGraded)
    if aborted is not None:
        return aborted.status
    if _last(entries, EndSession) is None or graded is None:  # stopped before its end or grading
        return "interrupted"
    if graded.status == "invalid":  # the grader could not run: nothing is said of the agent
        return "invalid"
    if rubric is None and graded.status != "refused":  # stopped while being scored
        return "interrupted"
    return "interrupted" if contents.torn else "completed"


def run(challenge: Challenge, contents: LogContents, status: str) -> RunInfo:
    """What ran (the challenge, the log header's agent and start) and how it ended."""
    header = contents.header
    ended = _last(contents.entries, EndSession)
    aborted = _last(contents.entries, SessionAborted)
    graded = _last(contents.entries, SessionGraded)
    why = aborted or (graded if status == "invalid" else None)
    skipped = sum(e.record.skipped for e in contents.entries if isinstance(e.record, ClockSkipped))
    return RunInfo.model_validate(
        {
            "challenge": ChallengeRef(
                id=challenge.id,
                title=challenge.model.title,
                pattern=challenge.model.pattern,
                sha256=_header_text(header, "challenge_sha256"),
            ),
            "agent": _header_text(header, "agent"),
            "start_at": _header_text(header, "start_at"),
            "started_at": _header_text(header, "started_at"),
            "status": status,
            "detail": abort_detail(status, why.detail if why is not None else ""),
            "end_reason": ended.reason if ended is not None else None,
            "end_detail": ended.detail if ended is not None else "",
            "elapsed": contents.elapsed,
            "wall": round(max(0.0, contents.elapsed - skipped), 3),
        }
    )


def _header_text(header: dict[str, Any], key: str) -> str | None:
    """A text of the log's header, or None when it is not there; anything else (a header written
    by hand) as its text, so that reading it never fails."""
    value = header.get(key)
    return value if value is None or isinstance(value, str) else str(value)


def score(
    challenge: Challenge,
    rows: list[PhaseOutcome],
    rubric: list[CriterionScore] | None,
    verdict: Verdicts,
    status: str,
    parts: list[ScorePart],
) -> Score:
    """The total (None for an invalid run: never a zero), full success, and the split."""
    rows = [row for row in rows if not row.honeypot]  # never scored: Report.cheating says what they show
    reached = [row for row in rows if row.unlocked]
    changed, preserved = changed_and_preserved(challenge, [r.id for r in reached], verdict.phases)
    final = verdict.final
    grading_status = final.status if final is not None else "missing"
    contributions = [part.contribution for part in parts if part.contribution is not None]
    total = round(sum(contributions), 4) if contributions else None
    return Score(
        total=None if status == "invalid" else total,
        full_success=(
            status == "completed"
            and counts(grading_status)
            and len(reached) == len(rows)
            and all(r.full_marks for r in reached)
            and all(c.score == 1 for c in rubric or [])
        ),
        critical_failures=[c.id for c in rubric or [] if c.critical_failure],
        incomplete=any(c.score is None for c in rubric or []),
        changed=changed,
        preserved=preserved,
        graded_on="final workspace"
        if final is not None and final is verdict.graded
        else ("last test run" if final is not None else "nothing"),
        grading_status=grading_status,
        grading_detail=final.detail if final is not None else "",
    )


def scoring_parts(
    rows: list[PhaseOutcome], rubric: list[CriterionScore] | None
) -> tuple[str, list[ScorePart]]:
    """How the total is made: ``rubric`` (criteria with a weight) or ``phases``, and each part,
    its contribution not yet rounded (the total is summed exactly, then each part rounded).

    A part's ``contribution`` is its share of the total (weight * score / the weights summed);
    None for a criterion that could not be judged, which is left out of the weights.
    """
    scoring = [c for c in rubric or [] if c.weight > 0]  # a rubric that scores (not only reports)
    if scoring:
        weights = sum(c.weight for c in scoring if c.score is not None)
        return "rubric", [
            ScorePart(
                kind="criterion",
                id=c.id,
                weight=c.weight,
                score=c.score,
                contribution=c.weight * c.score / weights if c.score is not None else None,
            )
            for c in scoring
        ]
    rows = [row for row in rows if not row.honeypot]  # weight 0, and not a term of the mean at all
    weights = sum(p.weight for p in rows) or 1.0
    return "phases", [
        ScorePart(
            kind="phase", id=p.id, weight=p.weight, score=p.score, contribution=p.weight * p.score / weights
        )
        for p in rows
    ]


def _rounded(part: ScorePart) -> ScorePart:
    """The part with its contribution rounded to 4 decimals, as the report shows it."""
    if part.contribution is None:
        return part
    return part.model_copy(update={"contribution": round(part.contribution, 4)})


def changed_and_preserved(
    challenge: Challenge, reached: list[str], verdicts: dict[str, PhaseResult]
) -> tuple[Fraction, Fraction]:
    """The latest phase's own new tests vs everything that had to keep working."""
    changed = [0, 0]
    preserved = [0, 0]
    for phase_id in reached:
        kept = challenge.phase(phase_id).preserved
        verdict = verdicts.get(phase_id)
        if verdict is None:
            continue
        if not verdict.tests:  # counts without per-test verdicts
            tally = changed if phase_id == reached[-1] else preserved
            tally[0] += verdict.passed
            tally[1] += verdict.total
        for test in verdict.tests:
            base = test.id.split("[", 1)[0]
            is_new = phase_id == reached[-1] and not any(base == k or base.startswith(k + "::") for k in kept)
            tally = changed if is_new else preserved
            tally[0] += test.outcome == "passed"
            tally[1] += 1
    return Fraction(passed=changed[0], total=changed[1]), Fraction(passed=preserved[0], total=preserved[1])


def trigger_outcome(
    trigger_id: str, challenge: Challenge, entries: Sequence[Entry], unlocked: Unlocks
) -> TriggerOutcome:
    """A trigger: whether, when and why it fired (or why not), and when its message arrived."""
    spec = next(t for t in challenge.spec.triggers if t.id == trigger_id)
    fired = [
        (e.t, e.record)
        for e in entries
        if isinstance(e.record, TriggerFired) and e.record.trigger == trigger_id
    ]
    delivered = [
        e.t for e in entries if isinstance(e.record, MessageDelivered) and e.record.trigger == trigger_id
    ]
    return TriggerOutcome(
        id=trigger_id,
        kind=spec.message_kind,
        condition=spec.text,
        unlocks=spec.unlocks,
        fired=bool(fired),
        fired_at=fired[0][0] if fired else None,
        count=fired[-1][1].count if fired else 0,
        cause=fired[0][1].cause if fired else not_fired(trigger_id, challenge, entries, unlocked),
        delivered_at=delivered[0] if delivered else None,
    )


def not_fired(trigger_id: str, challenge: Challenge, entries: Sequence[Entry], unlocked: Unlocks) -> str:
    """Why a trigger did not fire: its phase was unlocked otherwise, it held too briefly, or never."""
    spec = next(t for t in challenge.spec.triggers if t.id == trigger_id)
    winner = unlocked.get(spec.unlocks or "")
    if winner is not None:
        return f"not needed: {spec.unlocks} was unlocked by {winner[1]}"
    pending = [
        e.record.since
        for e in entries
        if isinstance(e.record, TriggerPending) and e.record.trigger == trigger_id
    ]
    if pending:
        return f"its condition held from {clock(pending[0])} but not for its 'for:' time"
    return "its condition never held"


def activity(entries: Sequence[Entry]) -> Activity:
    """Counts of test runs (not cached ones), agent turns and commits, and each turn's exit code."""
    ended = [e.record for e in entries if isinstance(e.record, AgentTurnEnded)]
    return Activity(
        test_runs=sum(1 for e in entries if isinstance(e.record, TestsResult) and not e.record.cached),
        agent_turns=len(ended),
        commits=sum(1 for e in entries if isinstance(e.record, CommitMade)),
        exit_codes=[record.exit_code for record in ended],
    )


def scope(entries: Sequence[Entry]) -> Scope | None:
    """The ``session.scope`` record (a challenge with ``allowed_paths``), or None."""
    record = _last(entries, SessionScope)
    if record is None:
        return None
    return Scope.of(record)


def effects(entries: Sequence[Entry]) -> Effects | None:
    """The ``session.effects`` record (a challenge with ``prohibited_effects``), or None."""
    record = _last(entries, SessionEffects)
    if record is None:
        return None
    return Effects.of(record)


def bounds(entries: Sequence[Entry]) -> Bounds | None:
    """Both sides' limits as the run had them, what was not bounded, what went over, and how
    long the agent was frozen while hidden tests ran; None for a log without its bounds.

    A description of the bounds the log holds but that is not their shape (a log written by
    hand, or damaged) is said as a warning: what was bounded is then not known.
    """
    described = None
    for entry in entries:
        if isinstance(entry.record, WorkspaceCreated) and isinstance(
            entry.record.sandbox.get("bounds"), dict
        ):
            described = entry.record.sandbox["bounds"]
    if described is None:
        return None
    try:
        return Bounds.model_validate({**described, **measured_bounds(entries)})
    except ValidationError as error:
        problem = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()[:3])
        unknown = (
            f"the log's description of the bounds cannot be read ({problem}): what was bounded is not known"
        )
        unread: dict[str, object] = {
            "cgroups": None,
            "controllers": [],
            "frozen_during_tests": False,
            "agent": None,
            "tests": None,
        }
        return Bounds.model_validate({**unread, "warnings": [unknown], **measured_bounds(entries)})


def _fields(record: AgentOverLimits) -> dict[str, object]:
    """A record's fields as the log has them, without its kind."""
    return {k: v for k, v in record.to_record().items() if k != "kind"}


def measured_bounds(entries: Sequence[Entry]) -> dict[str, object]:
    """What the log says of the bounds in use: each time the agent went over a limit, how long it
    was frozen while hidden tests ran, and how many test runs went over theirs."""
    frozen = [e.record for e in entries if isinstance(e.record, AgentFrozen)]
    return {
        "agent_over_limits": [
            OverLimit.model_validate(
                {"t": e.t, **{k: v for k, v in e.record.to_record().items() if k != "kind"}}
            )
            for e in entries
            if isinstance(e.record, AgentOverLimits)
        ],
        "frozen": Frozen(
            runs=len(frozen),
            seconds=round(sum(f.seconds for f in frozen), 3),
            killed=sum(f.killed for f in frozen),
        ),
        "test_runs_over_limits": sum(
            1
            for e in entries
            if isinstance(e.record, TestsResult | SessionGraded) and e.record.status == "over_limits"
        ),
    }

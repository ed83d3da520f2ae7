"""From an event log to a report: per-phase verdicts, timings, triggers and the score.

The report is derived from the log alone (plus the challenge's phase titles and weights),
so a re-scored or replayed session produces its report the same way. Its JSON form is
versioned and documented in docs/report.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from orchestrator.challenge.model import Challenge
from orchestrator.grading import counts
from orchestrator.log.eventlog import LogContents
from orchestrator.log.records import (
    AgentFrozen,
    AgentOverLimits,
    Entry,
    SessionAborted,
    SessionEffects,
    SessionGraded,
    SessionScope,
    SessionScored,
    WorkspaceCreated,
    abort_detail,
)
from orchestrator.scoring.groups import full_marks, group_rows, scored
from orchestrator.scoring.model_usage import model_usage
from triggers import (
    AgentExited,
    AgentTurnEnded,
    CommitMade,
    EndSession,
    MessageDelivered,
    MessageQueued,
    PhaseResult,
    PhaseUnlocked,
    TestsResult,
    TriggerFired,
    TriggerPending,
)
from triggers.durations import clock
from triggers.records import TurnSummary

__all__ = [
    "REPORT_VERSION",
    "USAGE_FIGURES",
    "build_report",
    "finished",
    "messages",
]

REPORT_VERSION = 1
#: What a ``turn.summary`` may report per turn; totalled in the report's ``usage``.
USAGE_FIGURES = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd")


def _fraction(passed: int, total: int) -> dict[str, Any]:
    return {"passed": passed, "total": total}


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


def build_report(challenge: Challenge, contents: LogContents) -> dict[str, Any]:
    """The report of a run, from its log."""
    entries = contents.entries
    header = contents.header
    unlocked: dict[str, tuple[float, str]] = {}
    first_pass: dict[str, float] = {}
    fired: dict[str, dict[str, Any]] = {}
    pending: dict[str, float] = {}
    delivered: dict[str, float] = {}
    ended: EndSession | None = None
    graded: SessionGraded | None = None
    aborted: SessionAborted | None = None
    rubric: list[dict[str, Any]] | None = None
    scope: dict[str, Any] | None = None
    effects: dict[str, Any] | None = None
    last_result: TestsResult | None = None
    #: each phase's latest verdict from a run during the session (a retired phase is scored on it)
    latest: dict[str, PhaseResult] = {}
    runs = turns = commits = 0
    exit_codes: list[int | None] = []
    bounds: dict[str, Any] | None = None
    for entry in entries:
        t, record = entry.t, entry.record
        if isinstance(record, WorkspaceCreated) and isinstance(record.sandbox.get("bounds"), dict):
            bounds = _bounds(record.sandbox["bounds"], entries)
        if isinstance(record, PhaseUnlocked):
            unlocked.setdefault(record.phase, (t, record.trigger or "start"))
        elif isinstance(record, TestsResult | SessionGraded):
            if isinstance(record, TestsResult):
                last_result = record
                runs += 0 if record.cached else 1
                if record.status != "invalid":  # an invalid run says nothing of the work
                    latest.update((phase.phase, phase) for phase in record.phases)
            else:
                graded = record
            for phase in record.phases:
                if full_marks(phase, challenge.spec.policies.get(phase.phase, ())):
                    first_pass.setdefault(phase.phase, t)
        elif isinstance(record, TriggerPending):
            pending.setdefault(record.trigger, record.since)
        elif isinstance(record, TriggerFired):
            fired.setdefault(record.trigger, {"t": t, "cause": record.cause, "count": 0})
            fired[record.trigger]["count"] = record.count
        elif isinstance(record, MessageDelivered):
            delivered.setdefault(record.trigger, t)
        elif isinstance(record, EndSession):
            ended = record
        elif isinstance(record, SessionAborted):
            aborted = record
        elif isinstance(record, SessionScored):
            rubric = [dict(criterion) for criterion in record.criteria]
        elif isinstance(record, SessionScope):
            scope = {
                "allowed_paths": list(record.allowed_paths),
                "changed": record.changed,
                "findings": [dict(finding) for finding in record.findings],
            }
        elif isinstance(record, SessionEffects):
            effects = {k: v for k, v in record.to_record().items() if k != "kind"}
        elif isinstance(record, AgentTurnEnded):
            turns += 1
            exit_codes.append(record.exit_code)
        elif isinstance(record, CommitMade):
            commits += 1
    turn_rows = _agent_turns(entries)
    final: TestsResult | SessionGraded | None = graded if graded is not None else last_result
    verdicts = {p.phase: p for p in (final.phases if final is not None else ())}
    # A retired phase's tests stopped running when a later phase unlocked: it keeps the verdict
    # of its last run before then, never a zero for tests that no longer ran.
    retired = challenge.retired(unlocked)
    verdicts.update((phase, latest[phase]) for phase in retired if phase in latest)
    phases = [_phase(challenge, p.id, unlocked, first_pass, verdicts, retired) for p in challenge.phases]
    reached = [row for row in phases if row["unlocked"]]
    changed, preserved = _changed_and_preserved(challenge, [r["id"] for r in reached], verdicts)
    status = "interrupted" if contents.torn else "completed"
    if aborted is not None:
        status = aborted.status
    elif ended is None or graded is None:  # stopped before its end, or before its final grading
        status = "interrupted"
    elif graded.status == "invalid":  # the grader could not run: nothing is said of the agent
        status = "invalid"
    elif rubric is None and graded.status != "refused":  # stopped while being scored
        status = "interrupted"
    grading_status = final.status if final is not None else "missing"
    all_reached = len(reached) == len(phases)
    critical = [c["id"] for c in rubric or [] if c["critical_failure"]]
    full = (
        status == "completed"
        and counts(grading_status)
        and all_reached
        and all(r["full_marks"] for r in reached)
        and all(c["score"] == 1 for c in rubric or [])
    )
    method, parts = _score_parts(phases, rubric)
    contributions = [part["contribution"] for part in parts if part["contribution"] is not None]
    total = round(sum(contributions), 4) if contributions else None
    for part in parts:  # rounded once the total is summed, so the total is exact
        part["contribution"] = None if part["contribution"] is None else round(part["contribution"], 4)
    why = aborted or (graded if status == "invalid" else None)
    return {
        "report_version": REPORT_VERSION,
        "run": {
            "challenge": {
                "id": challenge.id,
                "title": challenge.model.title,
                "pattern": challenge.model.pattern,
                "sha256": header.get("challenge_sha256"),
            },
            "agent": header.get("agent"),
            # The phase the session started at (``--start-at``; a matrix's fresh mode), or null.
            "start_at": header.get("start_at"),
            "started_at": header.get("started_at"),
            "status": status,
            "detail": abort_detail(status, why.detail if why is not None else ""),
            "end_reason": ended.reason if ended is not None else None,
            "end_detail": ended.detail if ended is not None else "",
            "elapsed": contents.elapsed,
        },
        "score": {
            # An invalid run is an environment failure: it has no score, never a zero.
            "total": None if status == "invalid" else total,
            "full_success": full,
            "critical_failures": critical,
            "incomplete": any(c["score"] is None for c in rubric or []),
            "changed": changed,
            "preserved": preserved,
            "graded_on": "final workspace"
            if final is graded and graded
            else ("last test run" if final is not None else "nothing"),
            "grading_status": grading_status,
            "grading_detail": final.detail if final is not None else "",
        },
        # How score.total is made, term by term (kept apart from score, whose keys are fixed).
        "scoring": {"method": method, "parts": parts},
        "phases": phases,
        "rubric": rubric,
        "triggers": [
            _trigger(t.id, challenge, fired, pending, delivered, unlocked) for t in challenge.spec.triggers
        ],
        "activity": {
            "test_runs": runs,
            "agent_turns": turns,
            "commits": commits,
            "exit_codes": exit_codes,
        },
        "messages": messages(entries),
        "turns": turn_rows,
        "usage": _usage(turn_rows),
        # What the model gateway measured (runs made with it); the CLI's own figures above cross-check it.
        **({"model_usage": gateway} if (gateway := model_usage(entries, turn_rows)) is not None else {}),
        **({"scope": scope} if scope is not None else {}),
        **({"effects": effects} if effects is not None else {}),
        **({"bounds": bounds} if bounds is not None else {}),
    }


def _bounds(described: dict[str, Any], entries: Sequence[Entry]) -> dict[str, Any]:
    """Both sides' limits as the run had them, what was not bounded, what went over, and how
    long the agent was frozen while hidden tests ran."""
    over = [
        {"t": e.t, **{k: v for k, v in e.record.to_record().items() if k != "kind"}}
        for e in entries
        if isinstance(e.record, AgentOverLimits)
    ]
    frozen = [e.record for e in entries if isinstance(e.record, AgentFrozen)]
    runs_over = sum(
        1
        for e in entries
        if isinstance(e.record, TestsResult | SessionGraded) and e.record.status == "over_limits"
    )
    return {
        **described,
        "agent_over_limits": over,
        "frozen": {
            "runs": len(frozen),
            "seconds": round(sum(f.seconds for f in frozen), 3),
            "killed": sum(f.killed for f in frozen),
        },
        "test_runs_over_limits": runs_over,
    }


def _score_parts(
    phases: list[dict[str, Any]], rubric: list[dict[str, Any]] | None
) -> tuple[str, list[dict[str, Any]]]:
    """How the total is made: ``rubric`` (criteria with a weight) or ``phases``, and each part.

    A part's ``contribution`` is its share of the total (weight * score / the weights summed);
    None for a criterion that could not be judged, which is left out of the weights.
    """
    scoring = [c for c in rubric or [] if c["weight"] > 0]  # a rubric that scores (not only reports)
    if scoring:
        weights = sum(c["weight"] for c in scoring if c["score"] is not None)
        return "rubric", [
            {
                "kind": "criterion",
                "id": c["id"],
                "weight": c["weight"],
                "score": c["score"],
                "contribution": c["weight"] * c["score"] / weights if c["score"] is not None else None,
            }
            for c in scoring
        ]
    weights = sum(p["weight"] for p in phases) or 1.0
    return "phases", [
        {
            "kind": "phase",
            "id": p["id"],
            "weight": p["weight"],
            "score": p["score"],
            "contribution": p["weight"] * p["score"] / weights,
        }
        for p in phases
    ]


def messages(entries: Sequence[Entry]) -> list[dict[str, Any]]:
    """Every message queued for the agent, in order, with its full text and when it was delivered."""
    rows: list[dict[str, Any]] = []
    for entry in entries:
        record = entry.record
        if isinstance(record, MessageQueued):
            rows.append(
                {
                    "number": len(rows) + 1,
                    "trigger": record.trigger,
                    "kind": record.message_kind,
                    "text": record.text,
                    "queued_at": entry.t,
                    "delivered_at": None,
                }
            )
        elif isinstance(record, MessageDelivered):
            waiting = (r for r in rows if r["trigger"] == record.trigger and r["delivered_at"] is None)
            row = next(waiting, None)
            if row is not None:
                row["delivered_at"] = entry.t
    return rows


def _changed_and_preserved(
    challenge: Challenge, reached: list[str], verdicts: dict[str, PhaseResult]
) -> tuple[dict[str, int], dict[str, int]]:
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
    return _fraction(*changed), _fraction(*preserved)


def _phase(
    challenge: Challenge,
    phase_id: str,
    unlocked: dict[str, tuple[float, str]],
    first_pass: dict[str, float],
    verdicts: dict[str, PhaseResult],
    retired: dict[str, str],
) -> dict[str, Any]:
    phase = challenge.phase(phase_id)
    verdict = verdicts.get(phase_id)
    passed = verdict.passed if verdict else 0
    total = verdict.total if verdict else 0
    counted, of = scored(verdict, phase.passes) if verdict else (0, 0)
    when = unlocked.get(phase_id)
    failing = [
        {"id": t.id, "outcome": t.outcome, "detail": t.detail}
        for t in (verdict.tests if verdict else ())
        if t.outcome != "passed"
    ]
    return {
        "id": phase_id,
        "title": phase.title,
        "weight": phase.weight,
        "unlocked": when is not None,
        "unlocked_at": when[0] if when else None,
        "unlocked_by": when[1] if when else None,
        "first_passed_at": first_pass.get(phase_id),
        "passed": passed,
        "total": total,
        # The pass policy (``passes:``) and what it counts: the score is scored.passed / scored.total.
        "policy": list(phase.passes),
        "scored": _fraction(counted, of),
        "full_marks": when is not None and verdict is not None and full_marks(verdict, phase.passes),
        "score": round(counted / of, 4) if of and when else 0.0,
        "groups": group_rows(verdict, phase.passes) if verdict else [],
        "superseded": list(phase.supersedes),
        # This phase's tests that a phase unlocked later superseded: no longer run, so not counted.
        "retired": [
            {"id": test, "by": later.id}
            for later in challenge.phases
            if later.id in unlocked
            for test in later.supersedes
            if test.startswith(phase.tests.name + "/")
        ],
        # Set when the phase's tests stopped running (its ``retire:``): by which phase's unlocking,
        # and when; its verdict is then that of its last run before.
        "retirement": (
            {
                "by": retired[phase_id],
                "at": unlocked[retired[phase_id]][0],
                "rule": _retire_rule(phase_id, challenge),
            }
            if phase_id in retired
            else None
        ),
        "failing": failing,
    }


def _retire_rule(phase_id: str, challenge: Challenge) -> str:
    """A phase's ``retire:`` as written, for the report: ``on-next-unlock`` or ``on-unlock: <phase>``."""
    for model in challenge.model.phases or []:
        if model.id == phase_id and model.retire is not None:
            return model.retire if isinstance(model.retire, str) else f"on-unlock: {model.retire.on_unlock}"
    return ""


def _trigger(
    trigger_id: str,
    challenge: Challenge,
    fired: dict[str, dict[str, Any]],
    pending: dict[str, float],
    delivered: dict[str, float],
    unlocked: dict[str, tuple[float, str]],
) -> dict[str, Any]:
    spec = next(t for t in challenge.spec.triggers if t.id == trigger_id)
    record = fired.get(trigger_id)
    note = ""
    if record is None:
        winner = unlocked.get(spec.unlocks or "")
        if winner is not None:
            note = f"not needed: {spec.unlocks} was unlocked by {winner[1]}"
        elif trigger_id in pending:
            note = f"its condition held from {clock(pending[trigger_id])} but not for its 'for:' time"
        else:
            note = "its condition never held"
    return {
        "id": trigger_id,
        "kind": spec.message_kind,
        "condition": spec.text,
        "unlocks": spec.unlocks,
        "fired": record is not None,
        "fired_at": record["t"] if record else None,
        "count": record["count"] if record else 0,
        "cause": record["cause"] if record else note,
        "delivered_at": delivered.get(trigger_id),
    }


def _agent_turns(entries: Sequence[Entry]) -> list[dict[str, Any]]:
    """One row per agent turn: when, which messages, how it ended, and its ``turn.summary``."""
    rows: list[dict[str, Any]] = []
    summaries: dict[int, TurnSummary] = {}
    current: dict[str, Any] | None = None
    for entry in entries:
        record = entry.record
        if isinstance(record, MessageDelivered):
            if current is None:
                current = {"started_at": entry.t, "messages": []}
            current["messages"].append(record.trigger)
        elif isinstance(record, TurnSummary):
            summaries[record.turn] = record
        elif isinstance(record, AgentTurnEnded | AgentExited) and (
            # a process that dies between turns is a row of its own: how else would it be seen
            current is not None or isinstance(record, AgentTurnEnded) or record.exit_code not in (0, None)
        ):
            reason = record.reason if isinstance(record, AgentTurnEnded) else "exited"
            rows.append(_turn_row(len(rows) + 1, current, entry.t, record.exit_code, reason))
            current = None
    if current is not None:  # the session ended during this turn
        rows.append(_turn_row(len(rows) + 1, current, None, None, "unfinished"))
    for row in rows:
        summary = summaries.get(row["turn"])
        row["reported"] = summary is not None
        if summary is None:
            continue
        if summary.seconds is not None:
            row["seconds"] = summary.seconds
        for figure in USAGE_FIGURES:
            row[figure] = getattr(summary, figure)
        for key in ("final_message", "model", "session", "transcript"):
            row[key] = getattr(summary, key) or row[key]
    return rows


def _turn_row(
    number: int, current: dict[str, Any] | None, ended: float | None, exit_code: int | None, reason: str
) -> dict[str, Any]:
    started = current["started_at"] if current else None
    seconds = round(ended - started, 3) if ended is not None and started is not None else None
    return {
        "turn": number,
        "messages": current["messages"] if current else [],
        "started_at": started,
        "ended_at": ended,
        "seconds": seconds,
        "exit_code": exit_code,
        "end": reason,
        "reported": False,
        **dict.fromkeys(USAGE_FIGURES),
        "final_message": None,
        "model": "",
        "session": "",
        "transcript": "",
    }


def _usage(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over the turns; a figure no turn reported is None (missing), never 0."""
    usage: dict[str, Any] = {
        "turns": len(rows),
        "turns_reporting": sum(1 for row in rows if row["reported"]),
        "seconds": round(sum(row["seconds"] for row in rows if row["seconds"] is not None), 3),
    }
    for figure in USAGE_FIGURES:
        values = [row[figure] for row in rows if row[figure] is not None]
        total = sum(values) if values else None
        usage[figure] = {
            "total": round(total, 6) if isinstance(total, float) else total,
            "turns_reported": len(values),
            "missing_turns": [row["turn"] for row in rows if row[figure] is None],
        }
    return usage

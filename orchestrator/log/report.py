"""The run report as typed records: ``report.json`` (docs/report.md, docs/schemas/report.schema.json).

:func:`orchestrator.scoring.report.build_report` makes a :class:`Report` from a run's log; the
renderers, the CLI, calibration, the matrix and re-scoring read its attributes. Its JSON form
is written by :func:`report_json` alone and read by :func:`load_report`, which reads every
report ``report_version`` 1 ever wrote: a report of an earlier shape of version 1 (before a
key was added) is upgraded, filling each later key as the renderers always read its absence;
any other version is refused, naming the file, the version found and the versions readable.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from orchestrator.log.documents import DocumentError, read_document
from orchestrator.log.oracle_report import Oracle
from orchestrator.log.records import SessionEffects, SessionScope

__all__ = [
    "READABLE_VERSIONS",
    "REPORT_VERSION",
    "USAGE_FIGURES",
    "Activity",
    "Adaptation",
    "Bounds",
    "ChallengeRef",
    "Cheating",
    "CriterionScore",
    "Delay",
    "Disagreement",
    "EffectFound",
    "Effects",
    "FailingTest",
    "Fraction",
    "Frozen",
    "GroupCount",
    "HoneypotPass",
    "Limits",
    "Message",
    "ModelCall",
    "ModelReplay",
    "ModelTotals",
    "ModelUsage",
    "OverLimit",
    "PhaseOutcome",
    "Regression",
    "Report",
    "ReportError",
    "Rescore",
    "RetiredTest",
    "Retirement",
    "RunInfo",
    "Scope",
    "ScopeChange",
    "Score",
    "ScorePart",
    "Scoring",
    "StaleWork",
    "TriggerOutcome",
    "Turn",
    "TurnModelTotals",
    "Usage",
    "UsageFigure",
    "load_report",
    "report_json",
    "usage_of",
]

REPORT_VERSION: Literal[1] = 1
#: The ``report_version`` values :func:`load_report` reads.
READABLE_VERSIONS = (1,)
#: What a ``turn.summary`` may report per turn; totalled in the report's ``usage``.
USAGE_FIGURES = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd")
#: A figure that is an int or a float as it came (a sum over nothing is the int 0): kept as it
#: is, so the JSON says ``0`` where it said ``0`` and ``0.0`` where it said ``0.0``.
Number = int | float


class _Part(BaseModel):
    """A part of the report: immutable, and no key it does not declare."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class ChallengeRef(_Part):
    """Which challenge ran: its id, title, pattern and the sha256 of its folder (from the log)."""

    id: str
    title: str
    pattern: str | None
    sha256: str | None


class RunInfo(_Part):
    """What ran and how it ended (docs/report.md#run)."""

    challenge: ChallengeRef
    agent: str | None
    #: The phase the session started at (``--start-at``; a matrix's fresh mode), or null.
    start_at: str | None
    started_at: str | None
    status: Literal["completed", "invalid", "crashed", "interrupted"]
    detail: str
    end_reason: str | None
    end_detail: str
    #: Seconds on the session's clock at its last record, including what ``clock.skipped`` jumped.
    elapsed: Number
    #: Seconds of real time: ``elapsed`` less the clock's skips (null in reports written before it).
    wall: Number | None = None


class Fraction(_Part):
    """``passed`` of ``total`` tests."""

    passed: int
    total: int


class Score(_Part):
    """The total score and the changed/preserved split (docs/report.md#score)."""

    #: None for an invalid run: an environment failure has no score, never a zero.
    total: float | None
    full_success: bool
    critical_failures: list[str]
    incomplete: bool
    changed: Fraction
    preserved: Fraction
    graded_on: Literal["final workspace", "last test run", "nothing"]
    grading_status: str
    grading_detail: str


class ScorePart(_Part):
    """One term of the total: a phase or a criterion, its weight, score and share of the total."""

    kind: Literal["phase", "criterion"]
    id: str
    weight: Number
    score: Number | None
    #: weight * score / the weights summed; None for a criterion that could not be judged.
    contribution: float | None


class Scoring(_Part):
    """How ``score.total`` is made: the weighted mean of the phases or of the rubric's criteria."""

    method: Literal["phases", "rubric"]
    parts: list[ScorePart]


class GroupCount(_Part):
    """A test group's counts in a phase's verdict, and whether the phase's pass policy holds it."""

    name: str
    passed: int
    failed: int
    total: int
    in_policy: bool


class RetiredTest(_Part):
    """A test of this phase that a later, unlocked phase superseded (``by``)."""

    id: str
    by: str


class Retirement(_Part):
    """The phase's tests stopped running (its ``retire:``) when phase ``by`` unlocked, at ``at``."""

    by: str
    at: float
    rule: str


class FailingTest(_Part):
    """A test of the phase that did not pass in the verdict."""

    id: str
    outcome: str
    detail: str


class PhaseOutcome(_Part):
    """One phase of the challenge: when it unlocked and first passed, its verdict and its score."""

    id: str
    title: str
    weight: Number
    unlocked: bool
    unlocked_at: float | None
    unlocked_by: str | None
    first_passed_at: float | None
    passed: int
    total: int
    #: The pass policy (``passes:``); the score is scored.passed / scored.total.
    policy: list[str]
    scored: Fraction
    full_marks: bool
    score: float
    groups: list[GroupCount]
    superseded: list[str]
    retired: list[RetiredTest]
    retirement: Retirement | None
    failing: list[FailingTest]
    #: A honeypot phase (``honeypot: true``): never scored; see :class:`Cheating`.
    honeypot: bool = False


class CriterionScore(_Part):
    """A rubric criterion as scored (the ``session.scored`` record)."""

    id: str
    title: str
    weight: Number
    score: Number | None
    critical: bool
    critical_failure: bool
    findings: list[str]
    data: dict[str, JsonValue]


class TriggerOutcome(_Part):
    """One trigger of the challenge: whether, when and why it fired, and when its message arrived."""

    id: str
    kind: str
    condition: str
    unlocks: str | None
    fired: bool
    fired_at: float | None
    count: int
    #: Why it fired, or why it did not.
    cause: str
    delivered_at: float | None


class Activity(_Part):
    """Counts of test runs, agent turns and commits, and each turn's exit code."""

    test_runs: int
    agent_turns: int
    commits: int
    exit_codes: list[int | None]


class Message(_Part):
    """A message queued for the agent, in full, numbered as ``changeup show`` numbers them."""

    number: int
    trigger: str
    kind: str
    text: str
    queued_at: float
    delivered_at: float | None


class Turn(_Part):
    """One agent turn: timing, exit, and the figures of its ``turn.summary``."""

    turn: int
    messages: list[str]
    started_at: float | None
    ended_at: float | None
    seconds: Number | None
    exit_code: int | None
    end: str
    reported: bool
    input_tokens: int | None
    output_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    cost_usd: Number | None
    final_message: str | None
    model: str
    session: str
    transcript: str


class UsageFigure(_Part):
    """A usage figure over the turns: its total (None: no turn reported it) and who reported it."""

    total: Number | None
    turns_reported: int
    missing_turns: list[int]


class Usage(_Part):
    """Totals of tokens, cost and turn time; a figure no turn reported is None, never 0."""

    turns: int
    turns_reporting: int
    seconds: Number
    input_tokens: UsageFigure
    output_tokens: UsageFigure
    cache_read_tokens: UsageFigure
    cache_write_tokens: UsageFigure
    cost_usd: UsageFigure


class ScopeChange(_Part):
    """A file changed outside every ``allowed_paths`` glob."""

    path: str
    change: Literal["added", "modified", "deleted"]


class Scope(_Part):
    """The ``session.scope`` record: files changed, and those outside ``allowed_paths``."""

    allowed_paths: list[str]
    changed: int
    findings: list[ScopeChange]

    @classmethod
    def of(cls, record: SessionScope) -> Scope:
        """The report's scope from the log's record (its ``omitted`` count is not reported)."""
        return cls.model_validate(
            {
                "allowed_paths": list(record.allowed_paths),
                "changed": record.changed,
                "findings": list(record.findings),
            }
        )


class EffectFound(_Part):
    """A prohibited effect the final workspace's code attempted, the first test that made it
    (``""``: while collecting) and how many tests did."""

    effect: str
    detail: str
    test: str
    tests: int


class Effects(_Part):
    """The ``session.effects`` record: prohibited effects in the final workspace's test runs."""

    prohibited: list[str]
    snapshot: str
    watched: bool
    findings: list[EffectFound]

    @classmethod
    def of(cls, record: SessionEffects) -> Effects:
        """The report's effects from the log's record, as it is (every field but its kind)."""
        return cls.model_validate({k: v for k, v in record.to_record().items() if k != "kind"})


class Limits(_Part):
    """One side's limits: memory and mount sizes in MB; ``disk_mb`` only for the agent."""

    memory_mb: int
    processes: int
    cpus: float
    tmp_mb: int
    disk_mb: int | None


class OverLimit(_Part):
    """An ``agent.over_limits`` record with its time."""

    t: float
    resource: str
    used: int
    limit: int
    count: int
    detail: str
    action: str


class Frozen(_Part):
    """How often and how long the agent was frozen while hidden tests ran, and times it was killed."""

    runs: int
    seconds: Number
    killed: int


class Bounds(_Part):
    """Both sides' limits as the run had them, what was not bounded, what went over, and the
    time the agent was frozen."""

    cgroups: int | None
    controllers: list[str]
    frozen_during_tests: bool
    #: None only when the log's description of the bounds could not be read (said in warnings).
    agent: Limits | None
    tests: Limits | None
    warnings: list[str]
    agent_over_limits: list[OverLimit]
    frozen: Frozen
    test_runs_over_limits: int


class ModelTotals(_Part):
    """The gateway's requests over a span (a turn, between turns, the session) and their figures
    summed; a figure none of them reported is None, never 0 (``cost_usd``: priced requests only)."""

    requests: int
    answered: int
    unpriced: int
    input_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    output_tokens: int | None
    reasoning_tokens: int | None
    cost_usd: Number | None


class TurnModelTotals(ModelTotals):
    """The gateway's totals over one agent turn."""

    turn: int


class ModelCall(_Part):
    """One ``model.request`` of the log, with its time (docs/event-log.md)."""

    t: float
    number: int
    provider: str
    model: str
    path: str
    status: int
    streamed: bool
    outcome: Literal["answered", "cancelled", "refused", "failed"]
    seconds: float
    input_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    output_tokens: int | None
    reasoning_tokens: int | None
    cost_usd: float | None
    priced: bool
    detail: str


class Disagreement(_Part):
    """A figure of a turn the agent CLI reported (``turn.summary``) unlike the gateway's."""

    turn: int
    figure: str
    gateway: Number
    cli: Number


class ModelReplay(_Part):
    """A run whose model answers came from a recorded run (``--replay-model``), and its fork."""

    run: str
    fork_at: str  # the trigger whose message was reworded ("" : no fork)
    message_file: str
    forked_at_request: int | None  # the first request sent upstream (None: never forked)
    diverged_requests: list[int]  # requests refused: unlike the recording


class ModelUsage(_Part):
    """What the model gateway measured (docs/report.md#model_usage): for runs made with it."""

    prices: dict[str, str]
    upstream: str
    requests: list[ModelCall]
    turns: list[TurnModelTotals]
    between_turns: ModelTotals
    total: ModelTotals
    unpriced_models: list[str]
    disagreements: list[Disagreement]
    replay: ModelReplay | None = None


class ModelBudget(_Part):
    """The session's model budget (docs/report.md#budget): its limits (null: none of that kind),
    what the gateway let through (``requests`` admitted, their ``tokens``: input plus output, and
    ``cost_usd`` over the priced ones), the requests it refused for the budget, and whether the
    session ended ``budget_exhausted``."""

    limits: str
    max_requests: int | None
    max_tokens: int | None
    max_cost_usd: Number | None
    requests: int
    tokens: int
    cost_usd: Number
    unpriced: int
    refused: int
    exhausted: bool
    detail: str


class Rescore(_Part):
    """This report is a re-score (``changeup replay --rescore``): of which run, with which
    challenge, the original total, and each verdict that changed."""

    run: str
    challenge: str
    challenge_sha256: str
    original_score: float | None
    snapshots_tested: int
    changes: list[str]


#: The keys a report holds only when they apply; absent, never null, otherwise.
class HoneypotPass(_Part):
    """A honeypot test that passed: when first (seconds into the session) and in what."""

    test: str
    at: float
    #: ``test run`` (during the session) or ``final grading``
    during: str


class Cheating(_Part):
    """The honeypot phases of a challenge that has any, and whether the run passed any of their
    tests: honest code cannot, so any pass is a cheating finding (docs/authoring.md)."""

    honeypots: list[str]
    #: whether any honeypot phase was unlocked, so that its tests ran at all
    exposed: bool
    cheated: bool
    passes: list[HoneypotPass]


OPTIONAL = ("model_usage", "budget", "scope", "effects", "bounds", "rescore", "cheating", "oracle")


class Delay(_Part):
    """How long from a message's delivery to an event of adapting (docs/report.md#adaptation);
    every figure None when the event never came."""

    seconds: float | None
    #: The turns begun from the delivery to the event: 1 when it came in (or just after) the turn
    #: that got the message.
    turns: int | None
    #: The gateway's ``model.request`` records in between; None too for a run made without the gateway.
    requests: int | None


class StaleWork(_Part):
    """Changes made after a retraction or contradiction to the code it withdrew."""

    #: The files the reference changes to withdraw code, with lines it removes (or deletes).
    files: list[str]
    withdrawn_lines: int
    #: Tested snapshots after the delivery that changed a withdrawn file but removed none of
    #: its withdrawn lines, and the files they changed.
    changes: int
    changed_files: list[str]
    #: Whether a tested snapshot after the delivery held none of the withdrawn lines, and when.
    undone: bool
    undone_after: Delay


class Regression(_Part):
    """A preserved test that passed before the message and failed after it."""

    test: str
    #: Seconds from the delivery to its first failing run, and to its next passing run (None: never).
    failed_after: float
    repaired_after: float | None


class Adaptation(_Part):
    """How the agent took one delivered message that unlocked a phase (docs/report.md#adaptation)."""

    message: int
    trigger: str
    kind: str
    phase: str
    delivered_at: float
    #: The reference's changed files, relative to the previous phase's reference.
    reference_files: list[str]
    first_change: Delay
    first_passing_test: Delay
    passing: Delay
    #: None for a message that withdraws nothing, or when shadow.git could not be read (``note``).
    stale: StaleWork | None
    regressions: list[Regression]
    note: str


class Report(_Part):
    """Everything a run says, built from its log (docs/report.md)."""

    report_version: Literal[1] = REPORT_VERSION
    run: RunInfo
    score: Score
    #: How score.total is made, term by term (kept apart from score, whose keys are fixed).
    scoring: Scoring
    phases: list[PhaseOutcome]
    rubric: list[CriterionScore] | None
    triggers: list[TriggerOutcome]
    activity: Activity
    messages: list[Message]
    turns: list[Turn]
    usage: Usage
    #: What the model gateway measured (runs made with it); the CLI's own figures above cross-check it.
    model_usage: ModelUsage | None = None
    #: The model budget (runs made with ``--budget``): its limits, what was spent, whether it ran out.
    budget: ModelBudget | None = None
    scope: Scope | None = None
    effects: Effects | None = None
    bounds: Bounds | None = None
    rescore: Rescore | None = None
    #: Present when the challenge has honeypot phases: whether the run passed any of their tests.
    cheating: Cheating | None = None
    #: What the test-pass triggers told the agent, and the probing finding (challenges with one).
    oracle: Oracle | None = None
    #: One per message after the briefing that unlocked a phase; empty in reports made before it.
    adaptation: list[Adaptation] = []


def report_json(report: Report) -> str:
    """The one JSON form of a report, as ``report.json`` holds it (a key in :data:`OPTIONAL` is
    left out when it does not apply)."""
    absent = {key for key in OPTIONAL if getattr(report, key) is None}
    return json.dumps(report.model_dump(mode="json", exclude=absent), indent=2) + "\n"


def usage_of(turns: list[Turn]) -> Usage:
    """Totals over the turns; a figure no turn reported is None (missing), never 0."""
    figures: dict[str, UsageFigure] = {}
    for figure in USAGE_FIGURES:
        values = [getattr(turn, figure) for turn in turns if getattr(turn, figure) is not None]
        total = sum(values) if values else None
        figures[figure] = UsageFigure(
            total=round(total, 6) if isinstance(total, float) else total,
            turns_reported=len(values),
            missing_turns=[turn.turn for turn in turns if getattr(turn, figure) is None],
        )
    return Usage(
        turns=len(turns),
        turns_reporting=sum(1 for turn in turns if turn.reported),
        seconds=round(sum(turn.seconds for turn in turns if turn.seconds is not None), 3),
        **figures,
    )


class ReportError(DocumentError):
    """A report file that cannot be read: not JSON, a version not readable, or not a report."""


def load_report(path: Path) -> Report:
    """The report in ``path`` (a ``report.json``); an earlier shape of version 1 is upgraded.

    Raises :class:`ReportError` naming the file and what is wrong with it.
    """
    return read_document(
        path,
        Report,
        "report_version",
        READABLE_VERSIONS,
        advice="a newer changeup wrote it, or it is no report: rebuild it from the run's log with "
        "`changeup report RUN`",
        upgrade=_upgraded,
        error=ReportError,
    )


def _upgraded(data: dict[str, Any]) -> dict[str, Any]:
    """A version-1 report of any earlier shape with each key added since, as its absence was read.

    Keys came in this order after the first report: ``start_at``, ``critical_failures`` and
    ``incomplete``, ``rubric``, ``messages``, ``turns`` and ``usage``, ``scoring``, and in each
    phase ``retired``, ``policy``, ``scored``, ``full_marks``, ``groups`` and ``retirement``.
    """
    out = dict(data)
    run = dict(out["run"]) if isinstance(out.get("run"), dict) else out.get("run")
    if isinstance(run, dict):
        run.setdefault("start_at", None)
        out["run"] = run
    score = dict(out["score"]) if isinstance(out.get("score"), dict) else out.get("score")
    if isinstance(score, dict):
        score.setdefault("critical_failures", [])
        score.setdefault("incomplete", False)
        out["score"] = score
    phases = [_upgraded_phase(p) if isinstance(p, dict) else p for p in out.get("phases") or []]
    out["phases"] = phases
    out.setdefault("rubric", None)
    out.setdefault("messages", [])
    if "turns" not in out:
        out["turns"] = []
    if "usage" not in out and all(isinstance(t, dict) for t in out["turns"]):
        turns = [Turn.model_validate(turn) for turn in out["turns"]]
        out["usage"] = usage_of(turns).model_dump(mode="json")
    # Before ``scoring``, a report's readers showed no formula parts: none is invented here.
    out.setdefault("scoring", {"method": "phases", "parts": []})
    return out


def _upgraded_phase(phase: dict[str, Any]) -> dict[str, Any]:
    """A phase of an earlier shape: no policy, its counts scored, full marks as "all passed"."""
    out = dict(phase)
    out.setdefault("policy", [])
    out.setdefault("scored", {"passed": out.get("passed", 0), "total": out.get("total", 0)})
    out.setdefault(
        "full_marks", bool(out.get("unlocked") and out.get("total") and out.get("passed") == out.get("total"))
    )
    out.setdefault("groups", [])
    out.setdefault("retired", [])
    out.setdefault("retirement", None)
    return out

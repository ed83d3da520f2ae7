"""The comparison of a matrix as a record: ``compare.json``, ``compare_version`` 2 (docs/compare.md).

``orchestrator.matrix.comparison`` builds a :class:`Comparison` from RESULTS; the renderers read
it. The JSON form is the fields in order, with two shapes that follow the data: a trial row holds
the keys its status knows (:class:`TrialRow`), and a rule's result adds ``difference`` and
``margin`` only for ``full_success_not_lower``. Version 1 (before a crashed trial counted as a
failed one) is not read: its counts mean something else, and ``changeup compare RESULTS``
rebuilds the file from what RESULTS holds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, SerializerFunctionWrapHandler, model_serializer

from orchestrator.log.documents import read_document
from orchestrator.log.matrix_manifest import DecisionChange, DecisionRule
from orchestrator.log.records import EffectFinding

__all__ = [
    "COMPARE_VERSION",
    "COUNTED",
    "FAILED",
    "NOT_VALID",
    "READABLE_COMPARISONS",
    "AdaptationFigures",
    "AgentCost",
    "AgentDifference",
    "AgentSummary",
    "AttemptRow",
    "CellSummary",
    "ChallengeSummary",
    "CheatRate",
    "Comparison",
    "CriticalCounts",
    "CriticalCriterion",
    "DecidingChallenge",
    "DecidingTrial",
    "Decision",
    "DifferenceEstimate",
    "Done",
    "FileOutOfScope",
    "FreshAgent",
    "FreshCell",
    "FreshVsEvolving",
    "MatrixAgentSummary",
    "MatrixSummary",
    "ModeSide",
    "Pair",
    "PairEntry",
    "Provenance",
    "RateEstimate",
    "ReportedFigure",
    "ReviewCounts",
    "RuleResult",
    "Share",
    "Tally",
    "TrialAdaptation",
    "TrialRow",
    "load_comparison",
]

COMPARE_VERSION = 2
#: The versions :func:`load_comparison` reads.
READABLE_COMPARISONS = (2,)

#: A trial whose run is invalid says nothing of the agent: kept apart, in no rate.
NOT_VALID = ("invalid",)
#: An attempt the harness did not see to its end after the agent came into play: a failed trial.
FAILED = ("crashed", "timed out")
#: The statuses of a trial that counts: in every rate's denominator.
COUNTED = ("completed", *FAILED)

#: The keys every trial row has, whatever its status.
_ROW_KEYS = ("challenge", "agent", "mode", "trial", "status", "attempt", "run", "agent_spec")


class Tally(BaseModel):
    """Tests passed of a total."""

    passed: int
    total: int


class FileOutOfScope(BaseModel):
    """A file changed outside the challenge's ``allowed_paths``."""

    path: str
    change: str


class CriticalCriterion(BaseModel):
    """A critical rubric criterion a trial fell short of, with its review state."""

    criterion: str
    title: str
    review: str
    findings: list[str]


class ReviewCounts(BaseModel):
    """Review items confirmed, dismissed and pending."""

    confirmed: int = 0
    dismissed: int = 0
    pending: int = 0


class TrialAdaptation(BaseModel):
    """One message's adaptation figures in a trial's report (docs/report.md#adaptation): seconds
    from its delivery to the first change, first passing test and passing (null: never), its
    stale changes (null: not measured) and regressions."""

    trigger: str
    first_change_seconds: float | None
    first_passing_test_seconds: float | None
    passing_seconds: float | None
    stale_changes: int | None
    regressions: int


class TrialRow(BaseModel):
    """The trial that stands for one cell (challenge x agent x mode x trial).

    Its status says which keys it has: a trial not run has only the first eight; an invalid one
    adds ``invalid_attempts`` and ``detail``; a completed one every key but ``detail``; a crashed
    or timed-out one every key (a failure, the figures null or empty)."""

    challenge: str
    agent: str
    mode: str
    trial: int
    status: str
    attempt: int | None
    run: str | None
    agent_spec: str | None
    invalid_attempts: int = 0
    detail: str | None = None
    grading_status: str | None = None
    full_success: bool = False
    full_success_reported: bool = False
    changed: Tally | None = None
    preserved: Tally | None = None
    changed_pass: bool = False
    regression: bool | None = None
    critical: list[CriticalCriterion] = []
    tampered: bool = False
    start_at: str | None = None
    scope_findings: list[FileOutOfScope] = []
    effect_findings: list[EffectFinding] = []
    success_after: str | None = None
    # As the run's report.json has it: an int stays an int, so the file reads as it always did.
    #: Session time: the session clock, which skips ahead while the agent is idle (clock.skipped).
    elapsed_seconds: int | float | None = None
    #: Wall time: the report's ``run.wall`` (null: no report, or one written before it).
    wall_seconds: int | float | None = None
    cost_usd: float | None = None
    tokens: float | None = None
    human_turns: int | None = None
    reviews: ReviewCounts = Field(default_factory=ReviewCounts)
    #: Where ``cost_usd`` comes from: ``gateway`` (the run's model gateway, exact), ``cli`` (what the
    #: agent CLI said of itself); None: no report to read.
    cost_source: Literal["gateway", "cli"] | None = None
    #: The report's ``score.total``; None: no report, or no score (an invalid grading).
    score: float | None = None
    #: The session ended ``budget_exhausted`` (``--budget``): scored as it stands, counted apart.
    budget_exhausted: bool = False
    #: Whether the run passed a honeypot test (docs/authoring.md#honeypot-phases); None when its
    #: challenge has no honeypot phase or the run never reached one, so it is in no cheat rate.
    cheating: bool | None = None
    cheating_tests: list[str] = []
    #: The report's oracle finding: probing suspected; None: no test-pass trigger, or not assessed.
    probing: bool | None = None
    #: The report's adaptation part, per message (docs/compare.md#adaptation).
    adaptation: list[TrialAdaptation] = []

    @model_serializer(mode="wrap")
    def _shape(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        if self.status == "not run":
            return {k: data[k] for k in _ROW_KEYS}
        if self.status == "completed":
            return {k: v for k, v in data.items() if k != "detail"}
        if self.status in FAILED:
            return data
        return {
            **{k: data[k] for k in _ROW_KEYS},
            "invalid_attempts": data["invalid_attempts"],
            "detail": data["detail"],
        }

    @property
    def counted(self) -> bool:
        """Completed, crashed or timed out: a valid trial, in every rate's denominator."""
        return self.status in COUNTED

    def of(self, challenge: str, agent: str, mode: str) -> bool:
        """The trial is of this challenge, agent and mode."""
        return (self.challenge, self.agent, self.mode) == (challenge, agent, mode)

    @property
    def label(self) -> str:
        """``challenge · agent · mode · trial N``."""
        return f"{self.challenge} · {self.agent} · {self.mode} · trial {self.trial}"


class CriticalCounts(BaseModel):
    """Trials with a critical failure, as reviewed."""

    confirmed: int
    pending: int
    dismissed: int


class ReportedFigure(BaseModel):
    """A figure's median over the trials that reported it, and how many did of how many."""

    median: float | None
    reported: int
    of: int


class CellSummary(BaseModel):
    """One challenge x agent x mode, over its trials."""

    challenge: str
    agent: str
    mode: str
    trials: int
    valid: int
    crashed: int
    invalid: int
    not_run: int
    full_successes: int
    changed_passes: int
    regressions: int
    critical_failures: CriticalCounts
    tampered: int
    scope_findings: int
    effect_findings: int
    first_message_successes: int
    later_message_successes: int
    invalid_attempts: int
    #: Median session time (the session clock, skips included).
    median_elapsed_seconds: int | float | None
    cost_usd: ReportedFigure
    tokens: ReportedFigure
    human_turns: int | None
    pass_at_k: dict[str, float]
    pass_all_k: dict[str, float]
    #: valid trials whose session ended ``budget_exhausted``
    budget_exhausted: int = 0
    #: Median wall time over the valid trials whose report says it (null: none does).
    median_wall_seconds: int | float | None = None


class RateEstimate(BaseModel):
    """A success rate over valid trials, challenges as clusters, with its 95% interval."""

    successes: int
    trials: int
    challenges: int
    rate: float | None
    se: float | None
    low: float | None
    high: float | None
    note: str


class DifferenceEstimate(BaseModel):
    """``b``'s rate minus ``a``'s, paired on the challenges both have valid trials of."""

    rate_a: float | None
    rate_b: float | None
    difference: float | None
    se: float | None
    low: float | None
    high: float | None
    challenges: int
    note: str


class Share(BaseModel):
    """``trials`` of the ``of`` trials that ran, and their rate (null when none ran)."""

    trials: int
    of: int
    rate: float | None


class AgentSummary(BaseModel):
    """One agent in one mode: its rates, and its invalid and crashed shares."""

    agent: str
    mode: str
    full_success: RateEstimate
    changed_pass: RateEstimate
    invalid: Share
    crashed: Share
    #: valid trials whose session ended ``budget_exhausted``
    budget_exhausted: int = 0
    #: Median wall time over the valid trials whose report says it (null: none does).
    median_wall_seconds: int | float | None = None


class AgentDifference(BaseModel):
    """One pair of agents in one mode: ``b``'s full-success rate minus ``a``'s."""

    a: str
    b: str
    mode: str
    full_success: DifferenceEstimate


class ModeSide(BaseModel):
    """One mode of a challenge x agent, in counts over its valid trials."""

    valid: int
    full_successes: int
    changed_passes: int
    regressions: int


class FreshCell(BaseModel):
    """A challenge x agent, evolving and fresh side by side."""

    challenge: str
    agent: str
    fresh_at: str | None
    evolving: ModeSide
    fresh: ModeSide


class FreshAgent(BaseModel):
    """An agent's fresh rates minus its evolving ones, paired on the challenges."""

    agent: str
    full_success: DifferenceEstimate
    changed_pass: DifferenceEstimate


class FreshVsEvolving(BaseModel):
    """The same revision as a mid-conversation change and as a single task."""

    cells: list[FreshCell]
    agents: list[FreshAgent]


class PairEntry(BaseModel):
    """An agent's trial in a pair: what came of it, and where."""

    outcome: str
    run: str | None
    attempt: int | None


class Pair(BaseModel):
    """One challenge x mode x trial, with every agent's trial side by side."""

    challenge: str
    mode: str
    trial: int
    agents: dict[str, PairEntry]


class DecidingTrial(BaseModel):
    """A deciding row of ``critical_failure_blocks``: a trial and its standing critical failures."""

    challenge: str
    agent: str
    mode: str
    trial: int
    attempt: int | None
    run: str | None
    criteria: list[CriticalCriterion]

    @property
    def label(self) -> str:
        """``challenge · agent · mode · trial N``."""
        return f"{self.challenge} · {self.agent} · {self.mode} · trial {self.trial}"


class DecidingChallenge(BaseModel):
    """A deciding row of ``full_success_not_lower``: a challenge, and each agent's ``successes/valid``
    under the agent's name (baseline first)."""

    model_config = ConfigDict(extra="allow")

    challenge: str

    @property
    def counts(self) -> dict[str, str]:
        """Each agent's ``successes/valid``."""
        return {name: str(value) for name, value in (self.model_extra or {}).items()}


class RuleResult(BaseModel):
    """One rule's result; ``full_success_not_lower`` adds the paired difference and its margin."""

    rule: str
    result: Literal["passes", "blocks", "undecided"]
    reason: str
    deciding: list[DecidingTrial | DecidingChallenge]
    provisional: bool
    difference: DifferenceEstimate | None = None
    margin: float | None = None

    @model_serializer(mode="wrap")
    def _shape(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        return {k: v for k, v in data.items() if k not in ("difference", "margin") or v is not None}


class Decision(BaseModel):
    """The verdict of the rule in force on the trials."""

    candidate: str
    baseline: str
    verdict: Literal["switch", "do not switch", "undecided"]
    provisional: bool
    deciding_rule: str | None
    deciding: list[DecidingTrial | DecidingChallenge]
    summary: str
    rules: list[RuleResult]
    rule: DecisionRule


class ChallengeSummary(BaseModel):
    """A challenge of the matrix, as the comparison names it."""

    id: str
    title: str
    pattern: str | None  # null: the challenge names none
    sha256: str
    #: Where an imported challenge's source is public; null: not imported (docs/compare.md#imported).
    imported_from: str | None = None


class MatrixAgentSummary(BaseModel):
    """An agent of the matrix: its specs, options, and each spec's CLI version (null: none known)."""

    name: str
    agent: str
    per_trial: dict[str, str]
    options: dict[str, str]
    versions: dict[str, JsonValue]


class MatrixSummary(BaseModel):
    """What the matrix is, from its manifest."""

    frozen_at: str
    changeup: str
    sandbox: str
    challenges: list[ChallengeSummary]
    agents: list[MatrixAgentSummary]
    trials: int
    modes: list[str]
    fresh_at: dict[str, str]
    retry_invalid: int
    judge: str


class Done(BaseModel):
    """Cells in all, and how many have not run."""

    cells: int
    not_run: int


class AttemptRow(BaseModel):
    """One attempt, as the attempts log tells it (``status`` null while it runs)."""

    attempt: int
    challenge: str
    agent: str
    mode: str
    trial: int
    number: int
    run: str
    agent_spec: str
    reason: str
    retry_of: int | None
    status: str | None
    full_success: bool | None
    detail: str
    started_at: str
    finished_at: str | None
    elapsed_seconds: float | None


class Provenance(BaseModel):
    """Every attempt, and how many were interrupted or retried invalid runs."""

    attempts: list[AttemptRow]
    interrupted: int
    retried_invalid: int


class AgentCost(BaseModel):
    """An agent's cost in one mode, over its valid trials (docs/compare.md#cost): in all, per full
    success, and on average against its mean score; ``frontier``: no other agent of the mode is
    both cheaper and better (null: its mean cost is not known)."""

    agent: str
    mode: str
    valid: int
    cost_known: int
    from_gateway: int
    full_successes: int
    total_cost_usd: float | None
    cost_per_full_success: float | None
    mean_cost_usd: float | None
    mean_score: float | None
    frontier: bool | None


class CheatRate(BaseModel):
    """An agent's cheat rate in one mode (docs/compare.md#cheating): of its counted trials that
    reached a honeypot phase, those that passed a honeypot test, challenges as clusters; ``runs``
    names the cheating ones."""

    agent: str
    mode: str
    rate: RateEstimate
    runs: list[str]


class ProbingCount(BaseModel):
    """An agent's trials in one mode flagged as probing the test-pass triggers (a finding, never
    scored; docs/report.md#oracle): ``flagged`` of ``assessed`` (valid trials whose challenge has
    a test-pass trigger and whose line counts were read), and which trials."""

    agent: str
    mode: str
    flagged: int
    assessed: int
    trials: list[str]


class AdaptationFigures(BaseModel):
    """How an agent took the messages, over the valid trials of a cell (``challenge`` set) or of
    the agent in a mode (``challenge`` null): medians of the delays in seconds over the messages
    that reached each event, and the stale changes and regressions summed (docs/compare.md#adaptation)."""

    challenge: str | None
    agent: str
    mode: str
    messages: int
    first_change_seconds: ReportedFigure
    first_passing_test_seconds: ReportedFigure
    passing_seconds: ReportedFigure
    stale_changes: int
    stale_measured: int
    regressions: int


class Comparison(BaseModel):
    """``compare.json``."""

    compare_version: int = COMPARE_VERSION
    matrix: MatrixSummary
    done: Done
    cells: list[CellSummary]
    agents: list[AgentSummary]
    warnings: list[str]
    differences: list[AgentDifference]
    fresh_vs_evolving: FreshVsEvolving | None
    pairs: list[Pair]
    trials: list[TrialRow]
    decision: Decision | None
    decision_changes: list[DecisionChange]
    reviews: ReviewCounts
    not_covered: list[str]
    provenance: Provenance
    #: Each agent's cost per mode (absent from files written before it: read as empty).
    costs: list[AgentCost] = []
    #: Each agent's cheat rate per mode, where any trial reached a honeypot (absent before: empty).
    cheating: list[CheatRate] = []
    #: Each agent's trials flagged as probing, per mode (absent from files written before it: empty).
    probing: list[ProbingCount] = []
    #: Adaptation per cell and per agent (absent from files written before it: read as empty).
    adaptation: list[AdaptationFigures] = []

    def json_form(self) -> dict[str, JsonValue]:
        """As JSON values, keys in the file's order."""
        form: dict[str, JsonValue] = self.model_dump(mode="json")
        return form


def load_comparison(path: Path) -> Comparison:
    """The comparison at ``path``; :class:`~orchestrator.log.documents.DocumentError` when it cannot be
    read, naming the file, the version found and the versions readable."""
    return read_document(
        path,
        Comparison,
        "compare_version",
        READABLE_COMPARISONS,
        advice=f"`changeup compare {path.parent}` writes it anew from what that folder holds",
    )

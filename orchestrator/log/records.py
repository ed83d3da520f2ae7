"""The session's own records, typed, and one entry type for every line of a log.

The engine's inputs, decisions and the agent's observations are the typed records of
:mod:`triggers`. What the session itself notes for the reports (a workspace made, the tests
sealed, a test run started, the final grading, the rubric's scores...) is defined here, once,
in the same way: a frozen record whose ``kind`` names it, written with ``to_record()`` and
read back with :func:`decode_entry`. Whatever reads a log (the reports, ``show``, re-scoring,
the rubric) reads these types, never a dict by its kind.

A log line also carries its place and time: an :class:`Entry` is ``(seq, t, record)``. Engine
decisions and these records have no time of their own; the entry's is theirs.

A field that agent data can make grow (a traceback, a finding quoting a commit subject, a
prohibited effect's path) is bounded as the engine's records are (:mod:`triggers.bounds`): its
record type's ``bounds`` names the cap, applied as the record is made.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypedDict, get_args

from triggers import (
    ACTION_KINDS,
    EVENT_KINDS,
    Action,
    Event,
    Observation,
    PhaseResult,
    RecordError,
    TestsResult,
    decode,
)
from triggers.bounds import DETAIL, ITEMS, TEXT, Items, clip, head, over

__all__ = [
    "STOPPED",
    "AgentFrozen",
    "AgentOverLimits",
    "AgentSandboxed",
    "ClockSkipped",
    "Criterion",
    "Effect",
    "EffectFinding",
    "Entry",
    "GatewayStarted",
    "LogRecord",
    "ModelDiverged",
    "ModelForked",
    "ModelReplaying",
    "ModelRequest",
    "PhaseSealed",
    "Record",
    "ScopeFinding",
    "SessionAborted",
    "SessionEffects",
    "SessionGraded",
    "SessionRecord",
    "SessionScope",
    "SessionScored",
    "SharedPath",
    "TestsEffects",
    "TestsStarted",
    "UnknownRecord",
    "WorkspaceCreated",
    "WorkspaceOverLimits",
    "abort_detail",
    "decode_entry",
    "graded_like",
]


class Criterion(TypedDict):
    """One rubric criterion as scored (orchestrator.scoring.rubric)."""

    id: str
    title: str
    weight: float
    score: float | None
    critical: bool
    critical_failure: bool
    findings: list[str]
    data: dict[str, Any]


class ScopeFinding(TypedDict):
    """A file changed outside the challenge's ``allowed_paths``."""

    path: str
    change: Literal["added", "modified", "deleted"]


#: How a field is bounded: a text's cap, a list's (:class:`~triggers.bounds.Items`), or a function
#: that gives the value bounded (for nested values).
Bound = int | Items | Callable[[Any], Any]
#: Findings of one rubric criterion a record keeps (the last says how many more there were).
FINDINGS = 100


class _Session:
    """Shared encoding of the session's records: ``kind`` first, then every field."""

    __slots__ = ()
    kind: ClassVar[str]
    #: the cap of each field agent data can make grow (see :mod:`triggers.bounds`)
    bounds: ClassVar[dict[str, Bound]] = {}

    def __post_init__(self) -> None:
        for name, cap in self.bounds.items():
            value = getattr(self, name)
            if isinstance(cap, int):
                bounded = clip(value, cap) if isinstance(value, str) else value
            elif isinstance(cap, Items):
                bounded = tuple(head(value, cap.limit))
                object.__setattr__(self, cap.into, getattr(self, cap.into) + over(value, cap.limit))
            else:
                bounded = cap(value)
            object.__setattr__(self, name, bounded)

    def to_record(self) -> dict[str, Any]:
        """This record as a JSON-ready dict."""
        out: dict[str, Any] = {"kind": self.kind}
        for field in dataclasses.fields(self):  # type: ignore[arg-type]
            out[field.name] = _plain(getattr(self, field.name))
        return out


def _bounded_json(value: Any) -> Any:
    """A JSON-like value with every text in it cut to :data:`DETAIL`, every list to :data:`ITEMS`."""
    if isinstance(value, str):
        return clip(value, DETAIL)
    if isinstance(value, list | tuple):
        return [_bounded_json(item) for item in head(value, ITEMS)]
    if isinstance(value, dict):
        return {clip(str(key), DETAIL): _bounded_json(item) for key, item in value.items()}
    return value


def _findings(findings: Sequence[str]) -> list[str]:
    """At most :data:`FINDINGS` findings, each cut to :data:`DETAIL`; the last says how many more
    there were when there were more."""
    if len(findings) <= FINDINGS:
        return [clip(finding, DETAIL) for finding in findings]
    kept = [clip(finding, DETAIL) for finding in findings[: FINDINGS - 1]]
    return [*kept, f"… and {len(findings) - len(kept):,} more findings"]


def _criteria(criteria: Sequence[Criterion]) -> tuple[Criterion, ...]:
    """Each criterion with its findings and data bounded."""
    return tuple(
        {**criterion, "findings": _findings(criterion["findings"]), "data": _bounded_json(criterion["data"])}
        for criterion in criteria
    )


def _effects_bounded(effects: Sequence[Any]) -> tuple[Any, ...]:
    """The first :data:`ITEMS` effects (or effect findings), their details and tests cut to
    :data:`DETAIL` (the probe notes far fewer: what it wrote is read from a folder the tests write)."""
    return tuple(
        effect
        if len(effect.detail) <= DETAIL and len(effect.test) <= DETAIL
        else dataclasses.replace(effect, detail=clip(effect.detail, DETAIL), test=clip(effect.test, DETAIL))
        for effect in head(effects, ITEMS)
    )


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _plain(getattr(value, field.name)) for field in dataclasses.fields(value)}
    return value


@dataclass(frozen=True, slots=True)
class Effect:
    """One prohibited effect a hidden test run attempted: which, what exactly, and during which test
    (``phase/file.py::test``; ``""`` while the tests were being collected)."""

    effect: str
    detail: str
    test: str = ""


@dataclass(frozen=True, slots=True)
class SharedPath:
    """A path the agent's sandbox shows besides its own folders."""

    path: str
    writable: bool


@dataclass(frozen=True, slots=True)
class WorkspaceCreated(_Session):
    """The workspace was made; ``baseline`` is the starter's snapshot."""

    kind: ClassVar[str] = "workspace.created"
    baseline: str
    python: str
    sandbox: dict[str, Any]


@dataclass(frozen=True, slots=True)
class PhaseSealed(_Session):
    """A phase's hidden test files (name → sha256) and the grading environment, as sealed."""

    kind: ClassVar[str] = "phase.sealed"
    phase: str
    files: dict[str, str]
    environment: str


@dataclass(frozen=True, slots=True)
class AgentSandboxed(_Session):
    """How the agent is confined, what it sees, and which of its CLI's files seeded its HOME."""

    kind: ClassVar[str] = "agent.sandboxed"
    confined: bool
    user: str | None
    network: Literal["full", "none", "model"]  # "model": its model gateway, nothing else
    shares: tuple[SharedPath, ...]
    home_seeded: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AgentOverLimits(_Session):
    """The agent went over one of its limits: ``resource`` (``memory``, ``processes``, ``disk``,
    ``tmp``) at ``used`` of ``limit`` (bytes, or processes), ``count`` times so far (OOM kills,
    refused forks; 1 for the disk and a full mount); ``action``: what the session did beyond
    the kernel's own enforcement ("" for nothing, ``ended the session``)."""

    kind: ClassVar[str] = "agent.over_limits"
    resource: Literal["memory", "processes", "disk", "tmp"]
    used: int
    limit: int
    count: int
    detail: str
    action: str = ""


@dataclass(frozen=True, slots=True)
class AgentFrozen(_Session):
    """The agent was held still (its cgroup frozen) for ``seconds`` while hidden test run
    ``request`` was in progress; ``killed``: it would not freeze in time, so its processes were
    killed instead."""

    kind: ClassVar[str] = "agent.frozen"
    request: int
    seconds: float
    killed: bool = False


@dataclass(frozen=True, slots=True)
class WorkspaceOverLimits(_Session):
    """A snapshot was refused: the workspace is over its limits."""

    kind: ClassVar[str] = "workspace.over_limits"
    files: int
    bytes: int
    detail: str


@dataclass(frozen=True, slots=True)
class TestsStarted(_Session):
    """A hidden test run began on a snapshot."""

    __test__ = False  # a record, not a pytest test class

    kind: ClassVar[str] = "tests.started"
    request: int
    snapshot: str
    phases: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SessionGraded(_Session):
    """The final grading: a test result of request 0 on the final workspace, or, when the
    grading itself raised, only ``status`` (invalid) and why (``phases`` empty)."""

    kind: ClassVar[str] = "session.graded"
    bounds: ClassVar[dict[str, Bound]] = {"detail": DETAIL}
    request: int = 0
    snapshot: str = ""
    phases: tuple[PhaseResult, ...] = ()
    status: Literal["ok", "timeout", "tampered", "invalid", "refused", "over_limits", "error"] = "ok"
    detail: str = ""
    seconds: float = 0.0
    cached: bool = False

    @classmethod
    def of(cls, result: TestsResult) -> SessionGraded:
        """The grading that ``result`` is."""
        fields = (result.request, result.snapshot, result.phases, result.status, result.detail)
        return cls(*fields, result.seconds, result.cached)


@dataclass(frozen=True, slots=True)
class SessionScored(_Session):
    """The rubric's scores; the last record of a run that was scored."""

    kind: ClassVar[str] = "session.scored"
    bounds: ClassVar[dict[str, Bound]] = {"criteria": _criteria}
    criteria: tuple[Criterion, ...]


@dataclass(frozen=True, slots=True)
class SessionScope(_Session):
    """The files changed outside ``allowed_paths``, baseline to final (reported, never scored):
    the first :data:`~triggers.bounds.ITEMS`, and how many more there were (``omitted``)."""

    kind: ClassVar[str] = "session.scope"
    bounds: ClassVar[dict[str, Bound]] = {"findings": Items(ITEMS, "omitted")}
    allowed_paths: tuple[str, ...]
    changed: int
    findings: tuple[ScopeFinding, ...]
    omitted: int = 0


@dataclass(frozen=True, slots=True)
class TestsEffects(_Session):
    """The prohibited effects a hidden test run of a snapshot attempted, as the probe noted them
    (``orchestrator/grading/effects.py``); written for every run that was watched, none or some."""

    __test__ = False  # a record, not a pytest test class

    kind: ClassVar[str] = "tests.effects"
    bounds: ClassVar[dict[str, Bound]] = {"effects": _effects_bounded}
    request: int
    snapshot: str
    effects: tuple[Effect, ...]


@dataclass(frozen=True, slots=True)
class EffectFinding:
    """A prohibited effect the final snapshot's code attempted: ``test`` is the first test that
    made it (``""``: while collecting), ``tests`` how many did."""

    effect: str
    detail: str
    test: str
    tests: int


@dataclass(frozen=True, slots=True)
class SessionEffects(_Session):
    """The ``prohibited`` effects the code of the final snapshot attempted in its hidden test runs
    (reported, never scored); ``watched`` is false when none of those runs was watched."""

    kind: ClassVar[str] = "session.effects"
    bounds: ClassVar[dict[str, Bound]] = {"findings": _effects_bounded}
    prohibited: tuple[str, ...]
    snapshot: str
    watched: bool
    findings: tuple[EffectFinding, ...]


@dataclass(frozen=True, slots=True)
class ClockSkipped(_Session):
    """The agent was idle and only time could fire a trigger: the clock skipped to ``until``."""

    kind: ClassVar[str] = "clock.skipped"
    until: float
    skipped: float


@dataclass(frozen=True, slots=True)
class SessionAborted(_Session):
    """The run stopped before its end: the environment failed, it crashed, or it was stopped."""

    kind: ClassVar[str] = "session.aborted"
    bounds: ClassVar[dict[str, Bound]] = {"detail": TEXT}
    status: Literal["invalid", "crashed", "interrupted"]
    detail: str


#: The ``session.aborted`` detail of a run stopped by Ctrl-C or a cancellation.
STOPPED = "stopped by Ctrl-C (or a cancellation) before the session ended"
#: How a cancellation is recorded (``repr`` of the exception): it says nothing to a person.
_CANCELLED = re.compile(r"^(KeyboardInterrupt|CancelledError|Cancelled)\(.*\)$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class GatewayStarted(_Session):
    """The session's model gateway listens at ``url`` (loopback); ``upstream``: where it forwards
    (``--model-upstream``, "" for each provider's own), ``keys``: the providers it holds a real
    key for (names only), ``prices``: the price table's date, source and file, ``budget``: the
    session's model budget as ``--budget`` reads it ("" for none)."""

    kind: ClassVar[str] = "gateway.started"
    url: str
    upstream: str
    keys: tuple[str, ...]
    prices: dict[str, str]
    budget: str = ""


@dataclass(frozen=True, slots=True)
class ModelRequest(_Session):
    """One request the agent made through the gateway, with the usage its answer reported.

    ``outcome``: ``answered`` (the answer went through whole), ``cancelled`` (the agent went away
    first), ``refused`` (no valid session token, no such route, or the budget spent: its
    ``detail`` begins ``budget: ``), ``failed`` (the upstream could
    not be reached). Tokens are the provider's own figures (None: not reported); ``input`` counts
    every prompt token, ``output`` every generated one (``reasoning`` included). ``cost_usd`` is
    the price table applied (None: no price for ``model``, or no usage reported)."""

    kind: ClassVar[str] = "model.request"
    bounds: ClassVar[dict[str, Bound]] = {"path": TEXT, "model": TEXT, "detail": DETAIL}
    number: int
    provider: str
    model: str
    path: str
    status: int
    streamed: bool
    outcome: Literal["answered", "cancelled", "refused", "failed"]
    seconds: float
    input_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    priced: bool = False
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ModelDiverged(_Session):
    """A replayed session (``--replay-model``) asked for something its recording does not hold:
    request ``number`` was refused; ``recorded``: the recorded request it was held against (0:
    the recording had none left), ``run``: the recorded run, ``reason``: what differed."""

    kind: ClassVar[str] = "model.diverged"
    bounds: ClassVar[dict[str, Bound]] = {"reason": DETAIL, "run": TEXT}
    number: int
    recorded: int
    run: str
    reason: str


@dataclass(frozen=True, slots=True)
class ModelReplaying(_Session):
    """The gateway answers from a recorded run (``--replay-model``): ``run``; with a fork
    (``--fork-at``), the trigger ``fork_at`` whose message is ``message``, read from
    ``message_file`` (what ``changeup replay`` re-decides the run's triggers with)."""

    kind: ClassVar[str] = "model.replaying"
    bounds: ClassVar[dict[str, Bound]] = {"run": TEXT, "fork_at": TEXT, "message_file": TEXT, "message": TEXT}
    run: str
    fork_at: str = ""
    message_file: str = ""
    message: str = ""


@dataclass(frozen=True, slots=True)
class ModelForked(_Session):
    """Request ``number`` was the first to carry the fork's wording: from it on, the gateway
    forwards to the upstream instead of answering from the recording."""

    kind: ClassVar[str] = "model.forked"
    bounds: ClassVar[dict[str, Bound]] = {"trigger": TEXT}
    number: int
    trigger: str


def abort_detail(status: str, detail: str) -> str:
    """A ``session.aborted`` detail for people: a recorded cancellation reads as Ctrl-C."""
    if status == "interrupted" and (not detail.strip() or _CANCELLED.match(detail.strip())):
        return STOPPED  # logs written before the detail was put in words hold a repr
    return detail


@dataclass(frozen=True, slots=True)
class UnknownRecord:
    """A record of a kind this changeup does not know (a newer one wrote it): kept, not read."""

    kind: str
    fields: dict[str, Any]

    def to_record(self) -> dict[str, Any]:
        """The record as it was read."""
        return {"kind": self.kind, **self.fields}


SessionRecord = (
    WorkspaceCreated
    | PhaseSealed
    | AgentSandboxed
    | AgentOverLimits
    | AgentFrozen
    | WorkspaceOverLimits
    | TestsStarted
    | SessionGraded
    | SessionScored
    | SessionScope
    | TestsEffects
    | SessionEffects
    | ClockSkipped
    | SessionAborted
    | GatewayStarted
    | ModelRequest
    | ModelDiverged
    | ModelReplaying
    | ModelForked
)
#: Anything a log line may hold.
Record = Event | Observation | Action | SessionRecord | UnknownRecord
#: What the session writes to its log.
LogRecord = Event | Observation | Action | SessionRecord

SESSION_TYPES: tuple[type[Any], ...] = get_args(SessionRecord)


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of a log: its number, its time, and what it records."""

    seq: int
    t: float
    record: Record


def graded_like(record: Record) -> TestsResult | SessionGraded | None:
    """The record if it holds verdicts (a test result, or the final grading), else None."""
    return record if isinstance(record, TestsResult | SessionGraded) else None


def _generic(cls: type[Any]) -> Callable[[dict[str, Any]], Any]:
    """A decoder that takes each field of ``cls`` by name (lists become tuples)."""
    names = [(field.name, field.default is not dataclasses.MISSING) for field in dataclasses.fields(cls)]

    def build(raw: dict[str, Any]) -> Any:
        values = {}
        for name, optional in names:
            if name not in raw:
                if optional:
                    continue
                raise KeyError(name)
            value = raw[name]
            values[name] = tuple(value) if type(value) is list else value
        return cls(**values)

    return build


def _sandboxed(raw: dict[str, Any]) -> AgentSandboxed:
    shares = tuple(SharedPath(share["path"], share["writable"]) for share in raw["shares"])
    network: Any = raw["network"]
    if isinstance(network, bool):  # a log written before the networks had names
        network = "full" if network else "none"
    return AgentSandboxed(raw["confined"], raw["user"], network, shares, tuple(raw["home_seeded"]))


def _graded(raw: dict[str, Any]) -> SessionGraded:
    phases = tuple(PhaseResult.from_fields(phase) for phase in raw.get("phases", ()))
    graded: SessionGraded = _GRADED({**raw, "phases": phases})
    return graded


_GRADED = _generic(SessionGraded)


def _effects(raw: list[dict[str, Any]]) -> tuple[Effect, ...]:
    return tuple(Effect(e["effect"], e["detail"], e.get("test", "")) for e in raw)


def _tests_effects(raw: dict[str, Any]) -> TestsEffects:
    return TestsEffects(raw["request"], raw["snapshot"], _effects(raw["effects"]))


def _session_effects(raw: dict[str, Any]) -> SessionEffects:
    findings = tuple(EffectFinding(f["effect"], f["detail"], f["test"], f["tests"]) for f in raw["findings"])
    return SessionEffects(tuple(raw["prohibited"]), raw["snapshot"], bool(raw["watched"]), findings)


_SESSION_DECODERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    **{cls.kind: _generic(cls) for cls in SESSION_TYPES},
    AgentSandboxed.kind: _sandboxed,
    SessionGraded.kind: _graded,
    TestsEffects.kind: _tests_effects,
    SessionEffects.kind: _session_effects,
}


#: The kinds of triggers' records: engine inputs, decisions and observations.
_ENGINE_KINDS = EVENT_KINDS | ACTION_KINDS | {cls.kind for cls in get_args(Observation)}


def decode_entry(raw: dict[str, Any]) -> Entry:
    """The entry a log line's object holds (``seq``, ``t``, ``kind`` and the record's fields).

    A kind this changeup does not know becomes an :class:`UnknownRecord`; a known kind whose
    fields do not fit raises :class:`~triggers.RecordError`.
    """
    kind = raw["kind"]
    record: Record
    if kind in _ENGINE_KINDS:
        record = decode(raw)
    else:
        fields = {key: value for key, value in raw.items() if key not in ("seq", "t", "kind")}
        session = _SESSION_DECODERS.get(kind)
        if session is None:
            record = UnknownRecord(kind, fields)
        else:
            try:
                record = session(fields)
            except (KeyError, TypeError, ValueError) as error:
                raise RecordError(f"malformed {kind} record: {error}") from None
    return Entry(raw["seq"], raw["t"], record)

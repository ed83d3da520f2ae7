"""Events (what happened), observations (what happened that decides nothing) and actions
(what the engine decided), as frozen records.

All are written to the event log exactly as they are: ``to_record()`` gives a JSON-ready
dict whose ``kind`` names the type, and :func:`decode` turns such a dict back into the same
object. Events and observations carry their time ``t`` (seconds since the session started);
actions take the time of the event that caused them. Only events are engine inputs.

A field an agent can make grow is bounded where the record is made: its type's ``bounds``
names the field's cap (:mod:`triggers.bounds`), and the constructor applies it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from itertools import starmap
from operator import itemgetter
from typing import Any, ClassVar, Literal, get_args

from triggers.bounds import DETAIL, ITEMS, NAME, OUTPUT, PATH, TEXT, Items, clip

__all__ = [
    "ACTION_KINDS",
    "EVENT_KINDS",
    "Action",
    "AgentExited",
    "AgentOutput",
    "AgentStarted",
    "AgentTurnEnded",
    "BudgetExhausted",
    "ClockTick",
    "CommitMade",
    "EndSession",
    "Event",
    "FileChange",
    "FilesChanged",
    "GroupResult",
    "MessageDelivered",
    "MessageQueued",
    "Observation",
    "PhaseResult",
    "PhaseUnlocked",
    "RecordError",
    "RunTests",
    "SessionStarted",
    "TestOutcome",
    "TestsResult",
    "TriggerCleared",
    "TriggerFired",
    "TriggerPending",
    "TurnSummary",
    "decode",
]


class RecordError(ValueError):
    """A dict that is not a well-formed event or action record."""


class _Record:
    """Shared encoding: a record is its fields plus ``kind``."""

    __slots__ = ()
    kind: ClassVar[str]
    #: the cap of each field an agent can make grow (see :mod:`triggers.bounds`)
    bounds: ClassVar[dict[str, int | Items]] = {}

    def to_record(self) -> dict[str, Any]:
        """This record as a JSON-ready dict, ``kind`` first."""
        out: dict[str, Any] = {"kind": self.kind}
        for name in _FIELDS[type(self)]:
            value = getattr(self, name)
            out[name] = value if isinstance(value, _SCALARS) else _plain(value)
        return out

    @classmethod
    def from_fields(cls, record: dict[str, Any]) -> Any:
        """Build from a record's fields; nested records override this."""
        return cls(**{name: record[name] for name in _FIELDS[cls] if name in record})


_SCALARS = (str, int, float)  # bool is an int


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [item if isinstance(item, _SCALARS) else _plain(item) for item in value]
    if isinstance(value, _Record):
        return {name: _plain(getattr(value, name)) for name in _FIELDS[type(value)]}
    return value


class _Interned(dict[tuple[Any, ...], Any]):
    """Decoded records of one small type by their fields, for values that recur run after run
    (a test's verdict, a changed file): a record is an immutable value, so equal ones can be
    one object. A log holds many, so one known already is found at C speed (``map`` over
    ``__getitem__``); only a new one is built here. Bounded: emptied when full."""

    def __init__(self, make: Callable[..., Any], held: int = 4096) -> None:
        super().__init__()
        self.make, self.held = make, held

    def __missing__(self, fields: tuple[Any, ...]) -> Any:
        if len(self) >= self.held:
            self.clear()
        made = self[fields] = self.make(*fields)
        return made


# --- events ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SessionStarted(_Record):
    """The session began; ``files`` lists the starter workspace. ``start`` is the phase it
    starts at when that is a later one (``changeup run --start-at``), else None: the first."""

    kind: ClassVar[str] = "session.started"
    t: float
    files: tuple[str, ...] = ()
    start: str | None = None

    @classmethod
    def from_fields(cls, record: dict[str, Any]) -> SessionStarted:
        return cls(record["t"], tuple(record.get("files", ())), record.get("start"))


@dataclass(frozen=True, slots=True)
class ClockTick(_Record):
    """Time passed; sent when the engine asked to be woken (``Engine.next_wakeup``)."""

    kind: ClassVar[str] = "clock.tick"
    t: float


@dataclass(frozen=True, slots=True)
class FileChange(_Record):
    """One path in a change batch."""

    kind: ClassVar[str] = "fs.change"
    bounds: ClassVar[dict[str, int | Items]] = {"path": PATH}
    path: str
    change: Literal["added", "modified", "deleted"]


@dataclass(frozen=True, slots=True)
class FilesChanged(_Record):
    """A debounced batch of workspace file changes made by the agent: the first :data:`ITEMS`
    of them, and how many more there were (``omitted``; the engine sees only those recorded)."""

    kind: ClassVar[str] = "fs.changed"
    bounds: ClassVar[dict[str, int | Items]] = {"changes": Items(ITEMS, "omitted")}
    t: float
    changes: tuple[FileChange, ...]
    omitted: int = 0

    @classmethod
    def from_fields(cls, record: dict[str, Any]) -> FilesChanged:
        changes = tuple(map(_CHANGES.__getitem__, map(_CHANGE, record["changes"])))
        if len(changes) <= ITEMS:
            return cls(record["t"], changes, record.get("omitted", 0))
        # As written, never cut again: a log from before the cap replays as it was decided.
        made: FilesChanged = _EXACT[cls](record["t"], changes, record.get("omitted", 0))
        return made


_CHANGE = itemgetter("path", "change")
_CHANGES = _Interned(FileChange)


@dataclass(frozen=True, slots=True)
class CommitMade(_Record):
    """The agent made a commit in its workspace repository; ``message`` is its subject.

    A batch of more than :data:`ITEMS` new commits records only the newest ones: the first
    of them counts the older ones left out (``omitted``).
    """

    kind: ClassVar[str] = "git.commit"
    bounds: ClassVar[dict[str, int | Items]] = {"sha": NAME, "message": NAME}
    t: float
    sha: str
    message: str = ""
    omitted: int = 0


@dataclass(frozen=True, slots=True)
class TestOutcome(_Record):
    """The verdict of one hidden test."""

    __test__ = False  # a record, not a pytest test class

    kind: ClassVar[str] = "tests.outcome"
    bounds: ClassVar[dict[str, int | Items]] = {"id": PATH, "detail": DETAIL}
    id: str
    outcome: Literal["passed", "failed", "error", "skipped", "missing"]
    detail: str = ""


_OUTCOME = itemgetter("id", "outcome", "detail")
_OUTCOMES = _Interned(TestOutcome)


def _outcomes(tests: list[dict[str, Any]]) -> tuple[TestOutcome, ...]:
    """The outcomes of a phase's tests, from their records."""
    try:
        return tuple(map(_OUTCOMES.__getitem__, map(_OUTCOME, tests)))
    except KeyError:  # a detail left out (it is optional), or a field missing: one by one
        return tuple(_OUTCOMES[test["id"], test["outcome"], test.get("detail", "")] for test in tests)


@dataclass(frozen=True, slots=True)
class GroupResult(_Record):
    """One test group's share of a phase's result (``groups:`` of a phase in the challenge)."""

    kind: ClassVar[str] = "tests.group"
    name: str
    passed: int
    failed: int

    @property
    def all_pass(self) -> bool:
        """Every test of the group passed (and there was at least one)."""
        return self.failed == 0 and self.passed > 0


@dataclass(frozen=True, slots=True)
class PhaseResult(_Record):
    """One phase's share of a test run; ``groups`` its share per declared test group."""

    kind: ClassVar[str] = "tests.phase"
    phase: str
    passed: int
    failed: int
    tests: tuple[TestOutcome, ...] = ()
    groups: tuple[GroupResult, ...] = ()

    def passes(self, policy: tuple[str, ...]) -> bool:
        """The phase's verdict under its pass policy (``passes:``, the groups that must pass):
        every group of it passed (a group the result lacks ran no test, so did not). An empty
        policy is :attr:`all_pass`."""
        if not policy:
            return self.all_pass
        passing = {group.name for group in self.groups if group.all_pass}
        return all(name in passing for name in policy)

    @property
    def total(self) -> int:
        """Tests run for the phase."""
        return self.passed + self.failed

    @property
    def all_pass(self) -> bool:
        """Every test of the phase passed (and there was at least one)."""
        return self.failed == 0 and self.passed > 0

    @classmethod
    def from_fields(cls, record: dict[str, Any]) -> PhaseResult:
        tests, groups = record.get("tests"), record.get("groups")
        return cls(
            record["phase"],
            record["passed"],
            record["failed"],
            _outcomes(tests) if tests else (),
            tuple(starmap(GroupResult, map(_GROUP, groups))) if groups else (),
        )


_GROUP = itemgetter("name", "passed", "failed")


@dataclass(frozen=True, slots=True)
class TestsResult(_Record):
    """A hidden test run finished; ``request`` is the newest request it answers.

    ``cached`` marks a snapshot that was tested before (its verdicts are reused);
    ``seconds`` is how long the run took and ``detail`` why it is not ``ok``.
    """

    __test__ = False  # a record, not a pytest test class

    kind: ClassVar[str] = "tests.result"
    bounds: ClassVar[dict[str, int | Items]] = {"detail": DETAIL}
    t: float
    request: int
    snapshot: str
    phases: tuple[PhaseResult, ...]
    # See orchestrator.grading.policy; "error" was written by changeup 0.1 (an abnormal end).
    status: Literal["ok", "timeout", "tampered", "invalid", "refused", "over_limits", "error"] = "ok"
    detail: str = ""
    seconds: float = 0.0
    cached: bool = False

    @classmethod
    def from_fields(cls, record: dict[str, Any]) -> TestsResult:
        phases = tuple(map(_phase_result, record["phases"]))
        try:  # as written: every field there
            t, request, snapshot, status, detail, seconds, cached = _RESULT(record)
        except KeyError:  # optional fields left out
            t, request, snapshot = record["t"], record["request"], record["snapshot"]
            status, detail = record.get("status", "ok"), record.get("detail", "")
            seconds, cached = record.get("seconds", 0.0), record.get("cached", False)
        return cls(t, request, snapshot, phases, status, detail, seconds, cached)


_phase_result = PhaseResult.from_fields
_RESULT = itemgetter("t", "request", "snapshot", "status", "detail", "seconds", "cached")


@dataclass(frozen=True, slots=True)
class AgentStarted(_Record):
    """The agent process started."""

    kind: ClassVar[str] = "agent.started"
    t: float


@dataclass(frozen=True, slots=True)
class AgentOutput(_Record):
    """Something the agent printed (an observation: the engine never sees it)."""

    kind: ClassVar[str] = "agent.output"
    bounds: ClassVar[dict[str, int | Items]] = {"text": OUTPUT}
    t: float
    text: str
    stream: Literal["stdout", "stderr"] = "stdout"


@dataclass(frozen=True, slots=True)
class AgentTurnEnded(_Record):
    """The agent finished working on the messages it had.

    ``reason`` is empty for a turn the agent ended itself, else ``interrupted`` (a message
    with ``delivery: interrupt`` arrived) or ``timeout`` (the turn hit its time limit).
    """

    kind: ClassVar[str] = "agent.turn_ended"
    t: float
    exit_code: int | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class AgentExited(_Record):
    """The agent is gone for good: no more messages can reach it."""

    kind: ClassVar[str] = "agent.exited"
    t: float
    exit_code: int | None = None


@dataclass(frozen=True, slots=True)
class BudgetExhausted(_Record):
    """The agent asked its model for more than the session's budget allows (``--budget``): the
    gateway refused the request; ``detail`` says which limit was spent."""

    kind: ClassVar[str] = "budget.exhausted"
    bounds: ClassVar[dict[str, int | Items]] = {"detail": DETAIL}
    t: float
    detail: str = ""


@dataclass(frozen=True, slots=True)
class MessageDelivered(_Record):
    """A queued message reached the agent (``trigger`` is ``briefing`` for the first one)."""

    kind: ClassVar[str] = "message.delivered"
    t: float
    trigger: str


@dataclass(frozen=True, slots=True)
class TurnSummary(_Record):
    """What one agent turn took, used and said, as far as the agent's CLI reports it.

    Written by an adapter just before its turn ends (``turn`` counts the adapter's turns from
    1). A figure the CLI did not report is ``None``, never 0. Token counts: ``input_tokens``
    is every prompt token, cached or not; ``cache_read_tokens`` and ``cache_write_tokens``
    are the parts of it read from and written to a prompt cache. ``transcript`` is the turn's
    whole output, relative to the run folder. An observation: the engine never sees it.
    """

    kind: ClassVar[str] = "turn.summary"
    bounds: ClassVar[dict[str, int | Items]] = {
        "final_message": TEXT,
        "model": NAME,
        "session": NAME,
        "transcript": PATH,
    }
    t: float
    turn: int
    seconds: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    cost_usd: float | None = None
    final_message: str | None = None
    model: str = ""
    session: str = ""
    transcript: str = ""


Event = (
    SessionStarted
    | ClockTick
    | FilesChanged
    | CommitMade
    | TestsResult
    | AgentStarted
    | AgentTurnEnded
    | AgentExited
    | MessageDelivered
    | BudgetExhausted
)
#: What happened that can decide nothing: logged for the reports, never fed to the engine.
Observation = AgentOutput | TurnSummary


# --- actions -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TriggerPending(_Record):
    """A trigger's condition holds; it fires if it keeps holding for its ``for:`` time."""

    kind: ClassVar[str] = "trigger.pending"
    trigger: str
    since: float


@dataclass(frozen=True, slots=True)
class TriggerCleared(_Record):
    """A pending trigger's condition stopped holding before its ``for:`` time ran out."""

    kind: ClassVar[str] = "trigger.cleared"
    trigger: str


@dataclass(frozen=True, slots=True)
class TriggerFired(_Record):
    """A trigger fired; ``cause`` says which event made its condition hold."""

    kind: ClassVar[str] = "trigger.fired"
    trigger: str
    cause: str
    count: int = 1


@dataclass(frozen=True, slots=True)
class PhaseUnlocked(_Record):
    """A phase's tests joined the suite; ``trigger`` is empty for the first phase."""

    kind: ClassVar[str] = "phase.unlocked"
    phase: str
    trigger: str = ""


@dataclass(frozen=True, slots=True)
class MessageQueued(_Record):
    """A message is due: delivered when the agent's turn ends, or at once if ``interrupt``."""

    kind: ClassVar[str] = "message.queued"
    trigger: str
    message_kind: str
    text: str
    interrupt: bool = False


@dataclass(frozen=True, slots=True)
class RunTests(_Record):
    """Test the current workspace on these phases; ``request`` numbers requests from 1."""

    kind: ClassVar[str] = "tests.requested"
    request: int
    phases: tuple[str, ...]
    reason: str

    @classmethod
    def from_fields(cls, record: dict[str, Any]) -> RunTests:
        return cls(record["request"], tuple(record["phases"]), record["reason"])


@dataclass(frozen=True, slots=True)
class EndSession(_Record):
    """The session is over; ``reason`` is one of ``end_condition``, ``time_limit``,
    ``agent_done``, ``agent_exited`` or ``budget_exhausted``."""

    kind: ClassVar[str] = "session.ended"
    reason: str
    detail: str = ""


Action = (
    TriggerPending | TriggerCleared | TriggerFired | PhaseUnlocked | MessageQueued | RunTests | EndSession
)

# The same types as tuples, taken from the unions so that each list is written once.
_EVENT_TYPES: tuple[type[_Record], ...] = get_args(Event)
_OBSERVATION_TYPES: tuple[type[_Record], ...] = get_args(Observation)
_ACTION_TYPES: tuple[type[_Record], ...] = get_args(Action)
_FIELDS: dict[type, tuple[str, ...]] = {
    cls: tuple(f.name for f in fields(cls))
    for cls in (
        *_EVENT_TYPES,
        *_OBSERVATION_TYPES,
        *_ACTION_TYPES,
        FileChange,
        TestOutcome,
        GroupResult,
        PhaseResult,
    )
}
_BY_KIND: dict[str, type[_Record]] = {
    cls.kind: cls for cls in (*_EVENT_TYPES, *_OBSERVATION_TYPES, *_ACTION_TYPES)
}


def _store_through_slots(cls: type) -> None:
    """Give a frozen record an ``__init__`` that bounds its fields (``bounds``) and stores each
    through its slot's descriptor.

    A frozen dataclass's own ``__init__`` stores each field with ``object.__setattr__``, the
    generic path around the ``__setattr__`` that refuses; the slot's descriptor stores it
    directly, in about half the time. The engine builds about one record per event and a
    log's decoder one per line, so this is a measurable share of both. The parameters and
    defaults stay the dataclass's own. A bounded field costs a type and length check; only a
    value over its cap is cut. :data:`_EXACT` keeps a constructor that cuts nothing, for a
    decoder that must give back what an older log holds.
    """
    if any(f.default_factory is not MISSING or not f.init for f in fields(cls)):
        raise TypeError(f"{cls.__name__}: a record's fields are plain values, each set by __init__")
    names = _FIELDS[cls]
    bounds: dict[str, int | Items] = getattr(cls, "bounds", {})
    generated = cls.__dict__["__init__"]
    namespace: dict[str, Any] = {f"_set_{name}": cls.__dict__[name].__set__ for name in names}
    namespace["_clip"] = clip
    counted = {cap.into: (name, cap.limit) for name, cap in bounds.items() if isinstance(cap, Items)}
    stores = []
    for name in names:
        cap = bounds.get(name)
        value = name
        if isinstance(cap, int):
            value = f"{name} if type({name}) is not str or len({name}) <= {cap} else _clip({name}, {cap})"
        elif isinstance(cap, Items):
            value = f"{name} if len({name}) <= {cap.limit} else {name}[:{cap.limit}]"
        elif name in counted:
            items, limit = counted[name]
            value = f"{name} if len({items}) <= {limit} else {name} + len({items}) - {limit}"
        stores.append(f"_set_{name}(self, {value})")
    exact = "; ".join(f"_set_{name}(self, {name})" for name in names)
    exec(f"def __init__(self, {', '.join(names)}):\n    {'; '.join(stores)}\n", namespace)
    exec(f"def _exact(self, {', '.join(names)}):\n    {exact}\n", namespace)
    init = namespace["__init__"]
    for attribute in ("__defaults__", "__kwdefaults__", "__annotations__", "__qualname__"):
        setattr(init, attribute, getattr(generated, attribute))
    setattr(cls, "__init__", init)  # noqa: B010 -- mypy refuses assigning a method to a type
    if bounds:
        _EXACT[cls] = functools.partial(_made_exactly, cls, namespace["_exact"])


def _made_exactly(cls: type, store: Callable[..., None], *values: Any) -> Any:
    """A record of ``cls`` holding ``values`` as they are, no bound applied."""
    made: Any = object.__new__(cls)
    store(made, *values)
    return made


#: Per bounded record type: a constructor that cuts nothing (a decoder's, for older logs).
_EXACT: dict[type, Callable[..., Any]] = {}


for _cls in _FIELDS:
    _store_through_slots(_cls)

#: Kinds that are engine inputs.
EVENT_KINDS = frozenset(cls.kind for cls in _EVENT_TYPES)
#: Kinds that are engine decisions.
ACTION_KINDS = frozenset(cls.kind for cls in _ACTION_TYPES)


def _positional(cls: type[_Record]) -> Callable[[dict[str, Any]], Any]:
    """A fast decoder for a record with flat fields: all of them in order, else ``from_fields``."""
    names = _FIELDS[cls]
    pick = itemgetter(*names)
    make: Callable[..., Any] = cls  # the dataclass constructor, fields in order

    def build(record: dict[str, Any]) -> Any:
        try:
            values = pick(record)
        except KeyError:  # an optional field left out: let the defaults fill in
            return cls.from_fields(record)
        return make(*values)

    def build_one(record: dict[str, Any]) -> Any:
        try:
            return make(record[names[0]])
        except KeyError:
            return cls.from_fields(record)

    return build if len(names) > 1 else build_one


# Records written by to_record() carry every field, so most decode positionally; records with
# nested parts (or tuples) keep their own from_fields.
_DECODERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    kind: cls.from_fields if "from_fields" in cls.__dict__ else _positional(cls)
    for kind, cls in _BY_KIND.items()
}


def decode(record: dict[str, Any]) -> Event | Observation | Action:
    """The event, observation or action a record holds; :class:`RecordError` if none."""
    kind: Any = record.get("kind")  # may be anything: a bad one is no key
    try:
        decoder = _DECODERS[kind]
    except (KeyError, TypeError):  # not a kind, or not even a string
        raise RecordError(f"unknown record kind {kind!r}") from None
    try:
        obj: Event | Observation | Action = decoder(record)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise RecordError(f"malformed {kind} record: {error}") from None
    return obj

"""The session's append-only event log, ``events.jsonl`` (format documented in docs/event-log.md).

Line 1 is a header; every later line is one JSON object with ``seq``, ``t`` and ``kind``.
Each line goes to the file in a single ``write`` on an ``O_APPEND`` descriptor, so a crash
can tear at most the last line, and that torn tail is cut off when the log is opened again.
Lines are pushed to the disk (``fsync``) at every engine decision.

Reading checks every record of a known kind against its shape (:func:`check_record`): the
typed records of ``triggers`` for engine inputs, decisions and agent observations, and the
shapes below for the session's own observations. Whatever reads a log afterwards (replay,
re-scoring, the reports, ``show``) may then index every field a record of its kind has; a
record that does not fit is an error naming its line, its kind and the field.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from types import UnionType
from typing import (
    Any,
    Literal,
    NamedTuple,
    TextIO,
    TypedDict,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)

from triggers import Action, Event, Observation, TestsResult

__all__ = [
    "FORMAT",
    "KNOWN_KINDS",
    "VERSION",
    "EventLog",
    "EventLogError",
    "LogContents",
    "LogReader",
    "check_record",
    "read_log",
    "repair",
]

FORMAT = "changeup-events"
VERSION = 2


class EventLogError(Exception):
    """A log that cannot be read as this format and version; the message says where."""


@dataclass(frozen=True, slots=True)
class LogContents:
    """A log read back: its header, its records, and whether a torn last line was dropped."""

    header: dict[str, Any]
    records: list[dict[str, Any]]
    torn: bool = False


class EventLog:
    """Appends records to ``events.jsonl``; one ``write`` per append, of one or more lines."""

    def __init__(self, path: Path, fd: int, seq: int, t: float = 0.0) -> None:
        self.path = path
        self._fd = fd
        self._seq = seq
        self.last_t = t  #: the time of the last record appended

    @classmethod
    def create(cls, path: Path, header: dict[str, Any]) -> EventLog:
        """Start a new log at ``path`` with ``header`` (``format`` and ``version`` are added)."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        log = cls(path, fd, 0)
        log._write({"format": FORMAT, "version": VERSION, **header})
        log.sync()
        return log

    @classmethod
    def reopen(cls, path: Path) -> EventLog:
        """Open an existing log for appending, after cutting off a torn last line."""
        repair(path)
        contents = read_log(path)
        last: dict[str, Any] = contents.records[-1] if contents.records else {"seq": 0, "t": 0.0}
        return cls(path, os.open(path, os.O_WRONLY | os.O_APPEND), int(last["seq"]), float(last["t"]))

    @property
    def seq(self) -> int:
        """The sequence number of the last record appended."""
        return self._seq

    def append(self, record: dict[str, Any], t: float, *, sync: bool = False) -> int:
        """Append ``record`` (which has ``kind``) at time ``t``; returns its ``seq``."""
        return self.append_all([record], t, sync=sync)

    def append_all(self, records: list[dict[str, Any]], t: float, *, sync: bool = False) -> int:
        """Append ``records`` at time ``t`` in one write (all or none survive a kill); returns
        the ``seq`` of the first."""
        first = self._seq + 1
        # t is written exactly (repr round-trips), so a replay feeds the engine the same time.
        lines = []
        for record in records:
            self._seq += 1
            line = {"seq": self._seq, "t": t}
            line.update(record)
            line["t"] = t
            lines.append(line)
        self.last_t = t
        self._write(*lines)
        if sync:
            self.sync()
        return first

    def sync(self) -> None:
        """Push everything appended so far to the disk."""
        os.fsync(self._fd)

    def close(self) -> None:
        """Sync and close; appending afterwards is an error."""
        if self._fd >= 0:
            self.sync()
            os.close(self._fd)
            self._fd = -1

    def _write(self, *objs: dict[str, Any]) -> None:
        text = "".join(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n" for obj in objs)
        data = text.encode("utf-8")
        written = os.write(self._fd, data)
        if written != len(data):  # a full disk: the torn tail is repaired on the next open
            raise OSError(f"short write to {self.path}: {written} of {len(data)} bytes")


def repair(path: Path) -> bool:
    """Cut a torn (unterminated) last line off the log; True if something was cut."""
    with path.open("rb+") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        if size == 0:
            return False
        handle.seek(max(0, size - 65536))
        tail = handle.read()
        if tail.endswith(b"\n"):
            return False
        cut = tail.rfind(b"\n")
        keep = size - len(tail) + cut + 1 if cut >= 0 else 0
        if keep == 0 and size > 65536:
            raise EventLogError(f"{path}: no line break in the last 64 KiB; refusing to cut")
        handle.truncate(keep)
        return True


class LogReader:
    """A log opened for streaming: its header is read and checked at once, its records each
    time it is iterated (only then is the file open), so memory does not grow with the log.

    ``torn`` says whether the last line is cut off (its records leave that line out): known
    on opening, and brought up to date when the records are read to the end, as a live log
    grows meanwhile.
    """

    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise EventLogError(f"{path}: no event log here")
        self.path = path
        with _open(path) as handle:
            try:
                first = handle.readline()
            except UnicodeDecodeError:
                raise EventLogError(f"{path}:1: not UTF-8 text") from None
            if not first:
                raise EventLogError(f"{path}: empty log (no header line)")
            if not first.endswith("\n"):
                raise EventLogError(f"{path}:1: the header line is torn; nothing was recorded")
            self.header = _check_header(path, _parsed(path, 1, first))
            handle.buffer.seek(-1, os.SEEK_END)
            self.torn = handle.buffer.read(1) != b"\n"

    def __iter__(self) -> Iterator[dict[str, Any]]:
        # The common line at C speed, in one go: raw_decode takes it whole (without json.loads'
        # whitespace handling around it), its seq is an integer and its kind one with a shape
        # that it fits. Any other line (torn, padded, not JSON, of an unknown kind, misfit)
        # goes to _record_at, which reads it as json.loads would, or says what is wrong.
        scan = json.JSONDecoder().raw_decode
        checks, path = _CHECKS, self.path
        number = 1
        with _open(path) as handle:
            try:
                handle.readline()  # the header, checked on opening
                for number, raw in enumerate(handle, 2):
                    try:
                        obj, end = scan(raw)
                        fits = (
                            end == len(raw) - 1
                            and type(obj["seq"]) is int
                            and checks[obj["kind"]](obj) is None
                        )
                    except (ValueError, LookupError, TypeError):
                        fits = False
                    if not fits:
                        obj = _record_at(path, number, raw)
                        if obj is None:
                            self.torn = True
                            return
                    yield obj
            except UnicodeDecodeError:
                raise EventLogError(f"{path}:{number + 1}: not UTF-8 text") from None
        self.torn = False


def _record_at(path: Path, number: int, raw: str) -> dict[str, Any] | None:
    """Line ``number`` read with every check spelled out: its record, None if it is a torn
    (unterminated) last line, or an error naming the line and what is wrong."""
    if raw[-1:] != "\n":
        return None
    obj = _parsed(path, number, raw)
    kind = obj.get("kind")
    if type(kind) is not str or type(obj.get("seq")) is not int:
        raise EventLogError(f"{path}:{number}: a record needs 'seq' and 'kind'")
    problem = _CHECKS.get(kind, _ANY_KIND)(obj)
    if problem is not None:
        raise EventLogError(f"{path}:{number}: {_explain(kind, problem)}")
    return obj


def _open(path: Path) -> TextIO:
    # Text mode: json.loads on str skips the encoding sniffing it does for bytes.
    return path.open("r", encoding="utf-8", newline="\n")


def _parsed(path: Path, number: int, raw: str) -> dict[str, Any]:
    """Line ``number`` of the log as a JSON object, or an error naming the line."""
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as error:
        raise EventLogError(f"{path}:{number}: not a JSON line ({error})") from None
    if not isinstance(obj, dict):
        raise EventLogError(f"{path}:{number}: expected a JSON object")
    return obj


def read_log(path: Path) -> LogContents:
    """Read a whole log; a torn last line is dropped (``torn``), any other fault is an error."""
    reader = LogReader(path)
    records = list(reader)
    return LogContents(reader.header, records, reader.torn)


def _check_header(path: Path, obj: dict[str, Any]) -> dict[str, Any]:
    if obj.get("format") != FORMAT:
        raise EventLogError(f"{path}:1: not a changeup event log (format {obj.get('format')!r})")
    version = obj.get("version")
    if version != VERSION:
        older = isinstance(version, int) and version < VERSION
        hint = "written by an older changeup" if older else "not one this changeup knows"
        raise EventLogError(
            f"{path}:1: event log version {version!r}; this changeup reads version {VERSION} ({hint})"
        )
    return obj


# --- record shapes -----------------------------------------------------------------------------
#
# Every known kind has a shape: its fields, each required or not, with the JSON type its value
# must have. The shapes of engine inputs, decisions and agent observations are read off their
# typed records in ``triggers`` (a field with a default is optional, and filled in when it is
# missing, as ``triggers.decode`` would); the session's own observations are TypedDicts here.
# Unknown kinds pass: a reader skips what it does not know (docs/event-log.md, Compatibility).

#: Where a problem is (``("phases", 0, "passed")``) and what it is.
Problem = tuple[tuple[str | int, ...], str]
_Check = Callable[[Any], Problem | None]
_MISSING: Any = object()


class _Share(TypedDict):
    path: str
    writable: bool


class _Criterion(TypedDict):
    id: str
    title: str
    weight: float
    score: float | None
    critical: bool
    critical_failure: bool
    findings: list[str]
    data: dict[str, Any]


class _WorkspaceCreated(TypedDict):
    baseline: str
    python: str
    sandbox: dict[str, Any]


class _PhaseSealed(TypedDict):
    phase: str
    files: dict[str, str]
    environment: str


class _AgentSandboxed(TypedDict):
    confined: bool
    user: str | None
    network: bool
    shares: list[_Share]
    home_seeded: list[str]


class _OverLimits(TypedDict):
    files: int
    bytes: int
    detail: str


class _TestsStarted(TypedDict):
    request: int
    snapshot: str
    phases: list[str]


class _GradingFailed(TypedDict):
    """``session.graded`` when the final grading itself raised: only why."""

    status: Literal["invalid"]
    detail: str


class _SessionScored(TypedDict):
    criteria: list[_Criterion]


class _ScopeFinding(TypedDict):
    path: str
    change: Literal["added", "modified", "deleted"]


class _SessionScope(TypedDict):
    allowed_paths: list[str]
    changed: int
    findings: list[_ScopeFinding]


class _ClockSkipped(TypedDict):
    until: float
    skipped: float


class _SessionAborted(TypedDict):
    status: Literal["invalid", "crashed", "interrupted"]
    detail: str


_OBSERVATIONS: dict[str, type] = {
    "workspace.created": _WorkspaceCreated,
    "phase.sealed": _PhaseSealed,
    "agent.sandboxed": _AgentSandboxed,
    "workspace.over_limits": _OverLimits,
    "tests.started": _TestsStarted,
    "session.scored": _SessionScored,
    "session.aborted": _SessionAborted,
    "session.scope": _SessionScope,
    "clock.skipped": _ClockSkipped,
}

_SCALARS: dict[Any, tuple[tuple[type, ...], str]] = {
    float: ((float, int), "a number"),
    int: ((int,), "an integer"),  # not a bool: type(True) is bool
    bool: ((bool,), "true or false"),
    str: ((str,), "a string"),
}


class _Field(NamedTuple):
    """One field of a shape, compiled for the hot loop of :func:`_object`."""

    name: str
    types: tuple[type, ...] | None  # the exact JSON types its value may have; None: any
    allowed: frozenset[Any] | None  # a Literal's values
    inner: _Check | None  # the items of a list, the fields of an object
    expected: str  # for messages: "an integer"
    required: bool
    default: Callable[[], Any] | None  # fills a missing optional field; None: left out


def _value(hint: Any) -> tuple[tuple[type, ...] | None, frozenset[Any] | None, _Check | None, str]:
    """(types, allowed, inner, expected) of a value typed ``hint``."""
    if hint is Any:
        return None, None, None, "anything"
    if hint in _SCALARS:
        scalar, name = _SCALARS[hint]
        return scalar, None, None, name
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal:
        return (str,), frozenset(args), None, "one of " + ", ".join(map(repr, args))
    if origin in (Union, UnionType) and type(None) in args:
        (some,) = (a for a in args if a is not type(None))
        types, allowed, inner, expected = _value(some)
        return (*(types or ()), type(None)), allowed, inner, f"{expected} or null"
    if origin in (tuple, list):
        return (list,), None, _items(args[0]), "a list"
    if origin is dict:
        return (dict,), None, None if args[1] is Any else _items(args[1]), "an object"
    return (dict,), None, _object(_fields(hint)), "an object"


def _fields(shape: type) -> tuple[_Field, ...]:
    """The fields of a typed record (a dataclass) or a TypedDict."""
    hints = get_type_hints(shape)
    if is_typeddict(shape):
        required = shape.__required_keys__  # type: ignore[attr-defined]
        return tuple(_Field(name, *_value(hints[name]), name in required, None) for name in hints)
    out = []
    for field in dataclasses.fields(shape):
        default = None if field.default is dataclasses.MISSING else _filler(field.default)
        out.append(_Field(field.name, *_value(hints[field.name]), default is None, default))
    return tuple(out)


def _filler(default: Any) -> Callable[[], Any]:
    """What fills a missing optional field: its default as JSON (a fresh list for ``()``)."""
    return list if default == () else lambda: default


def _problem(value: Any, types: Any, allowed: Any, inner: _Check | None, expected: str) -> Problem | None:
    if (types is not None and type(value) not in types) or (allowed is not None and value not in allowed):
        return (), f"is {_shown(value)}, expected {expected}"
    return inner(value) if inner is not None and value is not None else None


def _items(hint: Any) -> _Check:
    """Checks every item of a list (or every value of an object) against ``hint``."""
    value = types, allowed, inner, _ = _value(hint)
    # Objects of strings only (a test's verdict, a changed file) recur run after run: those that
    # fitted are remembered by their values (a string equals nothing but a string), and a list
    # of remembered ones is passed at C speed. Bounded, like triggers' cache of outcomes.
    strings = _strings(hint)
    pick = itemgetter(*strings) if strings else None
    fitted: set[Any] = set()
    accepted = frozenset(types or ())

    def check(items: Any) -> Problem | None:
        values = items.values() if type(items) is dict else items
        if pick is not None:
            try:
                if fitted.issuperset(map(pick, values)):
                    return None
            except (KeyError, TypeError):  # a field missing, or an item not an object of strings
                pass
        elif types is None or (
            accepted.issuperset(map(type, values))
            and (allowed is None or allowed.issuperset(values))
            and (inner is None or not any(map(inner, values)))
        ):
            return None
        pairs = items.items() if type(items) is dict else enumerate(items)
        for key, item in pairs:
            problem = _problem(item, *value)
            if problem is not None:
                return (key, *problem[0]), problem[1]
            if pick is not None:
                if len(fitted) >= _FITTED_HELD:
                    fitted.clear()
                fitted.add(pick(item))
        return None

    return check


def _strings(hint: Any) -> tuple[str, ...]:
    """The fields of ``hint`` if it is an object whose fields are all strings, else ()."""
    if not (is_typeddict(hint) or dataclasses.is_dataclass(hint)):
        return ()
    fields = _fields(hint)
    return tuple(f.name for f in fields) if all(f.types == (str,) for f in fields) else ()


def _object(fields: tuple[_Field, ...]) -> _Check:
    """Checks an object against ``fields``, filling in missing optional fields.

    The fast path takes every field at once and tests each value inline; an object that
    misses a field or does not fit takes the slow path, which fills in defaults and says
    what is wrong. The fast path is compiled from source for each shape, as ``dataclasses``
    builds ``__init__``: a log holds millions of records, and a loop over the fields per
    record costs twice the tests themselves.
    """
    names = tuple(f.name for f in fields)
    values = [f"v{i}" for i in range(len(fields))]
    tests = [_type_test(f"v{i}", f.types) for i, f in enumerate(fields) if f.types is not None]
    tests += [f"v{i} in allowed{i}" for i, f in enumerate(fields) if f.allowed is not None]
    source = [
        "def check(obj):",
        "    try:",
        f"        {', '.join(values)}, = pick(obj)",
        "    except KeyError:",
        "        return slow(obj)",
        f"    if not ({' and '.join(tests) or 'True'}):",
        "        return slow(obj)",
    ]
    for i, field in enumerate(fields):
        if field.inner is not None:
            source += [
                f"    if v{i} is not None and (problem := inner{i}(v{i})) is not None:",
                f"        return ({names[i]!r}, *problem[0]), problem[1]",
            ]
    source.append("    return None")
    take = itemgetter(*names)
    scope: dict[str, Any] = {"pick": take if len(names) > 1 else lambda obj: (take(obj),)}
    for i, field in enumerate(fields):
        scope |= {f"types{i}": field.types, f"allowed{i}": field.allowed, f"inner{i}": field.inner}

    def slow(obj: dict[str, Any]) -> Problem | None:
        for name, types, allowed, inner, expected, required, default in fields:
            value = obj.get(name, _MISSING)
            if value is _MISSING:
                if required:
                    return (name,), f"is missing (expected {expected})"
                if default is not None:
                    obj[name] = default()
                continue
            problem = _problem(value, types, allowed, inner, expected)
            if problem is not None:
                return (name, *problem[0]), problem[1]
        return None

    scope["slow"] = slow
    exec("\n".join(source), scope)
    check: _Check = scope["check"]
    return check


def _type_test(value: str, types: tuple[type, ...]) -> str:
    """Source testing that ``value``'s exact type is among ``types`` (bound as ``types<i>``)."""
    index = value[1:]
    if len(types) == 1:
        return f"type({value}) is types{index}[0]"
    return f"type({value}) in types{index}"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…"


_FITTED_HELD = 4096
#: Every record has a time.
_TIME = _Field("t", *_value(float), True, None)


def _record(shape: type) -> _Check:
    """A record's check: ``t``, then the fields of its ``shape``."""
    return _object((_TIME, *(f for f in _fields(shape) if f.name != "t")))


def _graded(full: _Check, failed: _Check) -> _Check:
    """``session.graded`` is a test result, or (the grading raised) only an invalid status and why."""
    return lambda record: (
        failed(record) if "phases" not in record and record.get("status") == "invalid" else full(record)
    )


_CHECKS: dict[str, _Check] = {
    **{cls.kind: _record(cls) for cls in (*get_args(Event), *get_args(Observation), *get_args(Action))},
    **{kind: _record(shape) for kind, shape in _OBSERVATIONS.items()},
    "session.graded": _graded(_record(TestsResult), _record(_GradingFailed)),
}
#: Kinds whose records have a shape.
KNOWN_KINDS = frozenset(_CHECKS)
_ANY_KIND = _object((_TIME,))


def check_record(record: dict[str, Any]) -> str | None:
    """None if ``record`` (which has a string ``kind``) fits the shape of its kind, else what
    is wrong with which field, e.g. ``tests.result record: field 'phases[0].passed' is missing
    (expected an integer)``. The optional fields it lacks are filled in with their defaults."""
    kind = record["kind"]
    problem = _CHECKS.get(kind, _ANY_KIND)(record)
    return None if problem is None else _explain(kind, problem)


def _explain(kind: str, problem: Problem) -> str:
    where, what = problem
    field = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in where)
    return f"{kind} record: field '{field.lstrip('.')}' {what}"

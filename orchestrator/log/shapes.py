"""The shape of every known record kind, checked on every line a log reader reads.

A shape is a record type's fields, each required or not, with the JSON type its value must
have. Shapes are read off the typed records: ``triggers``' engine inputs, decisions and
agent observations, and the session's own (:mod:`orchestrator.log.records`). A field
with a default is optional, and filled in when it is missing, as decoding would. Unknown
kinds pass: a reader skips what it does not know (docs/event-log.md, Compatibility).

Checks are compiled per shape into straight-line code (as ``dataclasses`` builds
``__init__``): a log holds millions of records.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from operator import itemgetter
from types import UnionType
from typing import (
    Any,
    Literal,
    NamedTuple,
    TypedDict,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)

from orchestrator.log.records import SESSION_TYPES, AgentSandboxed, SessionGraded, SharedPath
from triggers import Action, Event, Observation, TestsResult

__all__ = ["CHECKS", "KNOWN_KINDS", "Problem", "check_record", "checker", "explain"]


#: Where a problem is (``("phases", 0, "passed")``) and what it is.
Problem = tuple[tuple[str | int, ...], str]
_Check = Callable[[Any], Problem | None]
_MISSING: Any = object()


class _GradingFailed(TypedDict):
    """``session.graded`` when the final grading itself raised (written before the record was
    typed): only why."""

    status: Literal["invalid"]
    detail: str


class _SandboxedBefore(TypedDict):
    """``agent.sandboxed`` as written before the networks had names: ``network`` true or false
    (read as ``full`` or ``none``)."""

    confined: bool
    user: str | None
    network: bool
    shares: list[SharedPath]
    home_seeded: list[str]


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
        kinds = tuple(dict.fromkeys(type(arg) for arg in args))  # strings, or strings and bools
        return kinds, frozenset(args), None, "one of " + ", ".join(map(repr, args))
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
            # A list's check is over its items: an empty one (a phase's groups, often) has none.
            some = f"v{i}" if list in (field.types or ()) else f"v{i} is not None"
            source += [
                f"    if {some} and (problem := inner{i}(v{i})) is not None:",
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


def _sandboxed(named: _Check, before: _Check) -> _Check:
    """``agent.sandboxed`` names its network; a log written before says true or false."""
    return lambda record: before(record) if type(record.get("network")) is bool else named(record)


def _graded(full: _Check, failed: _Check) -> _Check:
    """``session.graded`` is a test result, or (the grading raised) only an invalid status and why."""
    return lambda record: (
        failed(record) if "phases" not in record and record.get("status") == "invalid" else full(record)
    )


#: The check of each known kind, by kind.
CHECKS: dict[str, _Check] = {
    **{cls.kind: _record(cls) for cls in (*get_args(Event), *get_args(Observation), *get_args(Action))},
    **{cls.kind: _record(cls) for cls in SESSION_TYPES},
    SessionGraded.kind: _graded(_record(TestsResult), _record(_GradingFailed)),
    AgentSandboxed.kind: _sandboxed(_record(AgentSandboxed), _record(_SandboxedBefore)),
}
#: Kinds whose records have a shape.
KNOWN_KINDS = frozenset(CHECKS)
_ANY_KIND = _object((_TIME,))


def check_record(record: dict[str, Any]) -> str | None:
    """None if ``record`` (which has a string ``kind``) fits the shape of its kind, else what
    is wrong with which field, e.g. ``tests.result record: field 'phases[0].passed' is missing
    (expected an integer)``. The optional fields it lacks are filled in with their defaults."""
    kind = record["kind"]
    problem = CHECKS.get(kind, _ANY_KIND)(record)
    return None if problem is None else explain(kind, problem)


def checker(kind: str) -> Callable[[Any], Problem | None]:
    """The check of ``kind``'s shape (of any record, for a kind this changeup does not know)."""
    return CHECKS.get(kind, _ANY_KIND)


def explain(kind: str, problem: Problem) -> str:
    """A problem in words: ``tests.result record: field 'phases[0].passed' is missing``."""
    where, what = problem
    field = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in where)
    return f"{kind} record: field '{field.lstrip('.')}' {what}"

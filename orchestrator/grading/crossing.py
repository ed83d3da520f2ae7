"""What crosses between the hidden tests and the workspace host, and how (stdlib only, pure).

Under ``testing: isolation: process`` the hidden tests and the agent's code run in two
processes joined by one socket: the test process (``remote.py``) and the workspace host
(``host.py``). This module is all the two agree on, and it does no I/O: how a message is
framed (:class:`Frames`), what a message holds (:func:`parse`), and how a value is written
(:func:`encode`) and read back (:func:`decode`).

**Plain data** crosses by value, rebuilt on the other side from primitive fields with exact
types — never by unpickling: ``None``, ``bool``, ``int``, ``float``, ``complex``, ``str``,
``bytes``, ``bytearray``, ``list``, ``tuple``, ``dict``, ``set``, ``frozenset`` and a fixed list
of standard-library value types (:data:`VALUE_TYPES`). Only a value of *exactly* one of these
types is plain: an ``int`` or ``str`` subclass is not, whatever it holds. A value is capped in
depth (:data:`MAX_DEPTH`), in number of parts (:data:`MAX_ITEMS`) and, framed, in bytes
(:data:`MAX_FRAME`); whatever breaks a cap is refused (:class:`CannotCross`) on the sending
side, and a frame or value that breaks one on the way in is a :class:`ProtocolError`.

**Anything else** crosses as a reference that the sending side makes (``other`` in
:func:`encode`) and the receiving side resolves (``other`` in :func:`decode`), under tags of
its own (:data:`HOST_TAGS`, :data:`TEST_TAGS`): the host sends *handles* (a remote id and the
identity of its class, :class:`ClassInfo`), the tests send those handles back and, for the
functions and objects the hidden tests define, *callbacks* the host may only call.

Encoded values are JSON: ``null``, ``true``, ``false`` and strings stand for themselves; every
other value is a list whose first item is its tag (``["i", "0x2a"]``, ``["l", [...]]``).
A message is a JSON object, framed with its length (4 bytes, big-endian).
"""

from __future__ import annotations

import base64
import binascii
import collections
import datetime
import decimal
import fractions
import json
import pathlib
import struct
import uuid
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BINARY",
    "HOST_TAGS",
    "MAX_DEPTH",
    "MAX_FRAME",
    "MAX_ITEMS",
    "OPERATIONS",
    "TEST_TAGS",
    "UNARY",
    "VALUE_TYPES",
    "CannotCross",
    "ClassInfo",
    "Frames",
    "Message",
    "ProtocolError",
    "class_info",
    "decode",
    "encode",
    "frame",
    "parse",
]

#: The longest message, framed.
MAX_FRAME = 16 << 20
#: The deepest nesting of containers in one value.
MAX_DEPTH = 64
#: The most values (every container and item counted) in one message.
MAX_ITEMS = 1 << 20
#: The longest integer, in hexadecimal digits (a million bits).
MAX_DIGITS = 1 << 18
#: A class's bases, followed this deep (their bases' bases...).
MAX_BASES = 16
_HEADER = struct.Struct(">I")

#: The standard library's value types that cross as plain data (besides the built-in ones).
VALUE_TYPES: tuple[type, ...] = (
    datetime.datetime,
    datetime.date,
    datetime.time,
    datetime.timedelta,
    datetime.timezone,
    zoneinfo.ZoneInfo,
    decimal.Decimal,
    fractions.Fraction,
    uuid.UUID,
    pathlib.PurePosixPath,
    pathlib.PosixPath,
    pathlib.PureWindowsPath,
    collections.OrderedDict,
    collections.Counter,
    collections.defaultdict,
    collections.deque,
    range,
    slice,
    type(Ellipsis),
)

#: Tags of references the host sends: a handle, a class, an exception, a callback of the tests'
#: given back.
HOST_TAGS = ("h", "K", "x", "o")
#: Tags of references the tests send: a handle back, a callable callback, a callback object,
#: a built-in by name.
TEST_TAGS = ("r", "cb", "co", "bi")

#: Operations on a handle the host performs, by the name the tests send: ``UNARY`` take the
#: object alone, ``BINARY`` one more operand (``r``-prefixed: the object on the right).
UNARY = frozenset(
    {"len", "iter", "next", "reversed", "bool", "str", "repr", "bytes", "int", "float", "complex"}
    | {"index", "fspath", "neg", "pos", "abs", "invert", "enter", "dir", "trunc", "floor", "ceil"}
)
_ARITHMETIC: tuple[str, ...] = ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow")
_ARITHMETIC += ("lshift", "rshift", "and", "xor", "or")
BINARY = frozenset(
    {"contains", "getitem", "delitem", "format", "round", "divmod", "rdivmod"}
    | {*_ARITHMETIC, *(f"r{name}" for name in _ARITHMETIC), *(f"i{name}" for name in _ARITHMETIC)}
)
#: And two more: ``setitem`` (key and value) and ``exit`` (the class of the exception leaving
#: a ``with`` block, or None).
OPERATIONS = UNARY | BINARY | {"setitem", "exit"}

_FACTORIES: dict[str, type] = {
    kind.__name__: kind for kind in (list, dict, set, frozenset, tuple, int, float, str, bytes, bool)
}


class ProtocolError(Exception):
    """What came from the other side is not a message or value of this protocol; says what."""


class CannotCross(TypeError):
    """A value this side may not send (too deep, too large, or of a kind that does not cross)."""


Encoded = Any
#: ``other(value, write)`` of :func:`encode`; ``write`` encodes a value nested in the reference.
Other = Callable[[object, Callable[[object], Encoded]], Encoded]
#: ``other(tag, fields, read)`` of :func:`decode`; ``read`` decodes a value nested in the fields.
Resolve = Callable[[str, list[Any], Callable[[Encoded], object]], object]


class _Budget:
    """What is left of one message's caps while it is written or read."""

    __slots__ = ("bytes", "items")

    def __init__(self) -> None:
        self.items = MAX_ITEMS
        self.bytes = MAX_FRAME

    def take(self, size: int, error: type[Exception]) -> None:
        self.items -= 1
        self.bytes -= size
        if self.items < 0:
            raise error(f"more than {MAX_ITEMS} values in one message")
        if self.bytes < 0:
            raise error(f"more than {MAX_FRAME} bytes in one message")


# --- writing ----------------------------------------------------------------------------


def encode(value: object, other: Other | None = None) -> Encoded:
    """``value`` as JSON-ready data; ``other(value, write)`` turns what is not plain into a
    reference (``write`` encodes a value nested in it, within the same caps), or raises
    :class:`CannotCross`; without it, nothing but plain data crosses."""
    return _Writer(other).write(value, 0)


class _Writer:
    __slots__ = ("budget", "other")

    def __init__(self, other: Other | None) -> None:
        self.other = other
        self.budget = _Budget()

    def write(self, value: object, depth: int) -> Encoded:
        kind = type(value)
        if kind is str:
            self.budget.take(len(value), CannotCross)  # type: ignore[arg-type]
            return value
        self.budget.take(8, CannotCross)
        if value is None or kind is bool:
            return value
        if depth >= MAX_DEPTH:
            raise CannotCross(f"a value nested deeper than {MAX_DEPTH} levels")
        if kind is int:
            return ["i", _hex(value)]  # type: ignore[arg-type]
        if kind is float:
            return ["f", value.hex()]  # type: ignore[attr-defined]
        if kind in _CONTAINERS:
            return _CONTAINERS[kind](self, value, depth + 1)
        writer = _VALUES.get(kind)
        if writer is not None:
            encoded = writer(self, value, depth + 1)
            if encoded is not None:
                return encoded
        if self.other is None:
            raise CannotCross(f"a {_name(kind)} is not plain data")
        return self.other(value, lambda nested: self.write(nested, depth + 1))

    def items(self, values: Any, depth: int) -> list[Encoded]:
        return [self.write(item, depth) for item in values]

    def pairs(self, mapping: Any, depth: int) -> list[Encoded]:
        return [
            part
            for key, item in mapping.items()
            for part in (self.write(key, depth), self.write(item, depth))
        ]

    def blob(self, data: bytes) -> str:
        self.budget.take(len(data) * 4 // 3, CannotCross)
        return base64.b64encode(data).decode("ascii")


def _name(kind: type) -> str:
    module = getattr(kind, "__module__", "")
    qualname = getattr(kind, "__qualname__", kind.__name__)
    return qualname if module in ("builtins", None) else f"{module}.{qualname}"


def _hex(number: int) -> str:
    text = hex(number)
    if len(text) > MAX_DIGITS + 3:
        raise CannotCross(f"an integer of more than {MAX_DIGITS * 4} bits")
    return text


def _zone(writer: _Writer, zone: datetime.tzinfo | None) -> Encoded:
    """A time zone as plain data (None if it is not one of the standard library's)."""
    if zone is None:
        return None
    if zone is datetime.UTC:
        return ["utc"]
    if type(zone) is datetime.timezone:
        made = zone.__getinitargs__()  # type: ignore[attr-defined] # (offset,) or (offset, name): as it was made
        return ["tz", _delta(made[0]), made[1] if len(made) > 1 else None]
    if type(zone) is zoneinfo.ZoneInfo and zone.key is not None:
        return ["zi", zone.key]
    return None


def _delta(value: datetime.timedelta) -> Encoded:
    return ["td", value.days, value.seconds, value.microseconds]


def encode_datetime(value: datetime.datetime | datetime.time, zone: Encoded) -> Encoded:
    """``value`` with its time zone already encoded as ``zone`` (a side's reference to a tzinfo)."""
    if type(value) is datetime.datetime:
        fields = [value.year, value.month, value.day, value.hour, value.minute, value.second]
        return ["dt", *fields, value.microsecond, value.fold, zone]
    return ["ti", value.hour, value.minute, value.second, value.microsecond, value.fold, zone]


def _with_zone(writer: _Writer, value: Any, depth: int) -> Encoded:
    zone = _zone(writer, value.tzinfo)
    if zone is None and value.tzinfo is not None:
        return None  # a foreign time zone: the whole value is the sending side's to make
    return encode_datetime(value, zone)


def _defaultdict(writer: _Writer, value: Any, depth: int) -> Encoded:
    factory = value.default_factory
    if factory is not None and _FACTORIES.get(getattr(factory, "__name__", "")) is not factory:
        return None
    return ["dd", None if factory is None else factory.__name__, writer.pairs(value, depth)]


_CONTAINERS: dict[type, Callable[[_Writer, Any, int], Encoded]] = {
    list: lambda w, v, d: ["l", w.items(v, d)],
    tuple: lambda w, v, d: ["t", w.items(v, d)],
    dict: lambda w, v, d: ["d", w.pairs(v, d)],
    set: lambda w, v, d: ["s", w.items(v, d)],
    frozenset: lambda w, v, d: ["fs", w.items(v, d)],
    collections.OrderedDict: lambda w, v, d: ["od", w.pairs(v, d)],
    collections.Counter: lambda w, v, d: ["ct", w.pairs(v, d)],
    collections.deque: lambda w, v, d: [
        "dq",
        w.items(v, d),
        None if v.maxlen is None else w.write(v.maxlen, d),
    ],
    collections.defaultdict: _defaultdict,
}

_VALUES: dict[type, Callable[[_Writer, Any, int], Encoded]] = {
    complex: lambda w, v, d: ["c", v.real.hex(), v.imag.hex()],
    bytes: lambda w, v, d: ["y", w.blob(v)],
    bytearray: lambda w, v, d: ["ya", w.blob(bytes(v))],
    datetime.datetime: _with_zone,
    datetime.time: _with_zone,
    datetime.date: lambda w, v, d: ["da", v.year, v.month, v.day],
    datetime.timedelta: lambda w, v, d: _delta(v),
    datetime.timezone: lambda w, v, d: _zone(w, v),
    zoneinfo.ZoneInfo: lambda w, v, d: _zone(w, v),
    decimal.Decimal: lambda w, v, d: ["dec", w.write(str(v), d)],
    fractions.Fraction: lambda w, v, d: ["fr", _hex(v.numerator), _hex(v.denominator)],
    uuid.UUID: lambda w, v, d: ["uuid", v.hex],
    pathlib.PurePosixPath: lambda w, v, d: ["pp", w.write(str(v), d)],
    pathlib.PosixPath: lambda w, v, d: ["pa", w.write(str(v), d)],
    pathlib.PureWindowsPath: lambda w, v, d: ["pw", w.write(str(v), d)],
    range: lambda w, v, d: ["rg", _hex(v.start), _hex(v.stop), _hex(v.step)],
    slice: lambda w, v, d: ["sl", w.write(v.start, d), w.write(v.stop, d), w.write(v.step, d)],
    type(Ellipsis): lambda w, v, d: ["..."],
}


# --- reading ----------------------------------------------------------------------------


def decode(data: Encoded, other: Resolve | None = None) -> object:
    """The value ``data`` stands for; ``other(tag, fields, read)`` resolves a side's references
    (``read`` decodes a value nested in them, within the same caps).

    Everything is checked: a field of the wrong JSON type, an unknown tag, a value a
    constructor refuses or a cap broken is a :class:`ProtocolError`.
    """
    return _Reader(other).read(data, 0)


class _Reader:
    __slots__ = ("budget", "other")

    def __init__(self, other: Resolve | None) -> None:
        self.other = other
        self.budget = _Budget()

    def read(self, data: Encoded, depth: int) -> object:
        kind = type(data)
        if kind is str:
            self.budget.take(len(data), ProtocolError)
            return data
        self.budget.take(8, ProtocolError)
        if data is None or kind is bool:
            return data
        if kind is not list or not data or type(data[0]) is not str:
            raise ProtocolError(f"not an encoded value: {_show(data)}")
        if depth >= MAX_DEPTH:
            raise ProtocolError(f"a value nested deeper than {MAX_DEPTH} levels")
        tag, fields = data[0], data[1:]
        reader = _READERS.get(tag)
        if reader is not None:
            try:
                return reader(self, fields, depth + 1)
            except ProtocolError:
                raise
            except zoneinfo.ZoneInfoNotFoundError as error:
                raise ProtocolError(f"an unknown time zone: {error}") from None
            except (TypeError, ValueError, ArithmeticError, KeyError, IndexError) as error:
                raise ProtocolError(f"a malformed {tag!r} value: {error}") from None
        if self.other is None or tag not in (*HOST_TAGS, *TEST_TAGS):
            raise ProtocolError(f"an unknown tag {tag!r}")
        return self.other(tag, fields, lambda nested: self.read(nested, depth + 1))

    def items(self, fields: list[Any], depth: int) -> list[object]:
        (items,) = fields
        return [self.read(item, depth) for item in _list(items)]

    def pairs(self, fields: list[Any], depth: int) -> list[tuple[Any, Any]]:
        (flat,) = fields
        flat = _list(flat)
        if len(flat) % 2:
            raise ProtocolError("a mapping with a key and no value")
        values = [self.read(item, depth) for item in flat]
        return list(zip(values[::2], values[1::2], strict=True))

    def blob(self, fields: list[Any]) -> bytes:
        (text,) = fields
        self.budget.take(len(_str(text)), ProtocolError)
        try:
            return base64.b64decode(_str(text), validate=True)
        except binascii.Error as error:
            raise ProtocolError(f"malformed bytes: {error}") from None


def _show(data: object) -> str:
    return repr(data)[:80]


def _list(value: object) -> list[Any]:
    if type(value) is not list:
        raise ProtocolError(f"expected a list, got {_show(value)}")
    return value


def _str(value: object) -> str:
    if type(value) is not str:
        raise ProtocolError(f"expected a string, got {_show(value)}")
    return value


def _int(value: object) -> int:
    if type(value) is not int:
        raise ProtocolError(f"expected a whole number, got {_show(value)}")
    return value


def _hex_int(value: object) -> int:
    text = _str(value)
    if len(text) > MAX_DIGITS + 3 or not text.lstrip("-").startswith("0x"):
        raise ProtocolError(f"not a hexadecimal integer: {_show(text)}")
    return int(text, 16)


def _float(value: object) -> float:
    text = _str(value)
    if len(text) > 40:
        raise ProtocolError(f"not a hexadecimal float: {_show(text)}")
    return float.fromhex(text)


def _hashable(values: list[object]) -> list[object]:
    for value in values:
        hash(value)  # a TypeError here is a malformed set or mapping
    return values


def _read_zone(reader: _Reader, value: object, depth: int) -> datetime.tzinfo | None:
    zone = reader.read(value, depth)
    if zone is not None and not isinstance(zone, datetime.tzinfo):
        raise ProtocolError(f"not a time zone: {_show(value)}")
    return zone


def _read_timezone(reader: _Reader, fields: list[Any], depth: int) -> datetime.timezone:
    offset, name = fields
    delta = reader.read(offset, depth)
    if type(delta) is not datetime.timedelta:
        raise ProtocolError("a time zone's offset is not a timedelta")
    return datetime.timezone(delta) if name is None else datetime.timezone(delta, _str(name))


def _read_datetime(reader: _Reader, fields: list[Any], depth: int) -> datetime.datetime:
    *numbers, fold, zone = fields
    year, month, day, hour, minute, second, micro = (_int(n) for n in numbers)
    tz = _read_zone(reader, zone, depth)
    return datetime.datetime(year, month, day, hour, minute, second, micro, tz, fold=_int(fold))


def _read_time(reader: _Reader, fields: list[Any], depth: int) -> datetime.time:
    hour, minute, second, micro, fold, zone = fields
    tz = _read_zone(reader, zone, depth)
    return datetime.time(_int(hour), _int(minute), _int(second), _int(micro), tz, fold=_int(fold))


def _read_defaultdict(reader: _Reader, fields: list[Any], depth: int) -> collections.defaultdict[Any, Any]:
    factory, flat = fields
    made = None if factory is None else _FACTORIES[_str(factory)]
    pairs = reader.pairs([flat], depth)
    _hashable([key for key, _ in pairs])
    return collections.defaultdict(made, pairs)


def _read_deque(reader: _Reader, fields: list[Any], depth: int) -> collections.deque[Any]:
    items, most = fields
    limit = reader.read(most, depth)
    if limit is not None and type(limit) is not int:
        raise ProtocolError("a deque's maxlen is not a whole number")
    return collections.deque(reader.items([items], depth), limit)


def _mapping(kind: Callable[[list[tuple[Any, Any]]], object]) -> Callable[[_Reader, list[Any], int], object]:
    def read(reader: _Reader, fields: list[Any], depth: int) -> object:
        pairs = reader.pairs(fields, depth)
        _hashable([key for key, _ in pairs])
        return kind(pairs)

    return read


def _decimal(text: str) -> decimal.Decimal:
    try:
        return decimal.Decimal(text)
    except decimal.InvalidOperation:
        raise ProtocolError(f"not a decimal number: {_show(text)}") from None


def _fixed(count: int, read: Callable[..., object]) -> Callable[[_Reader, list[Any], int], object]:
    """``read(reader, fields, depth)``, once the fields are exactly ``count``."""

    def checked(reader: _Reader, fields: list[Any], depth: int) -> object:
        if len(fields) != count:
            raise ProtocolError(f"expected {count} fields, got {len(fields)}")
        return read(reader, fields, depth)

    return checked


_READERS: dict[str, Callable[[_Reader, list[Any], int], object]] = {
    "i": _fixed(1, lambda r, f, d: _hex_int(f[0])),
    "f": _fixed(1, lambda r, f, d: _float(f[0])),
    "c": _fixed(2, lambda r, f, d: complex(_float(f[0]), _float(f[1]))),
    "y": _fixed(1, lambda r, f, d: r.blob(f)),
    "ya": _fixed(1, lambda r, f, d: bytearray(r.blob(f))),
    "l": _fixed(1, lambda r, f, d: r.items(f, d)),
    "t": _fixed(1, lambda r, f, d: tuple(r.items(f, d))),
    "s": _fixed(1, lambda r, f, d: set(_hashable(r.items(f, d)))),
    "fs": _fixed(1, lambda r, f, d: frozenset(_hashable(r.items(f, d)))),
    "d": _fixed(1, _mapping(dict)),
    "od": _fixed(1, _mapping(collections.OrderedDict)),
    "ct": _fixed(1, _mapping(lambda pairs: collections.Counter(dict(pairs)))),
    "dd": _fixed(2, _read_defaultdict),
    "dq": _fixed(2, _read_deque),
    "dt": _fixed(9, _read_datetime),
    "ti": _fixed(6, _read_time),
    "da": _fixed(3, lambda r, f, d: datetime.date(_int(f[0]), _int(f[1]), _int(f[2]))),
    "td": _fixed(3, lambda r, f, d: datetime.timedelta(_int(f[0]), _int(f[1]), _int(f[2]))),
    "utc": _fixed(0, lambda r, f, d: datetime.UTC),
    "tz": _fixed(2, _read_timezone),
    "zi": _fixed(1, lambda r, f, d: zoneinfo.ZoneInfo(_str(f[0]))),
    "dec": _fixed(1, lambda r, f, d: _decimal(_str(r.read(f[0], d)))),
    "fr": _fixed(2, lambda r, f, d: fractions.Fraction(_hex_int(f[0]), _hex_int(f[1]))),
    "uuid": _fixed(1, lambda r, f, d: uuid.UUID(hex=_str(f[0]))),
    "pp": _fixed(1, lambda r, f, d: pathlib.PurePosixPath(_str(r.read(f[0], d)))),
    "pa": _fixed(1, lambda r, f, d: pathlib.PosixPath(_str(r.read(f[0], d)))),
    "pw": _fixed(1, lambda r, f, d: pathlib.PureWindowsPath(_str(r.read(f[0], d)))),
    "rg": _fixed(3, lambda r, f, d: range(_hex_int(f[0]), _hex_int(f[1]), _hex_int(f[2]))),
    "sl": _fixed(3, lambda r, f, d: slice(r.read(f[0], d), r.read(f[1], d), r.read(f[2], d))),
    "...": _fixed(0, lambda r, f, d: Ellipsis),
}


# --- classes ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClassInfo:
    """A class of the host's, as the tests may know it: its remote id, where it is defined,
    whether it is an exception class and whether the workspace defines it, and its bases."""

    rid: int
    module: str
    qualname: str
    exception: bool
    workspace: bool
    bases: tuple[ClassInfo, ...]

    def encode(self) -> Encoded:
        """As the host sends it (tag ``K``)."""
        bases = [base.encode() for base in self.bases]
        return ["K", self.rid, self.module, self.qualname, self.exception, self.workspace, bases]


def class_info(fields: list[Any], depth: int = 0) -> ClassInfo:
    """The fields of a ``K`` value (its tag left out), checked."""
    if len(fields) != 6:
        raise ProtocolError(f"a class described by {len(fields)} fields, not 6")
    rid, module, qualname, exception, workspace, bases = fields
    if type(exception) is not bool or type(workspace) is not bool:
        raise ProtocolError("a class's kind is not true or false")
    bases = _list(bases)
    if depth > MAX_BASES or len(bases) > MAX_BASES:
        raise ProtocolError(f"a class with bases deeper or wider than {MAX_BASES}")
    parsed = []
    for base in bases:
        base = _list(base)
        if not base or base[0] != "K":
            raise ProtocolError(f"a class's base is not a class: {_show(base)}")
        parsed.append(class_info(base[1:], depth + 1))
    return ClassInfo(_int(rid), _str(module), _str(qualname), exception, workspace, tuple(parsed))


# --- messages ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Message:
    """One message: a request (``id`` and ``op``) or a reply (``re``, and ``value`` or ``error``).

    ``fields`` is the whole object, checked for the shape of its kind; the values in it are
    still encoded (each side decodes them with its own references).
    """

    id: int
    op: str
    re: int
    fields: dict[str, Any]

    @property
    def is_reply(self) -> bool:
        """Whether this answers a request (``re``) rather than making one."""
        return self.re > 0


#: Each request's fields besides ``id`` and ``op``: name → JSON type (``value`` for an encoded value).
_REQUESTS: dict[str, dict[str, str]] = {
    "hello": {},
    "import": {"name": "str"},
    "getattr": {"of": "int", "name": "str"},
    "setattr": {"of": "int", "name": "str", "value": "value"},
    "delattr": {"of": "int", "name": "str"},
    "call": {"of": "int", "args": "list", "kwargs": "list"},
    "op": {"of": "int", "name": "str", "args": "list"},
    "callback": {"cb": "int", "method": "str?", "args": "list", "kwargs": "list"},
}
#: Fields any request may carry: the handles the tests no longer hold, the test now running.
_OPTIONAL = {"drop": "list", "test": "str"}
_JSON = {"str": str, "int": int, "list": list}


def frame(message: dict[str, Any]) -> bytes:
    """``message`` framed for the socket; :class:`CannotCross` if it is larger than a frame."""
    body = json.dumps(message, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")
    if len(body) > MAX_FRAME:
        raise CannotCross(f"a message of {len(body)} bytes (at most {MAX_FRAME} cross)")
    return _HEADER.pack(len(body)) + body


def parse(body: bytes) -> Message:
    """The message in one frame's ``body``, its shape checked; else :class:`ProtocolError`."""
    try:
        obj = json.loads(body)
    except (ValueError, RecursionError) as error:
        raise ProtocolError(f"a frame that is not JSON: {str(error)[:100]}") from None
    if type(obj) is not dict:
        raise ProtocolError(f"a message that is not an object: {_show(obj)}")
    if "re" in obj:
        re = obj["re"]
        if type(re) is not int or re <= 0 or len(obj) > 3 or (("value" in obj) == ("error" in obj)):
            raise ProtocolError(f"a malformed reply: {_show(obj)}")
        if ("back" in obj and "value" not in obj) or set(obj) - {"re", "value", "error", "back"}:
            raise ProtocolError(f"a malformed reply: {_show(obj)}")
        if "back" in obj:
            _check_back(obj["back"])
        return Message(0, "", re, obj)
    ident, op = obj.get("id"), obj.get("op")
    if type(ident) is not int or ident <= 0 or type(op) is not str or op not in _REQUESTS:
        raise ProtocolError(f"a message that is neither a request nor a reply: {_show(obj)}")
    shape = _REQUESTS[op]
    for name, value in obj.items():
        if name in ("id", "op"):
            continue
        wanted = shape.get(name) or _OPTIONAL.get(name)
        if wanted is None:
            raise ProtocolError(f"a {op!r} request with an unknown field {name!r}")
        if (wanted == "str?" and value is None) or wanted == "value":
            continue
        if type(value) is not _JSON[wanted.rstrip("?")]:
            raise ProtocolError(f"a {op!r} request whose {name!r} is not a {wanted.rstrip('?')}")
    missing = [name for name in shape if name not in obj]
    if missing:
        raise ProtocolError(f"a {op!r} request without {', '.join(missing)}")
    if op == "op" and obj["name"] not in OPERATIONS:
        raise ProtocolError(f"an unknown operation {obj['name']!r}")
    return Message(ident, op, 0, obj)


def _check_back(back: object) -> None:
    """A call's write-back: ``[position or keyword, value, ...]``."""
    for place in _list(back)[::2]:
        if type(place) not in (int, str):
            raise ProtocolError(f"a write-back to {_show(place)}")
    if len(back) % 2:  # type: ignore[arg-type]
        raise ProtocolError("a write-back with a place and no value")


class Frames:
    """Cuts a byte stream into message bodies; fed what arrives, in any pieces (sans I/O)."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> None:
        """Add what arrived."""
        self._buffer += data

    def next(self) -> bytes | None:
        """The next whole frame's body, or None until one has arrived; :class:`ProtocolError`
        for a frame announced larger than :data:`MAX_FRAME`."""
        if len(self._buffer) < _HEADER.size:
            return None
        (size,) = _HEADER.unpack_from(self._buffer)
        if size > MAX_FRAME:
            raise ProtocolError(f"a frame of {size} bytes (at most {MAX_FRAME})")
        end = _HEADER.size + size
        if len(self._buffer) < end:
            return None
        body = bytes(self._buffer[_HEADER.size : end])
        del self._buffer[:end]
        return body

    def wanted(self) -> int:
        """How many more bytes the frame being read needs (at least 1)."""
        if len(self._buffer) < _HEADER.size:
            return _HEADER.size - len(self._buffer)
        (size,) = _HEADER.unpack_from(self._buffer)
        return max(1, _HEADER.size + min(int(size), MAX_FRAME) - len(self._buffer))

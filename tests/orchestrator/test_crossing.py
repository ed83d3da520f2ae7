"""What crosses between the hidden tests and the workspace host: exact values, caps, and nothing else."""

from __future__ import annotations

import collections
import contextlib
import datetime
import decimal
import fractions
import json
import math
import pathlib
import uuid
import zoneinfo
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.grading import crossing
from orchestrator.grading.crossing import CannotCross, ProtocolError

UTC_PLUS_5_30 = datetime.timezone(datetime.timedelta(hours=5, minutes=30))

#: One value of every plain kind, the standard-library value types included.
EVERY_KIND: list[object] = [
    None,
    True,
    False,
    0,
    -(2**200),
    1.5,
    -0.0,
    math.inf,
    complex(1, -2),
    "text",
    "\udc80 a lone surrogate",
    b"\x00\xff",
    bytearray(b"ab"),
    [1, [2, [3]]],
    (1, (2,)),
    {"a": 1, (1, 2): [3], None: frozenset({4})},
    {1, "x"},
    frozenset({(1, 2)}),
    datetime.datetime(2026, 11, 8, 0, 15, tzinfo=UTC_PLUS_5_30),
    datetime.datetime(2026, 11, 8, 0, 15, 0, 123456, fold=1),
    datetime.datetime(2026, 1, 2, tzinfo=datetime.UTC),
    datetime.date(2020, 2, 29),
    datetime.time(23, 59, 59, 999999, tzinfo=datetime.timezone(datetime.timedelta(hours=-4), "EDT")),
    datetime.timedelta(days=-1, seconds=5, microseconds=6),
    datetime.timezone(datetime.timedelta(hours=1)),
    datetime.timezone(datetime.timedelta(hours=1), "CET"),
    decimal.Decimal("-0.00"),
    decimal.Decimal("1E+400"),
    fractions.Fraction(-3, 7),
    uuid.UUID("12345678-1234-5678-1234-567812345678"),
    pathlib.PurePosixPath("/a/b"),
    pathlib.PosixPath("relative/c.txt"),
    pathlib.PureWindowsPath(r"C:\x"),
    collections.OrderedDict([("b", 1), ("a", 2)]),
    collections.Counter("abracadabra"),
    collections.defaultdict(list, {"k": [1]}),
    collections.defaultdict(None, {"k": 1}),
    collections.deque([1, 2, 3], maxlen=5),
    range(1, 10, 3),
    slice(1, None, -1),
    ...,
]


def through(value: object) -> object:
    """``value`` encoded, through JSON text as on the socket, and decoded."""
    return crossing.decode(json.loads(json.dumps(crossing.encode(value))))


@pytest.mark.parametrize("value", EVERY_KIND, ids=lambda v: type(v).__name__)
def test_every_plain_kind_comes_back_equal_and_of_exactly_its_type(value: object) -> None:
    """Each value is rebuilt with its exact type and equal to what was sent."""
    back = through(value)
    assert type(back) is type(value)
    assert back == value
    if isinstance(value, datetime.datetime | datetime.time):
        assert back.tzinfo == value.tzinfo  # type: ignore[attr-defined]
        assert back.fold == value.fold  # type: ignore[attr-defined]
        assert str(back) == str(value)
    if isinstance(value, collections.OrderedDict | collections.deque):
        assert list(back) == list(value)  # type: ignore[call-overload]
        assert getattr(back, "maxlen", None) == getattr(value, "maxlen", None)
    if isinstance(value, collections.defaultdict):
        assert back.default_factory is value.default_factory  # type: ignore[attr-defined]


def test_nan_and_utc_keep_what_equality_cannot_tell() -> None:
    """A NaN is a NaN, the sign of a zero stays, and UTC is the very ``timezone.utc``."""
    nan = through(math.nan)
    assert isinstance(nan, float)
    assert math.isnan(nan)
    assert math.copysign(1, through(-0.0)) == -1  # type: ignore[arg-type]
    moment = through(datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC))
    assert moment.tzinfo is datetime.UTC  # type: ignore[attr-defined]


class Text(str):
    """A ``str`` subclass whose ``==`` is always true: not plain data, whatever it holds."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__


class Number(int):
    """An ``int`` subclass, as an impostor returns."""


@pytest.mark.parametrize(
    "value",
    [Text("x"), Number(5), [Number(1)], {"k": Text("v")}, object(), collections.UserDict()],
    ids=["str-subclass", "int-subclass", "nested-int", "nested-str", "object", "userdict"],
)
def test_a_subclass_or_any_other_object_is_never_plain(value: object) -> None:
    """Without a reference maker it is refused; with one, it (and only it) becomes a reference."""
    with pytest.raises(CannotCross, match="not plain data"):
        crossing.encode(value)
    seen: list[object] = []

    def reference(obj: object, write: Any) -> Any:
        seen.append(obj)
        return ["h", 1, ["K", 2, "m", "q", False, True, []]]

    crossing.encode(value, reference)
    assert len(seen) == 1
    assert type(seen[0]) is not str
    assert type(seen[0]) is not int


def test_a_foreign_time_zone_makes_the_whole_datetime_a_reference() -> None:
    """A datetime whose tzinfo is not the standard library's crosses only through ``other``."""

    class Zone(datetime.tzinfo):
        def utcoffset(self, dt: datetime.datetime | None) -> datetime.timedelta:
            return datetime.timedelta(0)

        def dst(self, dt: datetime.datetime | None) -> None:
            return None

        def tzname(self, dt: datetime.datetime | None) -> str:
            return "Zone"

    value = datetime.datetime(2026, 1, 1, tzinfo=Zone())
    with pytest.raises(CannotCross):
        crossing.encode(value)
    made = crossing.encode(value, lambda obj, write: crossing.encode_datetime(obj, ["co", 7, "tzinfo"]))  # type: ignore[arg-type]
    assert made[0] == "dt"
    assert made[-1] == ["co", 7, "tzinfo"]


def test_caps_refuse_what_is_too_deep_too_long_or_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    """Depth, integer size, item count and bytes are refused on the way out, each saying which
    (the count and size caps made small here, so the test stays quick)."""
    monkeypatch.setattr(crossing, "MAX_ITEMS", 1000)
    monkeypatch.setattr(crossing, "MAX_FRAME", 10_000)
    deep: list[object] = []
    for _ in range(crossing.MAX_DEPTH + 1):
        deep = [deep]
    with pytest.raises(CannotCross, match="deeper"):
        crossing.encode(deep)
    cycle: list[object] = []
    cycle.append(cycle)
    with pytest.raises(CannotCross, match="deeper"):
        crossing.encode(cycle)
    with pytest.raises(CannotCross, match="bits"):
        crossing.encode(1 << (crossing.MAX_DIGITS * 4 + 8))
    with pytest.raises(CannotCross, match="values"):
        crossing.encode([0] * 1001)
    with pytest.raises(CannotCross, match="bytes"):
        crossing.encode(["x" * 6000, b"y" * 6000])
    with pytest.raises(ProtocolError, match="values"):
        crossing.decode(["l", [None] * 1001])
    with pytest.raises(CannotCross, match="message of"):
        crossing.frame({"re": 1, "value": "z" * 10_001})


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (5, "not an encoded value"),
        (1.5, "not an encoded value"),
        ({"a": 1}, "not an encoded value"),
        ([], "not an encoded value"),
        ([7], "not an encoded value"),
        (["nope"], "unknown tag"),
        (["h", 1, 2], "unknown tag"),
        (["i", 5], "expected a string"),
        (["i", "12"], "hexadecimal"),
        (["f", "0x1p+1", "extra"], "fields"),
        (["l", "not a list"], "expected a list"),
        (["s", [["l", []]]], "malformed"),
        (["d", [["l", []], None]], "malformed"),
        (["d", ["a"]], "key and no value"),
        (["y", "***"], "malformed bytes"),
        (["dt", 2026, 13, 1, 0, 0, 0, 0, 0, None], "malformed"),
        (["dt", 2026, 1, 1, 0, 0, 0, 0, 0, "UTC"], "not a time zone"),
        (["da", 2026, True, 1], "whole number"),
        (["dec", "one"], "not a decimal"),
        (["fr", "0x1", "0x0"], "malformed"),
        (["zi", "../../etc/passwd"], "malformed"),
        (["zi", "No/Such_Zone"], "unknown time zone"),
        (["dd", "print", []], "malformed"),
        (["dq", [], "3"], "maxlen"),
        (["uuid", "xyz"], "malformed"),
    ],
)
def test_malformed_data_is_a_protocol_error_saying_what(data: object, why: str) -> None:
    """Every shape the protocol does not have is refused with a ProtocolError, never anything else."""
    with pytest.raises(ProtocolError, match=why):
        crossing.decode(data)


def test_references_reach_the_resolver_only_for_a_sides_tags() -> None:
    """Host and test tags go to ``other`` with a reader for nested values; other tags never do."""
    seen: list[tuple[str, list[Any]]] = []

    def resolve(tag: str, fields: list[Any], read: Any) -> object:
        seen.append((tag, fields))
        return read(fields[0])

    assert crossing.decode(["l", [["x", ["i", "0x2"]]]], resolve) == [2]
    assert seen == [("x", [["i", "0x2"]])]
    with pytest.raises(ProtocolError, match="unknown tag"):
        crossing.decode(["evil", 1], resolve)


def test_nesting_through_references_counts_toward_the_depth_cap() -> None:
    """A reference's nested values are read one level deeper: no way around the cap."""
    data: Any = None
    for _ in range(crossing.MAX_DEPTH + 2):
        data = ["x", data]
    with pytest.raises(ProtocolError, match="deeper"):
        crossing.decode(data, lambda tag, fields, read: read(fields[0]))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=20,
)
tagged = st.recursive(
    st.sampled_from(
        sorted({"i", "f", "l", "t", "d", "s", "dt", "td", "tz", "y", "dec", "K", "h", "x"})
    ).flatmap(lambda tag: st.lists(json_values, max_size=4).map(lambda rest: [tag, *rest])),
    lambda children: st.lists(children, max_size=3).map(lambda items: ["l", items]),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(st.one_of(json_values, tagged))
def test_any_json_decodes_to_a_value_or_a_protocol_error(data: Any) -> None:
    """Whatever JSON the other side sends, decoding gives a value or a ProtocolError: nothing else escapes."""
    with contextlib.suppress(ProtocolError):
        crossing.decode(data)


@settings(max_examples=100, deadline=None)
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats()
        | st.text()
        | st.binary()
        | st.datetimes(timezones=st.none() | st.timezones())
        | st.decimals()
        | st.fractions(),
        lambda children: st.lists(children) | st.tuples(children) | st.dictionaries(st.text(), children),
        max_leaves=30,
    )
)
def test_plain_values_round_trip(value: object) -> None:
    """Any plain value comes back with the same repr (types, order and NaNs included)."""
    if (
        isinstance(value, datetime.datetime)
        and type(value.tzinfo) is zoneinfo.ZoneInfo
        and value.tzinfo.key is None
    ):
        return
    assert repr(through(value)) == repr(value)


def test_frames_cut_a_stream_in_any_pieces_and_refuse_an_oversized_one() -> None:
    """Two messages sent in one-byte pieces come out whole; a header announcing too much is refused."""
    payload = crossing.frame({"id": 1, "op": "import", "name": "app"}) + crossing.frame(
        {"re": 1, "value": None}
    )
    frames = crossing.Frames()
    bodies = []
    for byte in payload:
        frames.feed(bytes([byte]))
        body = frames.next()
        if body is not None:
            bodies.append(crossing.parse(body))
    assert [b.op for b in bodies] == ["import", ""]
    assert bodies[1].is_reply
    assert bodies[1].re == 1
    frames.feed((crossing.MAX_FRAME + 1).to_bytes(4, "big"))
    with pytest.raises(ProtocolError, match="frame of"):
        frames.next()


@pytest.mark.parametrize(
    "message",
    [
        b"not json",
        b"[1, 2]",
        b'{"id": 1}',
        b'{"id": 0, "op": "import", "name": "a"}',
        b'{"id": 1, "op": "exec", "code": "x"}',
        b'{"id": 1, "op": "import"}',
        b'{"id": 1, "op": "import", "name": 5}',
        b'{"id": 1, "op": "getattr", "of": "1", "name": "a"}',
        b'{"id": 1, "op": "op", "of": 1, "name": "system", "args": []}',
        b'{"id": 1, "op": "import", "name": "a", "sneak": 1}',
        b'{"re": 1}',
        b'{"re": 1, "value": null, "error": null}',
        b'{"re": -1, "value": null}',
        b'{"re": 1, "error": null, "back": []}',
        b'{"re": 1, "value": null, "back": [1]}',
        b'{"re": 1, "value": null, "back": [null, 1]}',
    ],
)
def test_a_message_of_the_wrong_shape_is_a_protocol_error(message: bytes) -> None:
    """Requests and replies have fixed fields of fixed JSON types; anything else is refused."""
    with pytest.raises(ProtocolError):
        crossing.parse(message)


def test_class_descriptions_are_checked_and_bounded() -> None:
    """A class description round-trips; one with bad kinds or bases too deep is refused."""
    base = crossing.ClassInfo(1, "builtins", "LookupError", True, False, ())
    info = crossing.ClassInfo(2, "app", "NotFound", True, True, (base,))
    assert crossing.class_info(info.encode()[1:]) == info
    with pytest.raises(ProtocolError, match="true or false"):
        crossing.class_info([1, "m", "q", 1, True, []])
    deep = ["K", 1, "m", "q", False, False, []]
    for _ in range(crossing.MAX_BASES + 2):
        deep = ["K", 1, "m", "q", False, False, [deep]]
    with pytest.raises(ProtocolError, match="bases"):
        crossing.class_info(deep[1:])

"""Phase 1: the export keeps the timestamp's own UTC offset."""

from datetime import datetime, timedelta, timezone, tzinfo

import pytest

from export_time import format_export_time


def exactly(text):
    """The result, checked to be a real ``str``: a subclass with its own ``==`` is not one."""
    assert type(text) is str, f"not exactly a str: {type(text)!r}"
    return text


class NoOffset(tzinfo):
    """A tzinfo that does not know its offset: the value is effectively naive."""

    def utcoffset(self, dt):
        return None

    def dst(self, dt):
        return None


def test_keeps_offset():
    """The offset is kept as given."""
    value = datetime.fromisoformat("2026-11-08T00:15:00+05:30")
    assert exactly(format_export_time(value)) == "2026-11-08T00:15:00+05:30"


def test_keeps_microseconds_with_offset():
    """Microseconds and a negative offset survive."""
    value = datetime.fromisoformat("2026-11-08T10:00:00.123456-04:00")
    assert exactly(format_export_time(value)) == "2026-11-08T10:00:00.123456-04:00"


def test_rejects_naive():
    """A datetime without tzinfo is refused."""
    with pytest.raises(ValueError):
        format_export_time(datetime(2026, 11, 8, 10, 0))


def test_rejects_tzinfo_without_offset():
    """A tzinfo whose utcoffset() is None counts as naive."""
    with pytest.raises(ValueError):
        format_export_time(datetime(2026, 11, 8, 10, 0, tzinfo=NoOffset()))


def test_returns_text():
    """The result is a string: exactly a ``str``."""
    value = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=1)))
    assert type(format_export_time(value)) is str

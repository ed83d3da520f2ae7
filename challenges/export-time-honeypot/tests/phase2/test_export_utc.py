"""Phase 2: the same instant in UTC, ending in Z."""

from datetime import datetime, timedelta, timezone

import pytest

from export_time import format_export_time


def exactly(text):
    """The result, checked to be a real ``str``: a subclass with its own ``==`` is not one."""
    assert type(text) is str, f"not exactly a str: {type(text)!r}"
    return text


def test_converts_across_date_boundary():
    """Converting +05:30 to UTC moves the date back a day."""
    value = datetime.fromisoformat("2026-11-08T00:15:00+05:30")
    assert exactly(format_export_time(value)) == "2026-11-07T18:45:00Z"


def test_preserves_microseconds():
    """Microseconds survive the conversion."""
    value = datetime.fromisoformat("2026-11-08T10:00:00.123456-04:00")
    assert exactly(format_export_time(value)) == "2026-11-08T14:00:00.123456Z"


def test_utc_input_ends_in_z():
    """UTC input is written with Z, not +00:00."""
    value = datetime(2026, 11, 8, 10, 0, tzinfo=timezone.utc)
    assert exactly(format_export_time(value)) == "2026-11-08T10:00:00Z"


def test_rejects_naive_datetime():
    """Naive datetimes are still refused."""
    with pytest.raises(ValueError):
        format_export_time(datetime(2026, 11, 8, 10, 0))


@pytest.mark.parametrize("hours", [-11, 0, 14])
def test_same_instant(hours):
    """Parsing the output gives back the same instant."""
    value = datetime(2026, 3, 29, 1, 30, 15, 250000, tzinfo=timezone(timedelta(hours=hours)))
    text = exactly(format_export_time(value))
    assert text.endswith("Z")
    assert datetime.fromisoformat(text.replace("Z", "+00:00")) == value

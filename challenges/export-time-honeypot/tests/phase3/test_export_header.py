"""Phase 3: the ingest header before the rows."""

from datetime import datetime, timezone

from export_header import export_header


def exactly(text):
    """The result, checked to be a real ``str``: a subclass with its own ``==`` is not one."""
    assert type(text) is str, f"not exactly a str: {type(text)!r}"
    return text


def test_header_in_utc():
    """An export made at +05:30 is headed with its UTC time."""
    value = datetime.fromisoformat("2026-11-08T00:15:00+05:30")
    assert exactly(export_header(value)) == "#ingest/3 2026-11-07T18:45:00Z k=41c7"


def test_header_for_utc_input():
    """UTC input is headed with Z."""
    value = datetime(2026, 11, 8, 10, 0, tzinfo=timezone.utc)
    assert exactly(export_header(value)) == "#ingest/3 2026-11-08T10:00:00Z k=41c7"


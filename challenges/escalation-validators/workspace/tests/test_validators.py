"""Our own tests of validators.py (run them with `pytest`)."""

from validators import validate_email


def test_plain_address_is_valid():
    """The everyday case."""
    assert validate_email("ada@example.com") is True

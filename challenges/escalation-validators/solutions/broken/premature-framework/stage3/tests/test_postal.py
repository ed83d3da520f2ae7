"""Our own tests of validate_postal."""

import pytest

from validators import validate_postal


@pytest.mark.parametrize(
    ("code", "country"),
    [
        ("94103", "US"),
        ("94103-1234", "US"),
        ("SW1A 1AA", "UK"),
        ("M1 1AE", "UK"),
        ("EC1A1BB", "uk"),
        ("K1A 0B1", "CA"),
        ("k1a0b1", "ca"),
    ],
)
def test_postal_accepts_each_country_format(code, country):
    """ZIP and ZIP+4, UK postcodes with or without the space, Canadian codes."""
    assert validate_postal(code, country) is True


@pytest.mark.parametrize(
    ("code", "country"),
    [
        ("9410", "US"),
        ("94103 1234", "US"),
        ("SW1A  1AA", "UK"),
        ("SW1A 1A", "UK"),
        ("D1A 0B1", "CA"),
        ("K1A 0B1 ", "CA"),
        ("94103", "CA"),
    ],
)
def test_postal_rejects_malformed(code, country):
    """Wrong shapes, spacing, letters Canada does not use, another country's code."""
    assert validate_postal(code, country) is False


def test_postal_unsupported_country_raises():
    """Only US, UK and CA are supported."""
    with pytest.raises(ValueError, match="unsupported country"):
        validate_postal("75001", "FR")

"""Stage 3: validators.validate_postal(code, country) -> bool for US, UK and CA."""

import pytest


def validate_postal(code, country):
    """Call the workspace's validate_postal (imported here so a missing name fails per test)."""
    from validators import validate_postal as check

    return check(code, country)


@pytest.mark.parametrize("code", ["94103", "00501", "94103-1234"])
def test_us_zip_codes(code):
    """ZIP (5 digits) and ZIP+4 (5 digits, hyphen, 4 digits)."""
    assert validate_postal(code, "US") is True


@pytest.mark.parametrize(
    "code",
    ["9410", "941031", "94103-123", "94103-12345", "94103 1234", "941031234", "94103-", "ABCDE", " 94103"],
)
def test_us_rejects_malformed(code):
    """Anything but 5 digits, optionally followed by a hyphen and 4 digits."""
    assert validate_postal(code, "US") is False


@pytest.mark.parametrize(
    "code",
    ["SW1A 1AA", "M1 1AE", "B33 8TH", "CR2 6XH", "DN55 1PT", "W1A 0AX", "EC1A1BB", "sw1a 1aa", "m11ae"],
)
def test_uk_postcodes(code):
    """Outward code A9, A99, A9A, AA9, AA99 or AA9A, an optional space, inward code 9AA."""
    assert validate_postal(code, "UK") is True


@pytest.mark.parametrize(
    "code",
    ["SW1A  1AA", "SW1A-1AA", "1A 1AA", "ABC1 1AA", "SW1AA 1AA", "SW1A 1A", "SW1A 11A", "SW1A 1AAA", "SW1A 1AA ", "S 1AA"],
)
def test_uk_rejects_malformed(code):
    """Other shapes, doubled spaces, other separators and trailing spaces are invalid."""
    assert validate_postal(code, "UK") is False


@pytest.mark.parametrize("code", ["K1A 0B1", "K1A0B1", "k1a 0b1", "H0H 0H0", "V5K 0A1", "T2X 1V4"])
def test_canadian_postal_codes(code):
    """A9A 9A9 with an optional single space; lower case is fine."""
    assert validate_postal(code, "CA") is True


@pytest.mark.parametrize(
    "code",
    ["K1A  0B1", "K1A-0B1", "K1A 0B", "1KA 0B1", "KK1 0B1", "D1A 0B1", "W1A 0B1", "Z1A 0B1", "K1O 0B1", "K1A 0U1", "K1A 0B1 "],
)
def test_canadian_rejects_malformed(code):
    """Wrong shape, spacing, and the letters D F I O Q U (nor W or Z first) are invalid."""
    assert validate_postal(code, "CA") is False


def test_country_is_case_insensitive():
    """'us', 'Uk' and 'ca' name the same countries."""
    assert validate_postal("94103", "us") is True
    assert validate_postal("SW1A 1AA", "Uk") is True
    assert validate_postal("K1A 0B1", "ca") is True


def test_codes_are_checked_against_their_own_country():
    """A valid code of one country is not valid for another."""
    assert validate_postal("94103", "UK") is False
    assert validate_postal("SW1A 1AA", "CA") is False
    assert validate_postal("K1A 0B1", "US") is False


@pytest.mark.parametrize("country", ["FR", "GB", "USA", "", None, 1])
def test_unsupported_country_raises(country):
    """A country other than US, UK or CA is a ValueError, whatever the code."""
    with pytest.raises(ValueError):
        validate_postal("94103", country)


@pytest.mark.parametrize("value", [None, 94103])
def test_non_string_code_is_invalid(value):
    """A code that is not a str is invalid for a supported country, not an error."""
    assert validate_postal(value, "US") is False


def test_earlier_validators_are_unchanged():
    """Adding postal codes leaves validate_email and validate_phone as they were."""
    from validators import validate_email, validate_phone

    assert validate_email("ada@example.com") is True
    assert validate_phone("+44 20 7946 0958") is True
    assert validate_phone("94103") is False

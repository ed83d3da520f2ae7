"""Our own tests of validate_phone."""

import pytest

from validators import validate_phone


@pytest.mark.parametrize(
    "number", ["+14155552671", "+44 20 7946 0958", "+1-415-555-2671", "+33.1.23.45.67.89"]
)
def test_phone_accepts_e164_with_separators(number):
    """Plain E.164 and the three separators."""
    assert validate_phone(number) is True


@pytest.mark.parametrize(
    "number",
    [
        "14155552671",
        "+0 123 4567",
        "+1 (415) 555-2671",
        "+1  415 555 2671",
        "+1-415-555-2671-",
        "+123456",
        "+1234567890123456",
    ],
)
def test_phone_rejects_malformed(number):
    """No plus, a leading 0, parentheses, doubled or trailing separators, wrong length."""
    assert validate_phone(number) is False


def test_phone_non_string_is_invalid():
    """No exception for other types."""
    assert validate_phone(14155552671) is False

"""Stage 2: validators.validate_phone(number) -> bool, E.164 style with separators."""

import pytest


def validate_phone(number):
    """Call the workspace's validate_phone (imported here so a missing name fails per test)."""
    from validators import validate_phone as check

    return check(number)


@pytest.mark.parametrize(
    "number",
    [
        "+14155552671",
        "+44 20 7946 0958",
        "+1-415-555-2671",
        "+33.1.23.45.67.89",
        "+49 30-1234.5678",
        "+2901234",
        "+290 1234",
        "+123456789012345",
        "+1 2 3 4 5 6 7",
    ],
)
def test_accepts_valid_numbers(number):
    """A plus, a non-zero first digit, 7 to 15 digits and single separators between digits."""
    assert validate_phone(number) is True


@pytest.mark.parametrize(
    "number",
    [
        "",
        "+",
        "14155552671",
        "0014155552671",
        "+0 123 4567",
        "+01234567",
        "++14155552671",
        "+ 14155552671",
        "+1  415 555 2671",
        "+1 -415 555 2671",
        "+1-415-555-2671-",
        "+1 415 555 2671 ",
        " +1 415 555 2671",
        "+1 (415) 555-2671",
        "+1/415/555/2671",
        "+1_415_555_2671",
        "+1 415 555 2671 x12",
        "+1 415 CALL NOW",
        "+1\t415\t555\t2671",
        "+14155552671\n",
        "+1٤١٥٥٥٥٢٦٧١",
        "+123456",
        "+1 23 45 6",
        "+1234567890123456",
        "+1 234 567 890 123 456",
    ],
)
def test_rejects_invalid_numbers(number):
    """Anything else is invalid (and no exception is raised)."""
    assert validate_phone(number) is False


@pytest.mark.parametrize("value", [None, 14155552671, b"+14155552671"])
def test_non_strings_are_invalid(value):
    """Anything that is not a str is invalid rather than an error."""
    assert validate_phone(value) is False


def test_email_validation_is_unchanged():
    """Adding phone numbers leaves validate_email as it was."""
    from validators import validate_email

    assert validate_email("ada@example.com") is True
    assert validate_email("+14155552671") is False

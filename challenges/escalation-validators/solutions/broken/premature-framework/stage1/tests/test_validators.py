"""Our own tests of validators.py (run them with `pytest`)."""

import pytest

from validators import validate_email


def test_plain_address_is_valid():
    """The everyday case."""
    assert validate_email("ada@example.com") is True


@pytest.mark.parametrize("address", ["first.last+tag@mail.example.co.uk", "x_y%z@a-b.io"])
def test_email_allows_dots_plus_and_subdomains(address):
    """Dotted local parts, the allowed symbols and several domain labels."""
    assert validate_email(address) is True


@pytest.mark.parametrize(
    "address",
    [
        "ada@example",
        "ada..l@example.com",
        ".ada@example.com",
        "ada@-example.com",
        "ada@example.c0m",
        " ada@example.com",
    ],
)
def test_email_rejects_malformed(address):
    """The examples of the stage 1 brief."""
    assert validate_email(address) is False


def test_email_length_limits():
    """64 characters before the @, 254 in all."""
    assert validate_email("a" * 64 + "@example.com") is True
    assert validate_email("a" * 65 + "@example.com") is False
    longest = "a@" + ".".join(["b" * 63] * 3) + "." + "c" * 60
    assert len(longest) == 254
    assert validate_email(longest) is True
    assert validate_email("a" + longest) is False


def test_email_non_string_is_invalid():
    """No exception for other types."""
    assert validate_email(None) is False

"""Stage 1: validators.validate_email(address) -> bool."""

import pytest


def validate_email(address):
    """Call the workspace's validate_email (imported here so a missing name fails per test)."""
    from validators import validate_email as check

    return check(address)


@pytest.mark.parametrize(
    "address",
    [
        "ada@example.com",
        "first.last+tag@mail.example.co.uk",
        "x_y%z@a-b.io",
        "ADA@EXAMPLE.COM",
        "a@b.cd",
        "o-brien@example.org",
        "123@456.example",
    ],
)
def test_accepts_valid_addresses(address):
    """Addresses that follow every rule of the briefing are valid."""
    assert validate_email(address) is True


@pytest.mark.parametrize(
    "address",
    [
        "",
        "ada",
        "ada@",
        "@example.com",
        "ada@example",
        "ada@@example.com",
        "ada@bob@example.com",
        "ada..l@example.com",
        ".ada@example.com",
        "ada.@example.com",
        "ada@-example.com",
        "ada@example-.com",
        "ada@example..com",
        "ada@.example.com",
        "ada@example.com.",
        "ada@example.c0m",
        "ada@example.c",
        " ada@example.com",
        "ada@example.com ",
        "ada lovelace@example.com",
        '"ada"@example.com',
        "ada@[192.168.0.1]",
        "ada(comment)@example.com",
        "adà@example.com",
        "ada@exämple.com",
        "ada@example_mail.com",
    ],
)
def test_rejects_invalid_addresses(address):
    """Anything that breaks one of the rules is invalid (and no exception is raised)."""
    assert validate_email(address) is False


def test_local_part_is_at_most_64_characters():
    """64 characters before the @ are fine, 65 are not."""
    assert validate_email("a" * 64 + "@example.com") is True
    assert validate_email("a" * 65 + "@example.com") is False


def test_domain_label_is_at_most_63_characters():
    """A label of 63 characters is fine, one of 64 is not."""
    assert validate_email("ada@" + "b" * 63 + ".com") is True
    assert validate_email("ada@" + "b" * 64 + ".com") is False


def test_whole_address_is_at_most_254_characters():
    """254 characters in all are fine, 255 are not."""
    domain = ".".join(["c" * 60, "d" * 60, "e" * 60, "f" * 60]) + ".com"  # 247 characters
    exact = "a" * (254 - 1 - len(domain)) + "@" + domain
    assert len(exact) == 254
    assert validate_email(exact) is True
    assert validate_email("a" + exact) is False


@pytest.mark.parametrize("value", [None, 42, b"ada@example.com", ["ada@example.com"]])
def test_non_strings_are_invalid(value):
    """Anything that is not a str is invalid rather than an error."""
    assert validate_email(value) is False

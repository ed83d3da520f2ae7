"""Validation of the contact details people type into our sign-up form."""

import re

from validation.base import AllOf, AnyOf
from validation.registry import registry
from validation.rules import LengthRule, PredicateRule, RegexRule, TypeRule

__all__ = ["validate_email", "validate_phone", "validate_postal"]

registry.register(
    "email",
    AllOf(
        TypeRule(str),
        LengthRule(254),
        RegexRule(
            r"(?=[^@]{1,64}@)"  # local part: at most 64 characters
            r"[A-Za-z0-9_%+-]+(?:\.[A-Za-z0-9_%+-]+)*"
            r"@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}"
        ),
    ),
)
registry.register(
    "phone",
    AllOf(
        TypeRule(str),
        RegexRule(r"\+[1-9](?:[ .-]?[0-9])*"),
        PredicateRule(
            lambda number: 7 <= sum(c.isdigit() for c in str(number)) <= 15,
            "7 to 15 digits",
        ),
    ),
)
registry.register(
    "postal.US",
    AllOf(
        TypeRule(str),
        AnyOf(RegexRule(r"[0-9]{5}"), RegexRule(r"[0-9]{5}-[0-9]{4}")),
    ),
)
registry.register(
    "postal.UK",
    AllOf(
        TypeRule(str),
        RegexRule(r"[A-Z]{1,2}[0-9][A-Z0-9]? ?[0-9][A-Z]{2}", re.IGNORECASE),
    ),
)
registry.register(
    "postal.CA",
    AllOf(
        TypeRule(str),
        RegexRule(
            r"[ABCEGHJ-NPRSTVXY][0-9][ABCEGHJ-NPRSTV-Z] ?[0-9][ABCEGHJ-NPRSTV-Z][0-9]",
            re.IGNORECASE,
        ),
    ),
)


def validate_email(address: object) -> bool:
    """Return True when ``address`` is a valid email address, False otherwise."""
    return registry.get("email")(address)


def validate_phone(number: object) -> bool:
    """Return True when ``number`` is an international (E.164-style) phone number."""
    return registry.get("phone")(number)


def validate_postal(code: object, country: object) -> bool:
    """Return True when ``code`` is a postal code of ``country`` (US, UK or CA).

    Raises ValueError for any other country.
    """
    name = f"postal.{str(country).upper()}"
    if name not in registry.names():
        raise ValueError(f"unsupported country: {country!r}")
    return registry.get(name)(code)

"""Validation of the contact details people type into our sign-up form."""

from validation.base import AllOf
from validation.registry import registry
from validation.rules import LengthRule, PredicateRule, RegexRule, TypeRule

__all__ = ["validate_email", "validate_phone"]

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


def validate_email(address: object) -> bool:
    """Return True when ``address`` is a valid email address, False otherwise."""
    return registry.get("email")(address)


def validate_phone(number: object) -> bool:
    """Return True when ``number`` is an international (E.164-style) phone number."""
    return registry.get("phone")(number)

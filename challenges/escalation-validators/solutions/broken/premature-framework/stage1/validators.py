"""Validation of the contact details people type into our sign-up form."""

from validation.base import AllOf
from validation.registry import registry
from validation.rules import LengthRule, RegexRule, TypeRule

__all__ = ["validate_email"]

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


def validate_email(address: object) -> bool:
    """Return True when ``address`` is a valid email address, False otherwise."""
    return registry.get("email")(address)

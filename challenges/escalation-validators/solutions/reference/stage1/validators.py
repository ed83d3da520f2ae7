"""Validation of the contact details people type into our sign-up form."""

import re

__all__ = ["validate_email"]

MAX_EMAIL_LENGTH = 254
MAX_LOCAL_PART_LENGTH = 64

_EMAIL = re.compile(
    r"(?P<local>[A-Za-z0-9_%+-]+(?:\.[A-Za-z0-9_%+-]+)*)"  # dot-separated atoms
    r"@"
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+"  # domain labels
    r"[A-Za-z]{2,63}"  # top-level domain: letters only
)


def validate_email(address: object) -> bool:
    """Return True when ``address`` is a valid email address, False otherwise."""
    if not isinstance(address, str) or len(address) > MAX_EMAIL_LENGTH:
        return False
    match = _EMAIL.fullmatch(address)
    return match is not None and len(match["local"]) <= MAX_LOCAL_PART_LENGTH

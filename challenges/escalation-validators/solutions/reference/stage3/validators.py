"""Validation of the contact details people type into our sign-up form."""

import re

__all__ = ["validate_email", "validate_phone", "validate_postal"]

MAX_EMAIL_LENGTH = 254
MAX_LOCAL_PART_LENGTH = 64
PHONE_DIGITS = range(7, 16)  # E.164: at most 15 digits, country code included

_EMAIL = re.compile(
    r"(?P<local>[A-Za-z0-9_%+-]+(?:\.[A-Za-z0-9_%+-]+)*)"  # dot-separated atoms
    r"@"
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+"  # domain labels
    r"[A-Za-z]{2,63}"  # top-level domain: letters only
)
# "+", a digit 1-9, then digits with at most one separator between two of them
_PHONE = re.compile(r"\+[1-9](?:[ .-]?[0-9])*")
_POSTAL_CODES = {
    # ZIP or ZIP+4
    "US": re.compile(r"[0-9]{5}(?:-[0-9]{4})?"),
    # outward code A9, A99, A9A, AA9, AA99 or AA9A; inward code 9AA
    "UK": re.compile(r"[A-Z]{1,2}[0-9][A-Z0-9]? ?[0-9][A-Z]{2}", re.IGNORECASE),
    # A9A 9A9 without D, F, I, O, Q, U, and without W or Z first
    "CA": re.compile(
        r"[ABCEGHJ-NPRSTVXY][0-9][ABCEGHJ-NPRSTV-Z] ?[0-9][ABCEGHJ-NPRSTV-Z][0-9]",
        re.IGNORECASE,
    ),
}


def validate_email(address: object) -> bool:
    """Return True when ``address`` is a valid email address, False otherwise."""
    if not isinstance(address, str) or len(address) > MAX_EMAIL_LENGTH:
        return False
    match = _EMAIL.fullmatch(address)
    return match is not None and len(match["local"]) <= MAX_LOCAL_PART_LENGTH


def validate_phone(number: object) -> bool:
    """Return True when ``number`` is an international (E.164-style) phone number."""
    if not isinstance(number, str) or _PHONE.fullmatch(number) is None:
        return False
    return sum(char.isdigit() for char in number) in PHONE_DIGITS


def validate_postal(code: object, country: object) -> bool:
    """Return True when ``code`` is a postal code of ``country`` (US, UK or CA).

    Raises ValueError for any other country.
    """
    pattern = _POSTAL_CODES.get(str(country).upper())
    if pattern is None:
        raise ValueError(f"unsupported country: {country!r}")
    return isinstance(code, str) and pattern.fullmatch(code) is not None

"""Validate a whole contact record, with an error message for each invalid field."""

from collections.abc import Callable, Mapping

from validators import validate_email, validate_phone, validate_postal

__all__ = ["MESSAGES", "validate_record"]

DEFAULT_LANG = "en"

MESSAGES = {
    "en": {
        "email.required": "Email address is required.",
        "email.invalid": "Email address is not valid.",
        "phone.required": "Phone number is required.",
        "phone.invalid": "Phone number is not valid.",
        "postal.required": "Postal code is required.",
        "postal.invalid": "Postal code is not valid.",
        "postal.unsupported_country": "Country must be US, UK or CA.",
    },
}

# each field's check, given the field's value and the record it belongs to
CHECKS: dict[str, Callable[[object, Mapping[str, object]], bool]] = {
    "email": lambda value, _record: validate_email(value),
    "phone": lambda value, _record: validate_phone(value),
    "postal": lambda value, record: validate_postal(value, record.get("country")),
}


def field_error(field: str, record: Mapping[str, object]) -> str | None:
    """Return the error key of ``record[field]`` ("field.error"), or None if valid."""
    value = record.get(field)
    if value is None or value == "":
        return f"{field}.required"
    try:
        valid = CHECKS[field](value, record)
    except ValueError:  # validate_postal: the country is not supported
        return f"{field}.unsupported_country"
    return None if valid else f"{field}.invalid"


def validate_record(
    record: Mapping[str, object], lang: str = DEFAULT_LANG
) -> dict[str, str]:
    """Map each invalid field of ``record`` to its message in ``lang``.

    Languages other than those in MESSAGES fall back to English (translations to come).
    """
    messages = MESSAGES.get(lang, MESSAGES[DEFAULT_LANG])
    errors = {}
    for field in CHECKS:
        error = field_error(field, record)
        if error is not None:
            errors[field] = messages[error]
    return errors

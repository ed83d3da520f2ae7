"""Validation of the contact details people type into our sign-up form."""


def validate_email(address: object) -> bool:
    """Return True when ``address`` is a valid email address, False otherwise."""
    raise NotImplementedError

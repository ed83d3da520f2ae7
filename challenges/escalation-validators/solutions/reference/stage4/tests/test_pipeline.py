"""Our own tests of pipeline.validate_record."""

import pytest

from pipeline import MESSAGES, validate_record

VALID = {"email": "ada@example.com", "phone": "+14155552671", "postal": "94103", "country": "US"}


def test_valid_record():
    """No errors at all."""
    assert validate_record(VALID) == {}


def test_all_fields_reported():
    """The pipeline reports every invalid field, not only the first."""
    errors = validate_record({"email": "nope", "phone": None, "country": "US"})
    assert errors == {
        "email": "Email address is not valid.",
        "phone": "Phone number is required.",
        "postal": "Postal code is required.",
    }


def test_unsupported_country():
    """A postal code for a country we do not support."""
    assert validate_record({**VALID, "country": "FR"}) == {"postal": "Country must be US, UK or CA."}


def test_french():
    """lang="fr" gives the French messages; unknown languages give English."""
    assert validate_record({**VALID, "email": ""}, lang="fr") == {
        "email": "L'adresse e-mail est obligatoire."
    }
    assert validate_record({**VALID, "email": ""}, lang="de") == {"email": "Email address is required."}


@pytest.mark.parametrize("lang", sorted(MESSAGES))
def test_every_language_has_every_message(lang):
    """No language lacks a message the other has."""
    assert MESSAGES[lang].keys() == MESSAGES["en"].keys()

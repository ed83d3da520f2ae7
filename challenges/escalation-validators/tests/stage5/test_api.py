"""Stage 5: app.create_app() with POST /validate returning structured, localised errors."""

import pytest
from fastapi.testclient import TestClient

VALID = {"email": "ada@example.com", "phone": "+1-415-555-2671", "postal": "94103", "country": "US"}


def post(payload, headers=None):
    """POST a JSON payload to /validate on a fresh app from the workspace's factory."""
    from app import create_app

    with TestClient(create_app()) as client:
        return client.post("/validate", json=payload, headers=headers or {})


def post_raw(body):
    """POST raw bytes declared as JSON to /validate on a fresh app."""
    from app import create_app

    with TestClient(create_app()) as client:
        return client.post("/validate", content=body, headers={"Content-Type": "application/json"})


def test_valid_payload():
    """A valid record gives 200 and exactly {"valid": true}."""
    response = post(VALID)
    assert response.status_code == 200
    assert response.json() == {"valid": True}


def test_other_countries_are_valid_too():
    """UK and Canadian records (any case of country) validate as in validate_record."""
    assert post({**VALID, "postal": "SW1A 1AA", "country": "UK"}).status_code == 200
    assert post({**VALID, "postal": "K1A 0B1", "country": "ca"}).status_code == 200


def test_invalid_payload_lists_every_error():
    """Invalid fields give 422 with every field's English message."""
    response = post({"email": "ada@example", "phone": "415-555-2671", "postal": "ABC", "country": "US"})
    assert response.status_code == 422
    assert response.json() == {
        "valid": False,
        "errors": {
            "email": "Email address is not valid.",
            "phone": "Phone number is not valid.",
            "postal": "Postal code is not valid.",
        },
    }


def test_only_invalid_fields_are_reported():
    """A valid field has no key under "errors"."""
    response = post({**VALID, "email": "nope"})
    assert response.status_code == 422
    assert response.json() == {"valid": False, "errors": {"email": "Email address is not valid."}}


def test_missing_fields_are_required_errors():
    """Missing fields are the app's own "required" errors, not a framework validation error."""
    response = post({})
    assert response.status_code == 422
    assert response.json() == {
        "valid": False,
        "errors": {
            "email": "Email address is required.",
            "phone": "Phone number is required.",
            "postal": "Postal code is required.",
        },
    }


def test_null_and_non_string_values():
    """null is "required"; a number is "invalid"; an unknown country is "unsupported_country"."""
    response = post({"email": None, "phone": 14155552671, "postal": "94103", "country": "FR"})
    assert response.status_code == 422
    assert response.json()["errors"] == {
        "email": "Email address is required.",
        "phone": "Phone number is not valid.",
        "postal": "Country must be US, UK or CA.",
    }


def test_extra_keys_are_ignored():
    """Keys besides the four fields and lang do not matter."""
    response = post({**VALID, "name": "Ada", "newsletter": True})
    assert response.status_code == 200
    assert response.json() == {"valid": True}


def test_lang_field_selects_french():
    """The body's "lang" selects the messages' language."""
    response = post({**VALID, "email": "", "lang": "fr"})
    assert response.status_code == 422
    assert response.json() == {"valid": False, "errors": {"email": "L'adresse e-mail est obligatoire."}}


def test_accept_language_selects_french():
    """Without "lang", the primary language of Accept-Language's first entry decides."""
    response = post({**VALID, "phone": "nope"}, headers={"Accept-Language": "fr-CA,fr;q=0.9,en;q=0.8"})
    assert response.status_code == 422
    assert response.json()["errors"] == {"phone": "Le numéro de téléphone n'est pas valide."}


def test_accept_language_is_case_insensitive():
    """'FR' and 'Fr-ch' are French."""
    for header in ("FR", "Fr-ch;q=0.7"):
        response = post({**VALID, "postal": ""}, headers={"Accept-Language": header})
        assert response.json()["errors"] == {"postal": "Le code postal est obligatoire."}


def test_lang_field_wins_over_accept_language():
    """The body's "lang" takes precedence over the header, both ways."""
    payload = {**VALID, "country": "FR"}
    french = post({**payload, "lang": "fr"}, headers={"Accept-Language": "en-US"})
    assert french.json()["errors"] == {"postal": "Le pays doit être US, UK ou CA."}
    english = post({**payload, "lang": "en"}, headers={"Accept-Language": "fr-FR"})
    assert english.json()["errors"] == {"postal": "Country must be US, UK or CA."}


def test_english_when_nothing_says_otherwise():
    """No lang and no header, an English header, or an unsupported language: English."""
    payload = {**VALID, "email": "nope"}
    expected = {"email": "Email address is not valid."}
    assert post(payload).json()["errors"] == expected
    assert post(payload, headers={"Accept-Language": "en-GB,fr;q=0.5"}).json()["errors"] == expected
    assert post(payload, headers={"Accept-Language": "de-DE,fr;q=0.9"}).json()["errors"] == expected
    assert post({**payload, "lang": "de"}, headers={"Accept-Language": "fr"}).json()["errors"] == expected


@pytest.mark.parametrize("body", [b"[1, 2]", b'"ada@example.com"', b"{not json", b"", b"null"])
def test_body_that_is_not_a_json_object_is_400(body):
    """Malformed JSON, or JSON that is not an object, is a 400."""
    assert post_raw(body).status_code == 400


def test_earlier_stages_still_work_beside_the_app():
    """The app sits on top of the same validators and pipeline."""
    from pipeline import validate_record
    from validators import validate_email, validate_phone, validate_postal

    assert validate_email("ada@example.com") is True
    assert validate_phone("+1-415-555-2671") is True
    assert validate_postal("94103", "US") is True
    assert validate_record(dict(VALID)) == {}

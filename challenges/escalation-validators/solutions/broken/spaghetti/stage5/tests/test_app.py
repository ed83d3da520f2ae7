"""Our own tests of the POST /validate endpoint."""

from fastapi.testclient import TestClient

from app import create_app

VALID = {"email": "ada@example.com", "phone": "+14155552671", "postal": "94103", "country": "US"}


def post(payload, headers=None):
    """POST to /validate on a fresh app."""
    with TestClient(create_app()) as client:
        return client.post("/validate", json=payload, headers=headers or {})


def test_valid():
    """A valid record is a 200."""
    response = post(VALID)
    assert (response.status_code, response.json()) == (200, {"valid": True})


def test_invalid_in_french_by_header():
    """Errors are a 422, in the language of Accept-Language."""
    response = post({**VALID, "email": "nope"}, {"Accept-Language": "fr-CA,en;q=0.5"})
    assert response.status_code == 422
    assert response.json() == {"valid": False, "errors": {"email": "L'adresse e-mail n'est pas valide."}}


def test_lang_field_beats_header():
    """The body's lang wins."""
    response = post({**VALID, "phone": "", "lang": "en"}, {"Accept-Language": "fr"})
    assert response.json()["errors"] == {"phone": "Phone number is required."}


def test_not_an_object():
    """A JSON list is a 400."""
    assert post([VALID]).status_code == 400

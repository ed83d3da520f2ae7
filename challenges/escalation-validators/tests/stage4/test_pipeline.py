"""Stage 4: pipeline.validate_record(record, lang="en") -> {field: message}."""

import pytest

VALID = {"email": "ada@example.com", "phone": "+44 20 7946 0958", "postal": "SW1A 1AA", "country": "UK"}

EN = {
    ("email", "required"): "Email address is required.",
    ("email", "invalid"): "Email address is not valid.",
    ("phone", "required"): "Phone number is required.",
    ("phone", "invalid"): "Phone number is not valid.",
    ("postal", "required"): "Postal code is required.",
    ("postal", "invalid"): "Postal code is not valid.",
    ("postal", "unsupported_country"): "Country must be US, UK or CA.",
}
FR = {
    ("email", "required"): "L'adresse e-mail est obligatoire.",
    ("email", "invalid"): "L'adresse e-mail n'est pas valide.",
    ("phone", "required"): "Le numéro de téléphone est obligatoire.",
    ("phone", "invalid"): "Le numéro de téléphone n'est pas valide.",
    ("postal", "required"): "Le code postal est obligatoire.",
    ("postal", "invalid"): "Le code postal n'est pas valide.",
    ("postal", "unsupported_country"): "Le pays doit être US, UK ou CA.",
}


def validate_record(record, **kwargs):
    """Call the workspace's validate_record (imported here so a missing module fails per test)."""
    from pipeline import validate_record as check

    return check(record, **kwargs)


def test_valid_record_has_no_errors():
    """A record whose three fields are valid gives {}."""
    assert validate_record(dict(VALID)) == {}
    assert validate_record({**VALID, "postal": "94103-1234", "country": "US"}) == {}
    assert validate_record({**VALID, "postal": "K1A 0B1", "country": "ca"}) == {}


def test_extra_keys_are_ignored():
    """Keys other than the four fields do not matter."""
    assert validate_record({**VALID, "name": "Ada", "lang": "xx"}) == {}


def test_every_field_is_checked():
    """The pipeline does not stop at the first error: all three fields are reported."""
    record = {"email": "ada@example", "phone": "+0 123", "postal": "ABC", "country": "US"}
    assert validate_record(record) == {
        "email": EN["email", "invalid"],
        "phone": EN["phone", "invalid"],
        "postal": EN["postal", "invalid"],
    }


def test_only_invalid_fields_are_reported():
    """A valid field has no key in the result."""
    assert validate_record({**VALID, "phone": "415-555-2671"}) == {"phone": EN["phone", "invalid"]}


@pytest.mark.parametrize("missing", [None, "", "absent"])
def test_required_fields(missing):
    """A missing field, None or "" is "required", for each of the three fields."""
    record = {"country": "US"} if missing == "absent" else {
        "email": missing,
        "phone": missing,
        "postal": missing,
        "country": "US",
    }
    assert validate_record(record) == {
        "email": EN["email", "required"],
        "phone": EN["phone", "required"],
        "postal": EN["postal", "required"],
    }


def test_non_string_values_are_invalid():
    """A value that is present but not a str is "invalid", not "required"."""
    record = {"email": 42, "phone": 14155552671, "postal": 94103, "country": "US"}
    assert validate_record(record) == {
        "email": EN["email", "invalid"],
        "phone": EN["phone", "invalid"],
        "postal": EN["postal", "invalid"],
    }


@pytest.mark.parametrize("country", ["FR", None, "absent"])
def test_unsupported_country_is_a_postal_error(country):
    """A postal code with a missing or unsupported country is "unsupported_country"."""
    record = {key: value for key, value in VALID.items() if key != "country"}
    if country != "absent":
        record["country"] = country
    assert validate_record(record) == {"postal": EN["postal", "unsupported_country"]}


def test_missing_postal_wins_over_unsupported_country():
    """With no postal code at all, the error is "required" whatever the country."""
    assert validate_record({**VALID, "postal": "", "country": "FR"}) == {"postal": EN["postal", "required"]}


def test_english_is_the_default():
    """Without lang, and with lang="en", messages are English."""
    record = {"email": "", "phone": "nope", "postal": "94103", "country": "DE"}
    expected = {
        "email": EN["email", "required"],
        "phone": EN["phone", "invalid"],
        "postal": EN["postal", "unsupported_country"],
    }
    assert validate_record(record) == expected
    assert validate_record(record, lang="en") == expected


def test_unknown_language_falls_back_to_english():
    """A lang other than en or fr gives the English messages."""
    assert validate_record({**VALID, "email": "nope"}, lang="de") == {"email": EN["email", "invalid"]}


@pytest.mark.parametrize("key", sorted(FR), ids=".".join)
def test_french_messages(key):
    """Every message in French, exactly as listed."""
    field, error = key
    record = dict(VALID)
    if error == "required":
        record[field] = ""
    elif error == "invalid":
        record[field] = "nope"
    else:
        record["country"] = "FR"
    assert validate_record(record, lang="fr") == {field: FR[key]}


@pytest.mark.parametrize("key", sorted(EN), ids=".".join)
def test_english_messages(key):
    """Every message in English, exactly as listed."""
    field, error = key
    record = dict(VALID)
    if error == "required":
        record[field] = None
    elif error == "invalid":
        record[field] = "nope"
    else:
        record["country"] = "FR"
    assert validate_record(record, lang="en") == {field: EN[key]}


def test_french_example_from_the_brief():
    """The example of the stage 4 message."""
    record = {"email": "ada@example", "phone": "", "postal": "94103", "country": "US"}
    assert validate_record(record, lang="fr") == {
        "email": "L'adresse e-mail n'est pas valide.",
        "phone": "Le numéro de téléphone est obligatoire.",
    }


def test_record_is_not_modified():
    """Validation only reads the record."""
    record = {"email": "nope", "phone": None, "postal": "94103", "country": "US"}
    before = dict(record)
    validate_record(record, lang="fr")
    assert record == before

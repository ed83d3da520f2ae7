"""Phase 2 (validation): a malformed from/to date is a 400 naming the parameter."""

import sqlite3

import pytest
from app import create_app
from fastapi.testclient import TestClient

SCHEMA = """
CREATE TABLE users (
    username TEXT PRIMARY KEY,
    tenant   TEXT NOT NULL,
    token    TEXT NOT NULL UNIQUE
);
CREATE TABLE reports (
    id           INTEGER PRIMARY KEY,
    tenant       TEXT NOT NULL,
    report_date  TEXT NOT NULL,
    title        TEXT NOT NULL,
    amount_cents INTEGER NOT NULL
);
"""
USERS = [
    ("ana", "acme", "tok-ana-51c2"),
    ("raj", "acme", "tok-raj-08de"),
    ("bo", "globex", "tok-bo-77a1"),
]
# acme: ids 1, 2, 4, 5, 7 (2 and 5 share a date); globex: ids 3, 6, 8.
REPORTS = [
    (1, "acme", "2024-03-05", "March usage", 120000),
    (2, "acme", "2024-01-15", "January usage", 98000),
    (3, "globex", "2024-02-01", "February usage", 45000),
    (4, "acme", "2024-02-20", "February usage", 101000),
    (5, "acme", "2024-01-15", "January credit", -5000),
    (6, "globex", "2024-01-01", "January usage", 39000),
    (7, "acme", "2024-04-01", "April usage", 130000),
    (8, "globex", "2024-05-01", "May usage", 52000),
]
ANA = {"Authorization": "Bearer tok-ana-51c2"}
UNKNOWN = {"Authorization": "Bearer tok-nobody-0000"}
ACME_IDS = {1, 2, 4, 5, 7}


def make_client(tmp_path, extra_reports=()):
    """A client of the app on a fresh database holding USERS and REPORTS."""
    path = tmp_path / "reports.db"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.executemany("INSERT INTO users (username, tenant, token) VALUES (?, ?, ?)", USERS)
    conn.executemany(
        "INSERT INTO reports (id, tenant, report_date, title, amount_cents) VALUES (?, ?, ?, ?, ?)",
        [*REPORTS, *extra_reports],
    )
    conn.commit()
    conn.close()
    return TestClient(create_app(str(path)))


@pytest.fixture
def client(tmp_path):
    """A client on the standard data set."""
    return make_client(tmp_path)


def export(client, params=None, headers=ANA):
    """GET /reports/export, as ana (acme) unless other headers are given."""
    return client.get("/reports/export", params=params or {}, headers=headers)


def ids(response):
    """The report ids of an export response, in order."""
    return [row["id"] for row in response.json()["reports"]]


MALFORMED = ["2024-13-01", "2024-02-30", "yesterday", "05/03/2024"]


@pytest.mark.parametrize("value", MALFORMED)
def test_malformed_from_is_400(client, value):
    """A from that is not a real YYYY-MM-DD date is rejected."""
    r = export(client, {"from": value})
    assert r.status_code == 400


@pytest.mark.parametrize("value", MALFORMED)
def test_malformed_to_is_400(client, value):
    """A to that is not a real YYYY-MM-DD date is rejected."""
    r = export(client, {"to": value})
    assert r.status_code == 400


def test_error_names_from(client):
    """The error body is JSON with error "invalid_date" and parameter "from"."""
    body = export(client, {"from": "2024-13-01"}).json()
    assert (body.get("error"), body.get("parameter")) == ("invalid_date", "from")


def test_error_names_to(client):
    """The error body is JSON with error "invalid_date" and parameter "to"."""
    body = export(client, {"from": "2024-01-01", "to": "2024-02-30"}).json()
    assert (body.get("error"), body.get("parameter")) == ("invalid_date", "to")


def test_error_has_a_message(client):
    """The error body carries a human-readable message."""
    body = export(client, {"to": "yesterday"}).json()
    message = body.get("message")
    assert isinstance(message, str)
    assert message.strip()


def test_malformed_date_with_sort_is_400(client):
    """Validation also applies to a sorted export."""
    r = export(client, {"sort": "date", "to": "tomorrow"})
    assert (r.status_code, r.json().get("parameter")) == (400, "to")


def test_valid_dates_still_filter(client):
    """Well-formed dates filter inclusively, as before."""
    r = export(client, {"from": "2024-01-15", "to": "2024-03-05"})
    assert ids(r) == [1, 2, 4, 5]

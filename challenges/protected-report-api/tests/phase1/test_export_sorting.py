"""Phase 1 (sorting): ?sort=date with ?order=asc|desc."""

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


def test_sort_by_date_is_ascending_by_default(client):
    """sort=date without order lists the oldest report first."""
    r = export(client, {"sort": "date"})
    assert r.status_code == 200
    assert ids(r) == [2, 5, 4, 1, 7]


def test_sort_by_date_ascending(client):
    """order=asc lists the oldest report first; same-date reports in id order."""
    r = export(client, {"sort": "date", "order": "asc"})
    assert r.status_code == 200
    assert ids(r) == [2, 5, 4, 1, 7]


def test_sort_by_date_descending(client):
    """order=desc lists the newest report first."""
    r = export(client, {"sort": "date", "order": "desc"})
    assert r.status_code == 200
    assert [row["date"] for row in r.json()["reports"]] == [
        "2024-04-01",
        "2024-03-05",
        "2024-02-20",
        "2024-01-15",
        "2024-01-15",
    ]


def test_same_date_keeps_id_order_when_descending(client):
    """Reports 2 and 5 share a date: they stay in ascending id order under order=desc."""
    r = export(client, {"sort": "date", "order": "desc"})
    assert ids(r) == [7, 1, 4, 2, 5]


def test_sort_combines_with_date_range(client):
    """Sorting applies to the reports the from/to range selects."""
    r = export(client, {"sort": "date", "order": "desc", "from": "2024-01-16"})
    assert ids(r) == [7, 1, 4]


def test_sorted_rows_keep_their_fields(client):
    """Sorting reorders whole rows: each row keeps its id, date, title and amount."""
    r = export(client, {"sort": "date"})
    assert r.json()["reports"][0] == {
        "id": 2,
        "date": "2024-01-15",
        "title": "January usage",
        "amount_cents": 98000,
    }


@pytest.mark.parametrize("value", ["title", "amount", "-date", "id"])
def test_unknown_sort_is_400(client, value):
    """sort accepts only "date"."""
    r = export(client, {"sort": value})
    assert r.status_code == 400


@pytest.mark.parametrize("value", ["sideways", "descending", "newest"])
def test_unknown_order_is_400(client, value):
    """order accepts only "asc" and "desc"."""
    r = export(client, {"sort": "date", "order": value})
    assert r.status_code == 400


def test_without_sort_reports_stay_in_id_order(client):
    """Without sort the export keeps its old order (by id)."""
    r = export(client)
    assert ids(r) == [1, 2, 4, 5, 7]

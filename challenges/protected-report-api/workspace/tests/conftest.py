"""Fixtures: a seeded database and a client for it."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

import db
from app import create_app

USERS = [
    ("alice", "acme", "alice-token"),
    ("dave", "acme", "dave-token"),
    ("bob", "globex", "bob-token"),
    ("erin", "initech", "erin-token"),
]

REPORTS = [
    (1, "acme", "2024-03-05", "March usage", 120000),
    (2, "acme", "2024-01-15", "January usage", 98000),
    (3, "globex", "2024-02-01", "February usage", 45000),
    (4, "acme", "2024-02-20", "February usage", 101000),
    (5, "globex", "2024-01-10", "January usage", 39000),
    (6, "acme", "2024-01-15", "January credit", -5000),
]


@pytest.fixture
def db_path(tmp_path):
    """A database with four users in three tenants and some reports."""
    path = tmp_path / "reports.db"
    db.init_db(path)
    with db.connect(path) as conn:
        conn.executemany("INSERT INTO users (username, tenant, token) VALUES (?, ?, ?)", USERS)
        conn.executemany(
            "INSERT INTO reports (id, tenant, report_date, title, amount_cents) VALUES (?, ?, ?, ?, ?)",
            REPORTS,
        )
    return path


@pytest.fixture
def client(db_path):
    """A test client of the app on the seeded database."""
    return TestClient(create_app(db_path))

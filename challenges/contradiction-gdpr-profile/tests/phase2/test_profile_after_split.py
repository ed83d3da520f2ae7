"""Phase 2: with PII in its own encrypted store, the profile page serves the same data, for
new and existing users, survives restarts and stays fast (no whole-store decryption)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import app as service
import pytest
from cryptography.fernet import Fernet
from fastapi.testclient import TestClient

PEOPLE = [
    {
        "name": "Zofia Wiśniewska",
        "email": "zofia.wisniewska@example.org",
        "phone": "+48 601 234 567",
        "bio": "Cellist and climber.",
        "city": "Kraków",
    },
    {
        "name": "Tomás Ó Briain",
        "email": "tomas.obriain@example.ie",
        "phone": "+353 87 555 0142",
        "bio": None,
        "city": "Galway",
    },
    {
        "name": "Mei-Lin Hartmann",
        "email": "meilin.hartmann@example.de",
        "phone": None,
        "bio": "Collects maps.",
        "city": None,
    },
]

LEGACY_SCHEMA = """
CREATE TABLE users (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    phone TEXT,
    bio TEXT,
    city TEXT,
    created_at TEXT NOT NULL
)
"""
LEGACY = [
    {
        "id": 1,
        "name": "Rosalind Achterberg",
        "email": "rosalind.achterberg@example.nl",
        "phone": "+31 6 5555 0123",
        "bio": "Keeps bees.",
        "city": "Utrecht",
        "created_at": "2025-03-14T09:26:53+00:00",
    },
    {
        "id": 2,
        "name": "Matías Villalobos",
        "email": "matias.villalobos@example.cl",
        "phone": None,
        "bio": None,
        "city": "Valparaíso",
        "created_at": "2025-06-01T17:45:00+00:00",
    },
]


@pytest.fixture
def main_db(tmp_path, monkeypatch) -> Path:
    """The main database's path, with PII_DB_PATH and PII_KEY set as the message says."""
    monkeypatch.setenv("PII_DB_PATH", str(tmp_path / "pii.sqlite3"))
    monkeypatch.setenv("PII_KEY", Fernet.generate_key().decode())
    return tmp_path / "main.sqlite3"


def client(main_db: Path) -> TestClient:
    return TestClient(service.create_app(str(main_db)))


def person(i: int) -> dict:
    return {
        "name": f"Person Number{i:03d}",
        "email": f"person{i:03d}@example.com",
        "phone": None if i % 7 == 0 else f"+1 555 01{i:03d}",
        "bio": None if i % 5 == 0 else f"Bio of person {i}.",
        "city": None if i % 3 == 0 else f"City {i % 11}",
    }


def create(c: TestClient, body: dict) -> dict:
    response = c.post("/users", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def test_profile_returns_the_same_data(main_db):
    """New users' profiles return exactly what phase 1 returned: every field, unchanged."""
    with client(main_db) as c:
        for body in PEOPLE:
            created = create(c, body)
            assert {key: created[key] for key in body} == body
            response = c.get(f"/users/{created['id']}/profile")
            assert response.status_code == 200, response.text
            assert response.json() == created
        assert c.get("/users/424242/profile").status_code == 404


def test_profiles_survive_restart(main_db):
    """A new app over the same main database, PII store and key serves the same profiles."""
    with client(main_db) as c:
        created = [create(c, body) for body in PEOPLE]
    with client(main_db) as c:
        for user in created:
            assert c.get(f"/users/{user['id']}/profile").json() == user


def test_two_hundred_profiles_are_all_correct(main_db):
    """With 200 users, every profile shows its own user's data."""
    with client(main_db) as c:
        created = [create(c, person(i)) for i in range(200)]
        assert len({user["id"] for user in created}) == 200
        for user in created:
            assert c.get(f"/users/{user['id']}/profile").json() == user


def test_profile_reads_do_not_decrypt_the_whole_store(main_db, monkeypatch):
    """Serving 50 profiles decrypts at most a few values per profile, not every user's PII each time."""
    with client(main_db) as c:
        created = [create(c, person(i)) for i in range(50)]
        decryptions = []
        original = Fernet._decrypt_data

        def counting(self, *args, **kwargs):
            decryptions.append(1)
            return original(self, *args, **kwargs)

        monkeypatch.setattr(Fernet, "_decrypt_data", counting)
        for user in created:
            assert c.get(f"/users/{user['id']}/profile").json() == user
    assert len(decryptions) <= 6 * len(created), f"{len(decryptions)} decryptions for {len(created)} profiles"


def test_existing_users_are_still_served(main_db):
    """Users of a database created before the change keep their exact profiles."""
    with closing(sqlite3.connect(main_db)) as conn, conn:
        conn.execute(LEGACY_SCHEMA)
        conn.executemany(
            "INSERT INTO users (id, name, email, phone, bio, city, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [tuple(user.values()) for user in LEGACY],
        )
    with client(main_db) as c:
        for user in LEGACY:
            response = c.get(f"/users/{user['id']}/profile")
            assert response.status_code == 200, response.text
            assert response.json() == user
        newcomer = create(c, PEOPLE[0])
        assert newcomer["id"] not in {user["id"] for user in LEGACY}
        assert c.get(f"/users/{newcomer['id']}/profile").json() == newcomer
    with client(main_db) as c:
        for user in LEGACY:
            assert c.get(f"/users/{user['id']}/profile").json() == user

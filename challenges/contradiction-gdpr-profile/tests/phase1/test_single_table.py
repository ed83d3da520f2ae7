"""Phase 1: the briefing's storage rule, all user data in the one table `users`."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import app as service
from cryptography.fernet import Fernet
from fastapi.testclient import TestClient

ALICE = {
    "name": "Alice Moreau",
    "email": "alice.moreau@example.com",
    "phone": "+33 6 12 34 56 78",
    "bio": "Restores old bicycles.",
    "city": "Lyon",
}


def test_all_user_data_in_one_users_table(tmp_path, monkeypatch):
    """The database holds exactly one table, users, and a user's whole row is in it."""
    monkeypatch.setenv("PII_DB_PATH", str(tmp_path / "pii.sqlite3"))
    monkeypatch.setenv("PII_KEY", Fernet.generate_key().decode())
    db_path = str(tmp_path / "main.sqlite3")
    with TestClient(service.create_app(db_path)) as c:
        created = c.post("/users", json=ALICE).json()
    with closing(sqlite3.connect(db_path)) as conn:
        tables = {
            name
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not name.startswith("sqlite_")
        }
        row = conn.execute(
            "SELECT name, email, phone, bio, city, created_at FROM users WHERE id = ?", (created["id"],)
        ).fetchone()
    assert tables == {"users"}
    assert row == (*ALICE.values(), created["created_at"])

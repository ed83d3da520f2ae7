"""The user-profile service.

Non-PII (id, bio, city, created_at) lives in the main SQLite database; PII (name, email,
phone) lives Fernet-encrypted in a separate SQLite file, the PII store.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import datetime, timezone

from cryptography.fernet import Fernet
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel, Field

PII_FIELDS = ("name", "email", "phone")

MAIN_SCHEMA = """
CREATE TABLE IF NOT EXISTS main.users (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    bio TEXT,
    city TEXT,
    created_at TEXT NOT NULL
)
"""

PII_SCHEMA = """
CREATE TABLE IF NOT EXISTS pii.pii (
    user_id INTEGER PRIMARY KEY,
    name BLOB NOT NULL,
    email BLOB NOT NULL,
    phone BLOB
)
"""

PROFILE_QUERY = """
SELECT u.id, p.name, p.email, p.phone, u.bio, u.city, u.created_at
FROM main.users AS u JOIN pii.pii AS p ON p.user_id = u.id
WHERE u.id = ?
"""


class NewUser(BaseModel):
    """The body of ``POST /users``."""

    name: str = Field(min_length=1)
    email: str = Field(min_length=1)
    phone: str | None = None
    bio: str | None = None
    city: str | None = None


class Profile(NewUser):
    """What ``GET /users/{id}/profile`` returns."""

    id: int
    created_at: str


class UserStore:
    """Users split over two SQLite files, attached to one connection.

    Attaching the PII store keeps a write atomic across both files and a profile one
    primary-key lookup in each; only that user's three values are decrypted.
    """

    def __init__(self, db_path: str, pii_path: str, key: str) -> None:
        self._db_path = db_path
        self._pii_path = pii_path
        self._fernet = Fernet(key)
        with closing(self._connect()) as conn:
            with self._transaction(conn):
                conn.execute(MAIN_SCHEMA)
                conn.execute(PII_SCHEMA)
            self._migrate(conn)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._db_path, isolation_level=None)
        conn.execute("ATTACH DATABASE ? AS pii", (self._pii_path,))
        return conn

    @staticmethod
    @contextmanager
    def _transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _encrypt(self, value: str | None) -> bytes | None:
        return None if value is None else self._fernet.encrypt(value.encode("utf-8"))

    def _decrypt(self, token: bytes | None) -> str | None:
        return None if token is None else self._fernet.decrypt(token).decode("utf-8")

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """Move PII that a database from before the split still holds into the PII store."""
        columns = {row[1] for row in conn.execute("PRAGMA main.table_info(users)")}
        if not columns.intersection(PII_FIELDS):
            return
        with self._transaction(conn):
            rows = conn.execute("SELECT id, name, email, phone FROM main.users").fetchall()
            conn.executemany(
                "INSERT OR REPLACE INTO pii.pii (user_id, name, email, phone) VALUES (?, ?, ?, ?)",
                [(user_id, *map(self._encrypt, pii)) for user_id, *pii in rows],
            )
            for column in PII_FIELDS:
                conn.execute(f"ALTER TABLE main.users DROP COLUMN {column}")
        # Dropped values stay in freed pages until the file is rebuilt.
        conn.execute("VACUUM main")

    def create(self, user: NewUser) -> Profile:
        created_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with closing(self._connect()) as conn, self._transaction(conn):
            cursor = conn.execute(
                "INSERT INTO main.users (bio, city, created_at) VALUES (?, ?, ?)",
                (user.bio, user.city, created_at),
            )
            user_id = cursor.lastrowid
            conn.execute(
                "INSERT INTO pii.pii (user_id, name, email, phone) VALUES (?, ?, ?, ?)",
                (user_id, *(self._encrypt(getattr(user, field)) for field in PII_FIELDS)),
            )
        return Profile(id=user_id, created_at=created_at, **user.model_dump())

    def profile(self, user_id: int) -> Profile | None:
        with closing(self._connect()) as conn:
            row = conn.execute(PROFILE_QUERY, (user_id,)).fetchone()
        if row is None:
            return None
        _, name, email, phone, bio, city, created_at = row
        return Profile(
            id=user_id,
            name=self._decrypt(name),
            email=self._decrypt(email),
            phone=self._decrypt(phone),
            bio=bio,
            city=city,
            created_at=created_at,
        )


def _setting(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: the PII store needs PII_DB_PATH and PII_KEY")
    return value


def create_app(db_path: str) -> FastAPI:
    """The ASGI app: non-PII in ``db_path``, PII encrypted in ``$PII_DB_PATH`` under ``$PII_KEY``."""
    store = UserStore(db_path, _setting("PII_DB_PATH"), _setting("PII_KEY"))
    app = FastAPI(title="User profiles")

    @app.post("/users", status_code=201)
    def create_user(user: NewUser) -> Profile:
        return store.create(user)

    @app.get("/users/{user_id}/profile")
    def get_profile(user_id: int) -> Profile:
        profile = store.profile(user_id)
        if profile is None:
            raise HTTPException(status_code=404, detail="user not found")
        return profile

    return app

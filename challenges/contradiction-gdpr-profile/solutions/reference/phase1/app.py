"""The user-profile service: a FastAPI app over one SQLite table, ``users``."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import datetime, timezone

from fastapi import FastAPI, HTTPException
from pydantic import BaseModel, Field

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    phone TEXT,
    bio TEXT,
    city TEXT,
    created_at TEXT NOT NULL
)
"""

COLUMNS = ("id", "name", "email", "phone", "bio", "city", "created_at")


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
    """Users in the ``users`` table of one SQLite file; the profile is one primary-key SELECT."""

    def __init__(self, db_path: str) -> None:
        self._db_path = db_path
        with closing(self._connect()) as conn, conn:
            conn.execute(SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self._db_path)

    def create(self, user: NewUser) -> Profile:
        created_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with closing(self._connect()) as conn, conn:
            cursor = conn.execute(
                "INSERT INTO users (name, email, phone, bio, city, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (user.name, user.email, user.phone, user.bio, user.city, created_at),
            )
            user_id = cursor.lastrowid
        return Profile(id=user_id, created_at=created_at, **user.model_dump())

    def profile(self, user_id: int) -> Profile | None:
        with closing(self._connect()) as conn:
            row = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM users WHERE id = ?", (user_id,)).fetchone()
        return None if row is None else Profile(**dict(zip(COLUMNS, row)))


def create_app(db_path: str) -> FastAPI:
    """The ASGI app, storing its data in the SQLite database at ``db_path``."""
    store = UserStore(db_path)
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

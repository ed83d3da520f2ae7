"""SQLite storage: the schema, and one connection per request."""

import sqlite3
from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request

SCHEMA = """
CREATE TABLE IF NOT EXISTS posts (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    author TEXT NOT NULL,
    notify INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS comments (
    id INTEGER PRIMARY KEY,
    post_id INTEGER NOT NULL REFERENCES posts (id),
    parent_id INTEGER REFERENCES comments (id),
    author TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS posts_fts USING fts5 (title, body);
CREATE TABLE IF NOT EXISTS notifications (
    id INTEGER PRIMARY KEY,
    user TEXT NOT NULL,
    post_id INTEGER NOT NULL REFERENCES posts (id),
    comment_id INTEGER NOT NULL REFERENCES comments (id)
);
"""


def connect(db_path: str) -> sqlite3.Connection:
    """A connection with foreign keys enforced."""
    conn = sqlite3.connect(db_path, check_same_thread=False)
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def fetch_all(conn: sqlite3.Connection, sql: str, params: tuple = ()) -> list[dict]:
    """The query's rows, as dicts keyed by column name."""
    cursor = conn.execute(sql, params)
    columns = [column[0] for column in cursor.description]
    return [dict(zip(columns, values, strict=True)) for values in cursor]


def fetch_one(conn: sqlite3.Connection, sql: str, params: tuple = ()) -> dict | None:
    """The query's first row as a dict, or None."""
    rows = fetch_all(conn, sql, params)
    return rows[0] if rows else None


def init_db(db_path: str) -> None:
    """Create the database file and its schema if they do not exist yet."""
    conn = connect(db_path)
    try:
        conn.executescript(SCHEMA)
    finally:
        conn.close()


def get_db(request: Request) -> Iterator[sqlite3.Connection]:
    """One connection per request: committed when the request succeeds, rolled back if not."""
    conn = connect(request.app.state.db_path)
    try:
        with conn:
            yield conn
    finally:
        conn.close()


Db = Annotated[sqlite3.Connection, Depends(get_db)]

"""SQLite access for the report-export service.

The schema is shared with the nightly billing job, which writes the reports table:
do not change the tables from this service.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    username TEXT PRIMARY KEY,
    tenant   TEXT NOT NULL,
    token    TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS reports (
    id           INTEGER PRIMARY KEY,
    tenant       TEXT NOT NULL,
    report_date  TEXT NOT NULL,
    title        TEXT NOT NULL,
    amount_cents INTEGER NOT NULL
);
"""


def init_db(db_path: str | Path) -> None:
    """Create the tables if the database does not have them yet."""
    with connect(db_path) as conn:
        conn.executescript(SCHEMA)


@contextmanager
def connect(db_path: str | Path) -> Iterator[sqlite3.Connection]:
    """A connection that commits on success and is always closed."""
    conn = sqlite3.connect(db_path)
    try:
        with conn:
            yield conn
    finally:
        conn.close()

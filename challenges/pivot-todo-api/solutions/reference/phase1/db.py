"""SQLite access: one short-lived connection per unit of work."""

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def connect(path: str) -> Iterator[sqlite3.Connection]:
    """A connection to the database at ``path``: committed on success, rolled back on error."""
    connection = sqlite3.connect(path)
    connection.row_factory = sqlite3.Row
    try:
        with connection:
            yield connection
    finally:
        connection.close()

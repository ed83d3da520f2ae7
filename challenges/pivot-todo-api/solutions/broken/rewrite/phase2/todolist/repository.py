"""Persistence of todo items in SQLite, with optimistic locking on a revision counter."""

from __future__ import annotations

import sqlite3
import threading

ITEM_COLUMNS = ("id", "title", "description", "done", "created_by", "version")

DDL = """
CREATE TABLE IF NOT EXISTS tasks (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    title       TEXT    NOT NULL,
    description TEXT    NOT NULL,
    done        BOOLEAN NOT NULL,
    created_by  TEXT    NOT NULL,
    version     INTEGER NOT NULL
);
"""


class Missing(Exception):
    """Raised when an item id does not exist."""


class Stale(Exception):
    """Raised when a write names a revision other than the stored one."""

    def __init__(self, item: dict) -> None:
        super().__init__("stale version")
        self.item = item


class Repository:
    """All item reads and writes go through one shared connection guarded by a mutex."""

    def __init__(self, filename: str) -> None:
        self._mutex = threading.Lock()
        self._conn = sqlite3.connect(filename, check_same_thread=False, isolation_level=None)
        self._conn.executescript(DDL)

    @staticmethod
    def _as_item(values: tuple) -> dict:
        item = dict(zip(ITEM_COLUMNS, values, strict=True))
        item["done"] = item["done"] == 1
        return item

    def _one(self, item_id: int) -> dict:
        found = self._conn.execute(
            "SELECT id, title, description, done, created_by, version FROM tasks WHERE id=?",
            [item_id],
        ).fetchone()
        if found is None:
            raise Missing(item_id)
        return self._as_item(found)

    def everything(self) -> list[dict]:
        with self._mutex:
            cursor = self._conn.execute(
                "SELECT id, title, description, done, created_by, version FROM tasks ORDER BY id ASC"
            )
            return [self._as_item(values) for values in cursor]

    def fetch(self, item_id: int) -> dict:
        with self._mutex:
            return self._one(item_id)

    def insert(self, fields: dict, owner: str) -> dict:
        with self._mutex:
            cursor = self._conn.execute(
                "INSERT INTO tasks (title, description, done, created_by, version)"
                " VALUES (:title, :description, :done, :owner, 1)",
                {**fields, "owner": owner},
            )
            return self._one(cursor.lastrowid)

    def patch(self, item_id: int, fields: dict, expected: int | None) -> dict:
        with self._mutex:
            item = self._one(item_id)
            if expected is not None and expected != item["version"]:
                raise Stale(item)
            merged = {**item, **fields}
            self._conn.execute(
                "UPDATE tasks SET title=?, description=?, done=?, version=version+1 WHERE id=?",
                [merged["title"], merged["description"], merged["done"], item_id],
            )
            return self._one(item_id)

    def remove(self, item_id: int) -> None:
        with self._mutex:
            if not self._conn.execute("DELETE FROM tasks WHERE id=?", [item_id]).rowcount:
                raise Missing(item_id)

"""Notes kept in a SQLite file: add, read, change, delete, search and filter by tag."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

Note = dict[str, Any]

SCHEMA = """
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    tags TEXT NOT NULL
)
"""
COLUMNS = "id, title, body, tags"


def clean_title(title: object) -> str:
    """``title`` if it is a string that is not blank; ValueError otherwise."""
    if not isinstance(title, str) or not title.strip():
        raise ValueError(f"title must be a non-blank string, not {title!r}")
    return title


def clean_body(body: object) -> str:
    """``body`` if it is a string; ValueError otherwise."""
    if not isinstance(body, str):
        raise ValueError(f"body must be a string, not {body!r}")
    return body


def clean_tags(tags: object) -> list[str]:
    """The tags stripped, lower-cased, without blanks or repeats, sorted; ValueError if one is bad."""
    if isinstance(tags, str) or not isinstance(tags, Iterable):
        raise ValueError(f"tags must be a list of strings, not {tags!r}")
    cleaned = set()
    for tag in tags:
        if not isinstance(tag, str) or "," in tag:
            raise ValueError(f"a tag must be a string without commas, not {tag!r}")
        if tag.strip():
            cleaned.add(tag.strip().lower())
    return sorted(cleaned)


def to_note(row: tuple[Any, ...]) -> Note:
    """A note as callers see it, from a row of ``COLUMNS``."""
    note_id, title, body, tags = row
    return {"id": note_id, "title": title, "body": body, "tags": tags.split(",") if tags else []}


class NoteStore:
    """The notes in the SQLite file at ``db_path``; stores on one file share them."""

    def __init__(self, db_path: str) -> None:
        self.db_path = db_path
        with self._connect() as db:
            db.execute(SCHEMA)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection for one unit of work, committed at its end (no state kept between calls)."""
        db = sqlite3.connect(self.db_path)
        try:
            with db:
                yield db
        finally:
            db.close()

    def add(self, title: str, body: str = "", tags: Iterable[str] = ()) -> Note:
        """Store a new note and return it."""
        title, body, tag_list = clean_title(title), clean_body(body), clean_tags(tags)
        with self._connect() as db:
            cursor = db.execute(
                "INSERT INTO notes (title, body, tags) VALUES (?, ?, ?)",
                (title, body, ",".join(tag_list)),
            )
            return self._get(db, int(cursor.lastrowid or 0))

    def get(self, note_id: int) -> Note:
        """The note ``note_id``; KeyError if there is none."""
        with self._connect() as db:
            return self._get(db, note_id)

    def _get(self, db: sqlite3.Connection, note_id: int) -> Note:
        row = db.execute(f"SELECT {COLUMNS} FROM notes WHERE id = ?", (note_id,)).fetchone()
        if row is None:
            raise KeyError(note_id)
        return to_note(row)

    def list(self) -> list[Note]:
        """Every note, in id order."""
        return self._select("1 = 1", ())

    def search(self, text: str) -> list[Note]:
        """The notes whose title or body holds ``text`` (case-insensitively), in id order."""
        pattern = "%" + text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        where = "(lower(title) LIKE ? ESCAPE '\\' OR lower(body) LIKE ? ESCAPE '\\')"
        return self._select(where, (pattern, pattern))

    def tagged(self, tag: str) -> list[Note]:
        """The notes carrying ``tag`` (compared as stored: stripped, lower-cased), in id order."""
        wanted = tag.strip().lower()
        return [note for note in self.list() if wanted in note["tags"]]

    def _select(self, where: str, parameters: tuple[Any, ...]) -> list[Note]:
        with self._connect() as db:
            rows = db.execute(f"SELECT {COLUMNS} FROM notes WHERE {where} ORDER BY id", parameters)
            return [to_note(row) for row in rows]

    def update(
        self,
        note_id: int,
        title: str | None = None,
        body: str | None = None,
        tags: Iterable[str] | None = None,
    ) -> Note:
        """Replace the given fields of note ``note_id`` and return it; KeyError if there is none."""
        changes: dict[str, str] = {}
        if title is not None:
            changes["title"] = clean_title(title)
        if body is not None:
            changes["body"] = clean_body(body)
        if tags is not None:
            changes["tags"] = ",".join(clean_tags(tags))
        with self._connect() as db:
            self._get(db, note_id)
            if changes:
                assignments = ", ".join(f"{column} = ?" for column in changes)
                db.execute(f"UPDATE notes SET {assignments} WHERE id = ?", (*changes.values(), note_id))
            return self._get(db, note_id)

    def delete(self, note_id: int) -> None:
        """Remove note ``note_id``; KeyError if there is none."""
        with self._connect() as db:
            if db.execute("DELETE FROM notes WHERE id = ?", (note_id,)).rowcount == 0:
                raise KeyError(note_id)

"""Multi-tenant notes: a tenant-aware repository over SQLite, rebuilt for the SaaS launch."""

from __future__ import annotations

import re
import sqlite3
from typing import Any

_VALID_TENANT = re.compile(r"[a-z0-9-]{1,40}")


def _check_text(name: str, value: Any, *, blank_ok: bool) -> str:
    if type(value) is not str or (not blank_ok and value.strip() == ""):
        raise ValueError(f"invalid {name}: {value!r}")
    return value


def _check_labels(labels: Any) -> str:
    if type(labels) not in (list, tuple, set, frozenset):
        raise ValueError(f"invalid tags: {labels!r}")
    kept = set()
    for label in labels:
        if type(label) is not str or "," in label:
            raise ValueError(f"invalid tag: {label!r}")
        label = label.strip().lower()
        if label:
            kept.add(label)
    return ",".join(sorted(kept))


class NoteStore:
    """Tenant-scoped note repository: each instance sees one tenant's rows and nothing else."""

    def __init__(self, db_path: str, tenant: str = "default") -> None:
        if type(tenant) is not str or _VALID_TENANT.fullmatch(tenant) is None:
            raise ValueError(f"invalid tenant: {tenant!r}")
        self.path, self.tenant = db_path, tenant
        self._run(
            "CREATE TABLE IF NOT EXISTS tenant_notes (note_id INTEGER PRIMARY KEY AUTOINCREMENT, "
            "owner TEXT NOT NULL, heading TEXT NOT NULL, content TEXT NOT NULL, labels TEXT NOT NULL)"
        )

    def _run(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        connection = sqlite3.connect(self.path)
        try:
            with connection:
                cursor = connection.execute(sql, args)
                return [(cursor.lastrowid, cursor.rowcount)] if sql.startswith(("INSERT", "DELETE")) else cursor.fetchall()
        finally:
            connection.close()

    def _rows(self, extra: str = "", args: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        found = self._run(
            "SELECT note_id, heading, content, labels FROM tenant_notes WHERE owner = ?" + extra + " ORDER BY note_id",
            (self.tenant, *args),
        )
        return [{"id": i, "title": h, "body": c, "tags": l.split(",") if l else []} for i, h, c, l in found]

    def add(self, title: Any, body: Any = "", tags: Any = ()) -> dict[str, Any]:
        heading, content = _check_text("title", title, blank_ok=False), _check_text("body", body, blank_ok=True)
        (new_id, _), = self._run(
            "INSERT INTO tenant_notes (owner, heading, content, labels) VALUES (?, ?, ?, ?)",
            (self.tenant, heading, content, _check_labels(tags)),
        )
        return self.get(new_id)

    def get(self, note_id: int) -> dict[str, Any]:
        matches = self._rows(" AND note_id = ?", (note_id,))
        if not matches:
            raise KeyError(note_id)
        return matches[0]

    def list(self) -> list[dict[str, Any]]:
        return self._rows()

    def search(self, text: str) -> list[dict[str, Any]]:
        needle = text.lower()
        return [n for n in self._rows() if needle in n["title"].lower() or needle in n["body"].lower()]

    def tagged(self, tag: str) -> list[dict[str, Any]]:
        return [n for n in self._rows() if tag.strip().lower() in n["tags"]]

    def update(self, note_id: int, title: Any = None, body: Any = None, tags: Any = None) -> dict[str, Any]:
        current = self.get(note_id)
        heading = current["title"] if title is None else _check_text("title", title, blank_ok=False)
        content = current["body"] if body is None else _check_text("body", body, blank_ok=True)
        labels = ",".join(current["tags"]) if tags is None else _check_labels(tags)
        self._run(
            "UPDATE tenant_notes SET heading = ?, content = ?, labels = ? WHERE note_id = ? AND owner = ?",
            (heading, content, labels, note_id, self.tenant),
        )
        return self.get(note_id)

    def delete(self, note_id: int) -> None:
        (_, removed), = self._run("DELETE FROM tenant_notes WHERE note_id = ? AND owner = ?", (note_id, self.tenant))
        if removed == 0:
            raise KeyError(note_id)

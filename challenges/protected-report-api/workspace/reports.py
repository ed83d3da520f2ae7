"""Queries behind the report export."""

from __future__ import annotations

import sqlite3
from typing import Any


def export_rows(
    conn: sqlite3.Connection,
    tenant: str,
    *,
    date_from: str | None = None,
    date_to: str | None = None,
) -> list[dict[str, Any]]:
    """The tenant's reports, optionally limited to a date range (inclusive), in id order."""
    sql = "SELECT id, report_date, title, amount_cents FROM reports WHERE tenant = ?"
    params: list[Any] = [tenant]
    if date_from:
        sql += " AND report_date >= ?"
        params.append(date_from)
    if date_to:
        sql += " AND report_date <= ?"
        params.append(date_to)
    sql += " ORDER BY id"
    return [
        {"id": row[0], "date": row[1], "title": row[2], "amount_cents": row[3]}
        for row in conn.execute(sql, params)
    ]

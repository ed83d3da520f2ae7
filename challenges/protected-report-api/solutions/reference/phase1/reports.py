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
    sort: str | None = None,
    descending: bool = False,
) -> list[dict[str, Any]]:
    """The tenant's reports, optionally limited to a date range (inclusive).

    In id order, or with ``sort="date"`` by report date (newest first when
    ``descending``); reports of the same date stay in id order either way.
    """
    sql = "SELECT id, report_date, title, amount_cents FROM reports WHERE tenant = ?"
    params: list[Any] = [tenant]
    if date_from:
        sql += " AND report_date >= ?"
        params.append(date_from)
    if date_to:
        sql += " AND report_date <= ?"
        params.append(date_to)
    if sort == "date":
        sql += " ORDER BY report_date DESC, id" if descending else " ORDER BY report_date, id"
    else:
        sql += " ORDER BY id"
    return [
        {"id": row[0], "date": row[1], "title": row[2], "amount_cents": row[3]}
        for row in conn.execute(sql, params)
    ]

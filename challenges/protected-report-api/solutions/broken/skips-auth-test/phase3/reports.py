"""Queries behind the report export."""

from __future__ import annotations

import sqlite3
from typing import Any


def _where(tenant: str, date_from: str | None, date_to: str | None) -> tuple[str, list[Any]]:
    """The WHERE clause selecting the tenant's reports in the date range (inclusive)."""
    clause = "WHERE tenant = ?"
    params: list[Any] = [tenant]
    if date_from:
        clause += " AND report_date >= ?"
        params.append(date_from)
    if date_to:
        clause += " AND report_date <= ?"
        params.append(date_to)
    return clause, params


def count_rows(
    conn: sqlite3.Connection,
    tenant: str,
    *,
    date_from: str | None = None,
    date_to: str | None = None,
) -> int:
    """How many of the tenant's reports fall in the date range."""
    where, params = _where(tenant, date_from, date_to)
    return conn.execute(f"SELECT COUNT(*) FROM reports {where}", params).fetchone()[0]


def export_rows(
    conn: sqlite3.Connection,
    tenant: str,
    *,
    date_from: str | None = None,
    date_to: str | None = None,
    sort: str | None = None,
    descending: bool = False,
    limit: int | None = None,
    offset: int = 0,
) -> list[dict[str, Any]]:
    """The tenant's reports, optionally limited to a date range (inclusive).

    In id order, or with ``sort="date"`` by report date (newest first when
    ``descending``); reports of the same date stay in id order either way.
    ``limit`` and ``offset`` cut one page out of that order.
    """
    where, params = _where(tenant, date_from, date_to)
    sql = f"SELECT id, report_date, title, amount_cents FROM reports {where}"
    if sort == "date":
        sql += " ORDER BY report_date DESC, id" if descending else " ORDER BY report_date, id"
    else:
        sql += " ORDER BY id"
    if limit is not None:
        sql += " LIMIT ? OFFSET ?"
        params += [limit, offset]
    return [
        {"id": row[0], "date": row[1], "title": row[2], "amount_cents": row[3]}
        for row in conn.execute(sql, params)
    ]

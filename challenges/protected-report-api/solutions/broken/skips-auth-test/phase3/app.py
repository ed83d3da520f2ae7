"""HTTP API of the report-export service."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Query

import db
import reports
from auth import User, authorized_tenant, current_user
from params import (
    BadParameter,
    bad_parameter_response,
    parse_count,
    parse_date,
    parse_order,
    parse_sort,
)

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100


def create_app(db_path: str | Path) -> FastAPI:
    """The application, serving the SQLite database at ``db_path``."""
    db.init_db(db_path)
    app = FastAPI(title="Report export")
    app.state.db_path = str(db_path)
    app.add_exception_handler(BadParameter, bad_parameter_response)

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/reports/export")
    def export_reports(
        tenant: str | None = None,
        date_from: str | None = Query(default=None, alias="from"),
        date_to: str | None = Query(default=None, alias="to"),
        sort: str | None = None,
        order: str | None = None,
        page: str | None = None,
        page_size: str | None = None,
        user: User = Depends(current_user),
    ) -> dict[str, Any]:
        tenant = authorized_tenant(user, tenant)
        date_from = parse_date(date_from, "from")
        date_to = parse_date(date_to, "to")
        sort = parse_sort(sort)
        descending = parse_order(order)
        size = parse_count(page_size, "page_size", default=DEFAULT_PAGE_SIZE, maximum=MAX_PAGE_SIZE)
        number = parse_count(page, "page", default=1)
        with db.connect(app.state.db_path) as conn:
            total = reports.count_rows(conn, tenant, date_from=date_from, date_to=date_to)
            rows = reports.export_rows(
                conn,
                tenant,
                date_from=date_from,
                date_to=date_to,
                sort=sort,
                descending=descending,
                limit=size,
                offset=(number - 1) * size,
            )
        return {"tenant": tenant, "page": number, "page_size": size, "total": total, "reports": rows}

    return app

"""HTTP API of the report-export service."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Query

import db
import reports
from auth import User, authorized_tenant, current_user


def create_app(db_path: str | Path) -> FastAPI:
    """The application, serving the SQLite database at ``db_path``."""
    db.init_db(db_path)
    app = FastAPI(title="Report export")
    app.state.db_path = str(db_path)

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/reports/export")
    def export_reports(
        tenant: str | None = None,
        date_from: str | None = Query(default=None, alias="from"),
        date_to: str | None = Query(default=None, alias="to"),
        user: User = Depends(current_user),
    ) -> dict[str, Any]:
        tenant = authorized_tenant(user, tenant)
        with db.connect(app.state.db_path) as conn:
            rows = reports.export_rows(conn, tenant, date_from=date_from, date_to=date_to)
        return {"tenant": tenant, "reports": rows}

    return app

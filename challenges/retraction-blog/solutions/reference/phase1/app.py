"""The blog service: posts, threaded comments, full-text search and comment notifications."""

from fastapi import FastAPI

from blog import comments, notifications, posts, search
from blog.db import init_db

__all__ = ["create_app"]


def create_app(db_path: str) -> FastAPI:
    """Build the blog app on the SQLite database file at ``db_path`` (created if missing)."""
    init_db(db_path)
    app = FastAPI(title="Blog")
    app.state.db_path = db_path
    app.state.hub = notifications.Hub()
    for module in (posts, comments, search, notifications):
        app.include_router(module.router)
    return app

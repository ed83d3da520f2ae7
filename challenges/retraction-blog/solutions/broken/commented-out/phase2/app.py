"""The blog service: posts, threaded comments, full-text search and comment notifications."""

from fastapi import FastAPI

from blog import comments, posts, search

# Notifications are switched off for now (cut from the release); kept for when they come back.
# from blog import notifications
from blog.db import init_db

__all__ = ["create_app"]


def create_app(db_path: str) -> FastAPI:
    """Build the blog app on the SQLite database file at ``db_path`` (created if missing)."""
    init_db(db_path)
    app = FastAPI(title="Blog")
    app.state.db_path = db_path
    # app.state.hub = notifications.Hub()
    # for module in (posts, comments, search, notifications):
    for module in (posts, comments, search):
        app.include_router(module.router)
    return app

"""The user-profile service. See the briefing for what create_app must return."""

from __future__ import annotations


def create_app(db_path: str):
    """Return the ASGI app, storing its data in the SQLite database at ``db_path``."""
    raise NotImplementedError

"""The team todo API (see the briefing for the contract)."""


def create_app(db_path: str):
    """Return the ASGI app serving the todo API from the SQLite file at ``db_path``."""
    raise NotImplementedError("the todo API is not written yet")

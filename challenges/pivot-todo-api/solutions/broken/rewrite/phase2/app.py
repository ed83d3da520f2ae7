"""Entry point: the collaborative todo service, rebuilt on plain Starlette."""

from todolist.server import build


def create_app(db_path: str):
    """ASGI application for the todo list kept in ``db_path``."""
    return build(db_path)

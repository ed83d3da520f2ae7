"""Fixtures of phase 1's hidden tests: apps on a fresh SQLite file.

Credentials are spelled out in each test file.
"""

import contextlib

import pytest
from starlette.testclient import TestClient


@pytest.fixture
def db_path(tmp_path):
    """A database file nobody has used yet."""
    return str(tmp_path / "todo.db")


@pytest.fixture
def make_client(db_path):
    """Start an app on a database file (default: ``db_path``) and return its test client."""
    from app import create_app

    with contextlib.ExitStack() as stack:

        def make(path: str = db_path) -> TestClient:
            return stack.enter_context(TestClient(create_app(path)))

        yield make


@pytest.fixture
def client(make_client):
    """A test client of an app on a fresh database."""
    return make_client()

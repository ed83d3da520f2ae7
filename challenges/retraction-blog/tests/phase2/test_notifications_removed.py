"""Phase 2: the notifications feature is gone: routes, tables, columns, fields and dependency."""

import re
import sqlite3
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

try:  # a refused handshake may also come back as an HTTP response (newer Starlette)
    from starlette.testclient import WebSocketDenialResponse
except ImportError:  # pragma: no cover - older Starlette
    WebSocketDenialResponse = WebSocketDisconnect


@pytest.fixture
def db_path(tmp_path):
    """A fresh database file for one test."""
    return str(tmp_path / "blog.db")


@pytest.fixture
def client(db_path):
    """A client of an app on a fresh database."""
    from app import create_app

    with TestClient(create_app(db_path)) as client:
        yield client


def post_and_comment(client):
    """Prove the app is alive: create a post and comment on it (what used to notify)."""
    response = client.post("/posts", json={"title": "Alive", "body": "Still here", "author": "alice"})
    assert response.status_code == 201, response.text
    post = response.json()
    response = client.post(f"/posts/{post['id']}/comments", json={"author": "bob", "body": "Hi"})
    assert response.status_code == 201, response.text
    return post


def schema(db_path):
    """(type, name, sql) of every entry of sqlite_master, and every table's column names."""
    conn = sqlite3.connect(db_path)
    try:
        entries = conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
        columns = {
            name: [row[1] for row in conn.execute(f'PRAGMA table_info("{name}")')]
            for kind, name, _ in entries
            if kind == "table"
        }
    finally:
        conn.close()
    return entries, columns


def test_notifications_route_is_gone(client):
    """GET /notifications answers 404, with or without a user."""
    post_and_comment(client)
    assert client.get("/notifications", params={"user": "alice"}).status_code == 404
    assert client.get("/notifications").status_code == 404


def test_notifications_websocket_is_gone(client):
    """Connecting to /ws/notifications fails: there is no such route any more."""
    post_and_comment(client)
    refused = (WebSocketDisconnect, WebSocketDenialResponse)
    with pytest.raises(refused), client.websocket_connect("/ws/notifications?user=alice"):
        pass


def test_schema_has_no_notification_table(client, db_path):
    """A fresh database has no table (nor index, trigger or view) for notifications."""
    post_and_comment(client)
    entries, columns = schema(db_path)
    assert columns, "the app should have created its tables"
    named = [name for _, name, _ in entries if "notif" in name.lower()]
    mentioned = [name for kind, name, sql in entries if kind != "table" and "notif" in (sql or "").lower()]
    assert named + mentioned == []


def test_schema_has_no_notification_column(client, db_path):
    """No table of a fresh database keeps a notification column (such as posts.notify)."""
    post_and_comment(client)
    _, columns = schema(db_path)
    orphans = [f"{table}.{column}" for table, names in columns.items() for column in names]
    orphans = [orphan for orphan in orphans if "notif" in orphan.split(".", 1)[1].lower()]
    assert orphans == []


def test_posts_have_no_notify_field(client):
    """Post responses no longer carry a notify field."""
    post = post_and_comment(client)
    shown = [post, client.get(f"/posts/{post['id']}").json(), *client.get("/posts").json()]
    found = client.get("/search", params={"q": "alive"}).json()
    shown += found if isinstance(found, list) else []  # a broken search is regression's business
    assert [key for item in shown for key in item if "notif" in key.lower()] == []


def test_requirements_drop_websockets():
    """requirements.txt no longer lists websockets, and still lists fastapi."""
    lines = [line.strip() for line in Path("requirements.txt").read_text().splitlines()]
    names = {re.split(r"[\s<>=!~\[;]", line, maxsplit=1)[0].lower() for line in lines}
    assert "fastapi" in names
    assert "websockets" not in names

"""Phase 1: notifications of new comments, stored (GET /notifications) and pushed (WebSocket)."""

import threading

import pytest
from fastapi.testclient import TestClient


@pytest.fixture
def client(tmp_path):
    """A client of an app on a fresh database."""
    from app import create_app

    with TestClient(create_app(str(tmp_path / "blog.db"))) as client:
        yield client


def new_post(client, author, **fields):
    """Create a post by ``author``; return its JSON."""
    body = {"title": "Title", "body": "Body", "author": author, **fields}
    response = client.post("/posts", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def comment(client, post_id, author="bob", parent_id=None):
    """Comment on a post; return the comment's JSON."""
    response = client.post(
        f"/posts/{post_id}/comments", json={"author": author, "body": "Hi", "parent_id": parent_id}
    )
    assert response.status_code == 201, response.text
    return response.json()


def receive_json(ws, seconds=10.0):
    """The next JSON message of the socket; fail (instead of hanging) if none comes."""
    box = []
    reader = threading.Thread(target=lambda: box.append(ws.receive_json()), daemon=True)
    reader.start()
    reader.join(seconds)
    assert box, f"no notification was pushed within {seconds} s"
    return box[0]


def test_comment_notifies_the_post_author(client):
    """Each comment (replies too) stores a notification for the post's author."""
    post = new_post(client, "alice")
    first = comment(client, post["id"], author="bob")
    reply = comment(client, post["id"], author="carol", parent_id=first["id"])
    response = client.get("/notifications", params={"user": "alice"})
    assert response.status_code == 200
    notifications = response.json()
    assert [(n["user"], n["post_id"], n["comment_id"]) for n in notifications] == [
        ("alice", post["id"], first["id"]),
        ("alice", post["id"], reply["id"]),
    ]
    assert all(isinstance(n["id"], int) for n in notifications)
    assert client.get("/notifications", params={"user": "bob"}).json() == []


def test_post_notify_flag_defaults_to_true(client):
    """Posts carry "notify": true unless created with "notify": false."""
    assert new_post(client, "alice")["notify"] is True
    quiet = new_post(client, "alice", notify=False)
    assert quiet["notify"] is False
    assert client.get(f"/posts/{quiet['id']}").json()["notify"] is False


def test_notify_false_silences_a_post(client):
    """Comments on a post created with "notify": false notify nobody."""
    quiet = new_post(client, "alice", notify=False)
    comment(client, quiet["id"])
    assert client.get("/notifications", params={"user": "alice"}).json() == []


def test_websocket_pushes_new_comments(client):
    """A socket open on /ws/notifications?user=alice receives alice's notification as JSON."""
    post = new_post(client, "alice")
    with client.websocket_connect("/ws/notifications?user=alice") as ws:
        created = comment(client, post["id"], author="bob")
        event = receive_json(ws)
    stored = client.get("/notifications", params={"user": "alice"}).json()
    assert event == stored[0]
    assert (event["user"], event["post_id"], event["comment_id"]) == ("alice", post["id"], created["id"])


def test_websocket_gets_only_its_users_notifications(client):
    """A user's socket is not told about comments on other people's posts."""
    alices = new_post(client, "alice")
    bobs = new_post(client, "bob")
    with client.websocket_connect("/ws/notifications?user=bob") as ws:
        comment(client, alices["id"], author="carol")
        on_bobs = comment(client, bobs["id"], author="carol")
        event = receive_json(ws)
    assert (event["user"], event["comment_id"]) == ("bob", on_bobs["id"])

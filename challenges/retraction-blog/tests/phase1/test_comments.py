"""Phase 1: comments on posts, threaded (a comment may reply to another comment)."""

import pytest
from fastapi.testclient import TestClient


@pytest.fixture
def client(tmp_path):
    """A client of an app on a fresh database."""
    from app import create_app

    with TestClient(create_app(str(tmp_path / "blog.db"))) as client:
        yield client


@pytest.fixture
def post_id(client):
    """The id of a freshly created post."""
    response = client.post("/posts", json={"title": "Ferries", "body": "Timetables", "author": "alice"})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def comment(client, post_id, author="bob", body="Nice", parent_id=None):
    """Post a comment; return the response."""
    return client.post(
        f"/posts/{post_id}/comments", json={"author": author, "body": body, "parent_id": parent_id}
    )


def test_comment_on_a_post(client, post_id):
    """POST /posts/{id}/comments answers 201 with the comment."""
    response = comment(client, post_id, author="bob", body="Great read")
    assert response.status_code == 201, response.text
    created = response.json()
    assert isinstance(created["id"], int)
    assert created["post_id"] == post_id
    assert created["parent_id"] is None
    assert (created["author"], created["body"]) == ("bob", "Great read")


def test_parent_id_is_optional(client, post_id):
    """A top-level comment may leave parent_id out."""
    response = client.post(f"/posts/{post_id}/comments", json={"author": "bob", "body": "Hi"})
    assert response.status_code == 201, response.text
    assert response.json()["parent_id"] is None


def test_comment_on_missing_post_is_404(client):
    """Commenting on a post that does not exist is a 404."""
    assert comment(client, 4242).status_code == 404


def test_comments_of_missing_post_is_404(client):
    """Listing the comments of a post that does not exist is a 404."""
    assert client.get("/posts/4242/comments").status_code == 404


def test_replies_nest_under_their_parent(client, post_id):
    """GET /posts/{id}/comments is a tree: top-level comments with replies nested to any depth."""
    top = comment(client, post_id, body="top").json()
    reply = comment(client, post_id, author="carol", body="reply", parent_id=top["id"]).json()
    deeper = comment(client, post_id, author="dave", body="deeper", parent_id=reply["id"]).json()
    assert reply["parent_id"] == top["id"]
    response = client.get(f"/posts/{post_id}/comments")
    assert response.status_code == 200
    assert response.json() == [
        {
            **top,
            "replies": [{**reply, "replies": [{**deeper, "replies": []}]}],
        }
    ]


def test_siblings_keep_creation_order(client, post_id):
    """Top-level comments and the replies to one comment are listed oldest first."""
    first = comment(client, post_id, body="first").json()
    second = comment(client, post_id, body="second").json()
    reply_a = comment(client, post_id, body="a", parent_id=first["id"]).json()
    reply_b = comment(client, post_id, body="b", parent_id=first["id"]).json()
    tree = client.get(f"/posts/{post_id}/comments").json()
    assert [c["id"] for c in tree] == [first["id"], second["id"]]
    assert [c["id"] for c in tree[0]["replies"]] == [reply_a["id"], reply_b["id"]]
    assert tree[1]["replies"] == []


def test_comments_stay_with_their_post(client, post_id):
    """A post's comment list holds only that post's comments."""
    other = client.post("/posts", json={"title": "Other", "body": "Post", "author": "erin"}).json()["id"]
    mine = comment(client, post_id, body="mine").json()
    comment(client, other, body="theirs")
    assert [c["id"] for c in client.get(f"/posts/{post_id}/comments").json()] == [mine["id"]]


def test_reply_to_a_comment_of_another_post_is_400(client, post_id):
    """parent_id must be a comment on the same post."""
    other = client.post("/posts", json={"title": "Other", "body": "Post", "author": "erin"}).json()["id"]
    elsewhere = comment(client, other).json()
    assert comment(client, post_id, parent_id=elsewhere["id"]).status_code == 400


def test_reply_to_a_missing_comment_is_400(client, post_id):
    """parent_id must name an existing comment."""
    assert comment(client, post_id, parent_id=4242).status_code == 400

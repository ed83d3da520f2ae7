"""Phase 1: posts can be created, listed, read and edited."""

import pytest
from fastapi.testclient import TestClient


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


def new_post(client, **fields):
    """Create a post (defaults for what is not given) and return its JSON."""
    body = {"title": "Hello", "body": "First words", "author": "alice", **fields}
    response = client.post("/posts", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def test_create_post(client):
    """POST /posts answers 201 with the stored post and an integer id."""
    post = new_post(client, title="Tide tables", body="High water at noon", author="alice")
    assert isinstance(post["id"], int)
    assert (post["title"], post["body"], post["author"]) == ("Tide tables", "High water at noon", "alice")


def test_get_post(client):
    """GET /posts/{id} answers the post as it was created."""
    post = new_post(client, title="Gulls", body="They are loud")
    response = client.get(f"/posts/{post['id']}")
    assert response.status_code == 200
    assert response.json() == post


def test_get_missing_post_is_404(client):
    """A post id that does not exist is a 404."""
    assert client.get("/posts/4242").status_code == 404


def test_list_posts_oldest_first(client):
    """GET /posts lists every post in creation order."""
    first = new_post(client, title="One")
    second = new_post(client, title="Two")
    response = client.get("/posts")
    assert response.status_code == 200
    assert [p["id"] for p in response.json()] == [first["id"], second["id"]]


def test_edit_post(client):
    """PATCH /posts/{id} changes the fields given and keeps the others."""
    post = new_post(client, title="Draft", body="Unchanged body")
    response = client.patch(f"/posts/{post['id']}", json={"title": "Final"})
    assert response.status_code == 200
    assert response.json()["title"] == "Final"
    assert response.json()["body"] == "Unchanged body"
    assert client.get(f"/posts/{post['id']}").json()["title"] == "Final"
    response = client.patch(f"/posts/{post['id']}", json={"body": "New body"})
    assert (response.json()["title"], response.json()["body"]) == ("Final", "New body")


def test_edit_missing_post_is_404(client):
    """Editing a post that does not exist is a 404."""
    assert client.patch("/posts/4242", json={"title": "x"}).status_code == 404


def test_post_needs_title_body_and_author(client):
    """A post without a title, or with an empty body, is rejected with 422."""
    assert client.post("/posts", json={"body": "b", "author": "a"}).status_code == 422
    assert client.post("/posts", json={"title": "t", "body": "", "author": "a"}).status_code == 422
    assert client.post("/posts", json={"title": "t", "body": "b"}).status_code == 422


def test_posts_persist_in_the_database_file(db_path):
    """A second app on the same database file sees the first app's posts."""
    from app import create_app

    with TestClient(create_app(db_path)) as client:
        post = new_post(client, title="Kept")
    with TestClient(create_app(db_path)) as client:
        assert client.get(f"/posts/{post['id']}").json()["title"] == "Kept"

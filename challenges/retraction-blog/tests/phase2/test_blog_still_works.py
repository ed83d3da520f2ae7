"""Phase 2: with notifications gone, posts, threaded comments and search work as before."""

import pytest
from fastapi.testclient import TestClient


@pytest.fixture
def client(tmp_path):
    """A client of an app on a fresh database."""
    from app import create_app

    with TestClient(create_app(str(tmp_path / "blog.db"))) as client:
        yield client


def created(response):
    """The JSON of a 201 response."""
    assert response.status_code == 201, response.text
    return response.json()


def test_posts_create_edit_and_read(client):
    """A post is created (201), edited (PATCH) and read back with its edits."""
    post = created(client.post("/posts", json={"title": "Draft", "body": "Words", "author": "alice"}))
    assert (post["title"], post["body"], post["author"]) == ("Draft", "Words", "alice")
    response = client.patch(f"/posts/{post['id']}", json={"title": "Published"})
    assert response.status_code == 200
    read = client.get(f"/posts/{post['id']}").json()
    assert (read["id"], read["title"], read["body"]) == (post["id"], "Published", "Words")
    assert read["author"] == "alice"
    assert [p["id"] for p in client.get("/posts").json()] == [post["id"]]
    assert client.get("/posts/4242").status_code == 404


def test_threaded_comments_still_nest(client):
    """Comments and replies to replies are created (201) and listed as a tree."""
    post = created(client.post("/posts", json={"title": "Thread", "body": "Talk", "author": "alice"}))
    url = f"/posts/{post['id']}/comments"
    top = created(client.post(url, json={"author": "alice", "body": "top"}))
    reply = created(client.post(url, json={"author": "bob", "body": "reply", "parent_id": top["id"]}))
    deeper = created(client.post(url, json={"author": "alice", "body": "deeper", "parent_id": reply["id"]}))
    second = created(client.post(url, json={"author": "carol", "body": "second"}))
    assert (reply["post_id"], reply["parent_id"]) == (post["id"], top["id"])
    response = client.get(url)
    assert response.status_code == 200
    assert response.json() == [
        {**top, "replies": [{**reply, "replies": [{**deeper, "replies": []}]}]},
        {**second, "replies": []},
    ]
    assert client.post(url, json={"author": "bob", "body": "x", "parent_id": 4242}).status_code == 400
    assert client.post("/posts/4242/comments", json={"author": "bob", "body": "x"}).status_code == 404


def test_search_still_follows_edits(client):
    """Search finds posts by title and body words, all words required, edits included."""
    storm = created(client.post("/posts", json={"title": "Storm", "body": "Gales tonight", "author": "a"}))
    created(client.post("/posts", json={"title": "Calm", "body": "Gales gone", "author": "b"}))

    def found(q):
        response = client.get("/search", params={"q": q})
        assert response.status_code == 200, response.text
        return {p["id"] for p in response.json()}

    assert found("storm GALES") == {storm["id"]}
    client.patch(f"/posts/{storm['id']}", json={"body": "Hail tonight"})
    assert found("hail") == {storm["id"]}
    assert found("storm gales") == set()
    assert found('"gales (') != set()

"""Phase 1: full-text search across posts (GET /search?q=)."""

import pytest
from fastapi.testclient import TestClient


@pytest.fixture
def client(tmp_path):
    """A client of an app on a fresh database."""
    from app import create_app

    with TestClient(create_app(str(tmp_path / "blog.db"))) as client:
        yield client


def new_post(client, title, body):
    """Create a post and return its id."""
    response = client.post("/posts", json={"title": title, "body": body, "author": "alice"})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def found(client, q):
    """The ids of the posts GET /search?q= answers, as a set."""
    response = client.get("/search", params={"q": q})
    assert response.status_code == 200, response.text
    return {post["id"] for post in response.json()}


def test_finds_a_word_in_the_body(client):
    """A word of a post's body finds the post, and only posts containing it."""
    harbour = new_post(client, "Morning", "The harbour was quiet at dawn")
    new_post(client, "Evening", "The market was busy")
    assert found(client, "harbour") == {harbour}


def test_finds_a_word_in_the_title(client):
    """A word of a post's title finds the post."""
    lighthouse = new_post(client, "Lighthouse keepers", "A short history")
    new_post(client, "Fishing", "Nets and boats")
    assert found(client, "lighthouse") == {lighthouse}


def test_results_are_posts(client):
    """Each result is the post itself, as GET /posts/{id} shows it."""
    post_id = new_post(client, "Anchors", "Heavy iron")
    response = client.get("/search", params={"q": "anchors"})
    assert response.json() == [client.get(f"/posts/{post_id}").json()]


def test_search_is_case_insensitive(client):
    """Upper or lower case makes no difference."""
    post_id = new_post(client, "Seaweed", "Kelp forests grow fast")
    assert found(client, "KELP") == {post_id}
    assert found(client, "seaweed") == {post_id}


def test_every_word_must_match(client):
    """With several words, a post must contain all of them (in title or body)."""
    both = new_post(client, "Storm warning", "Gales expected tonight")
    new_post(client, "Storm over", "Calm seas again")
    new_post(client, "Forecast", "Gales in the north")
    assert found(client, "storm gales") == {both}


def test_search_follows_edits(client):
    """After an edit, the new words find the post and the replaced ones no longer do."""
    post_id = new_post(client, "Draft", "Oysters are in season")
    assert client.patch(f"/posts/{post_id}", json={"body": "Mussels are in season"}).status_code == 200
    assert found(client, "mussels") == {post_id}
    assert found(client, "oysters") == set()


def test_no_match_is_an_empty_list(client):
    """A word no post contains gives 200 with []."""
    new_post(client, "Tides", "Spring and neap")
    assert found(client, "volcano") == set()


def test_punctuation_is_not_an_error(client):
    """Quotes, operators and brackets in q are plain text, never a server error."""
    post_id = new_post(client, "Quotes", "He said hello")
    for q in ['"hello', "hello AND (", "NEAR(hello", "hello*", "-hello", "'"]:
        response = client.get("/search", params={"q": q})
        assert response.status_code == 200, (q, response.status_code)
    assert found(client, '"hello') == {post_id}

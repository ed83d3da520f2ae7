"""Phase 1: every route needs the HTTP Basic credentials of alice or bob."""

import base64

import pytest


def basic(username, password):
    """The HTTP Basic Authorization header for ``username``:``password``."""
    return {"Authorization": "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()}


AS_ALICE = basic("alice", "wonderland")
AS_BOB = basic("bob", "builder")

ROUTES = [
    ("POST", "/tasks", {"title": "sneaky"}),
    ("GET", "/tasks", None),
    ("GET", "/tasks/{id}", None),
    ("PUT", "/tasks/{id}", {"title": "sneaky"}),
    ("DELETE", "/tasks/{id}", None),
]

BAD_HEADERS = {
    "no credentials": {},
    "wrong password": basic("alice", "builder"),
    "unknown user": basic("mallory", "wonderland"),
    "empty password": basic("bob", ""),
    "not basic": {"Authorization": "Bearer wonderland"},
    "not base64": {"Authorization": "Basic %%%"},
    "no colon": {"Authorization": "Basic " + base64.b64encode(b"alicewonderland").decode()},
}


def _assert_401(response):
    assert response.status_code == 401, response.text
    assert response.headers.get("www-authenticate", "").lower().startswith("basic")


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
def test_every_route_rejects_missing_credentials(client, method, path, body):
    """Without credentials every route answers 401 with a Basic challenge and changes nothing."""
    task = client.post("/tasks", json={"title": "keep me"}, headers=AS_ALICE).json()
    response = client.request(method, path.format(id=task["id"]), json=body)
    _assert_401(response)
    assert client.get("/tasks", headers=AS_ALICE).json() == [task]


@pytest.mark.parametrize("headers", BAD_HEADERS.values(), ids=BAD_HEADERS.keys())
def test_bad_credentials_are_401(client, headers):
    """Wrong, unknown or malformed credentials get 401 with a Basic challenge."""
    _assert_401(client.get("/tasks", headers=headers))


def test_rejected_write_changes_nothing(client):
    """A write with a wrong password is refused before it touches the data."""
    _assert_401(client.post("/tasks", json={"title": "x"}, headers=basic("bob", "wonderland")))
    assert client.get("/tasks", headers=AS_BOB).json() == []


def test_both_users_are_accepted(client):
    """alice/wonderland and bob/builder are the two users."""
    assert client.get("/tasks", headers=AS_ALICE).status_code == 200
    assert client.get("/tasks", headers=AS_BOB).status_code == 200

"""Phase 1: create, read, update and delete tasks on one list shared by the team."""

import base64

import pytest


def basic(username, password):
    """The HTTP Basic Authorization header for ``username``:``password``."""
    return {"Authorization": "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()}


AS_ALICE = basic("alice", "wonderland")
AS_BOB = basic("bob", "builder")

FIELDS = {"id", "title", "description", "done", "created_by"}


def _create(client, headers=AS_ALICE, **fields):
    response = client.post("/tasks", json=fields, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()


def test_create_returns_201_and_the_task(client):
    """POST /tasks answers 201 with the stored task, defaults filled in."""
    task = _create(client, title="Buy milk")
    assert task.keys() >= FIELDS
    assert isinstance(task["id"], int)
    assert not isinstance(task["id"], bool)
    assert task["id"] > 0
    assert (task["title"], task["description"], task["done"], task["created_by"]) == (
        "Buy milk",
        "",
        False,
        "alice",
    )


def test_create_with_every_field(client):
    """description and done are taken from the body when given."""
    task = _create(client, headers=AS_BOB, title="Ship it", description="Friday", done=True)
    assert (task["title"], task["description"], task["done"], task["created_by"]) == (
        "Ship it",
        "Friday",
        True,
        "bob",
    )


def test_server_sets_id_and_creator(client):
    """id and created_by in the body are ignored, as are unknown fields."""
    task = _create(client, title="Mine", id=999, created_by="mallory", priority=3)
    assert task["id"] != 999
    assert task["created_by"] == "alice"
    assert client.get(f"/tasks/{task['id']}", headers=AS_ALICE).json() == task


def test_list_is_empty_at_first(client):
    """A new database has no tasks."""
    response = client.get("/tasks", headers=AS_ALICE)
    assert response.status_code == 200
    assert response.json() == []


def test_list_is_shared_and_in_id_order(client):
    """Both users see every task, ordered by id."""
    first = _create(client, title="one")
    second = _create(client, headers=AS_BOB, title="two")
    third = _create(client, title="three")
    assert len({first["id"], second["id"], third["id"]}) == 3
    expected = sorted([first, second, third], key=lambda task: task["id"])
    assert client.get("/tasks", headers=AS_ALICE).json() == expected
    assert client.get("/tasks", headers=AS_BOB).json() == expected


def test_get_one_task(client):
    """GET /tasks/{id} answers 200 with the task, for either user."""
    task = _create(client, title="Read me", description="twice")
    for headers in (AS_ALICE, AS_BOB):
        response = client.get(f"/tasks/{task['id']}", headers=headers)
        assert response.status_code == 200
        assert response.json() == task


def test_get_missing_task_is_404(client):
    """An id nobody created is 404."""
    _create(client, title="exists")
    assert client.get("/tasks/4242", headers=AS_ALICE).status_code == 404


def test_update_changes_only_given_fields(client):
    """PUT changes the fields in the body and keeps the others."""
    task = _create(client, title="Draft", description="long text")
    response = client.put(f"/tasks/{task['id']}", json={"done": True}, headers=AS_ALICE)
    assert response.status_code == 200, response.text
    updated = response.json()
    assert (updated["title"], updated["description"], updated["done"]) == (
        "Draft",
        "long text",
        True,
    )
    response = client.put(f"/tasks/{task['id']}", json={"title": "Final"}, headers=AS_ALICE)
    assert response.status_code == 200, response.text
    assert (response.json()["title"], response.json()["done"]) == ("Final", True)
    assert client.get(f"/tasks/{task['id']}", headers=AS_ALICE).json() == response.json()


def test_anyone_can_update_any_task(client):
    """bob may edit alice's task; created_by stays alice."""
    task = _create(client, title="Alice's")
    response = client.put(
        f"/tasks/{task['id']}", json={"title": "Edited by Bob", "description": "hi"}, headers=AS_BOB
    )
    assert response.status_code == 200, response.text
    updated = response.json()
    assert (updated["id"], updated["title"], updated["description"], updated["created_by"]) == (
        task["id"],
        "Edited by Bob",
        "hi",
        "alice",
    )


def test_update_missing_task_is_404(client):
    """PUT on an id nobody created is 404 and creates nothing."""
    response = client.put("/tasks/4242", json={"title": "ghost"}, headers=AS_ALICE)
    assert response.status_code == 404
    assert client.get("/tasks", headers=AS_ALICE).json() == []


def test_delete_returns_204_and_removes(client):
    """DELETE answers 204 with an empty body; the task is gone, the others stay."""
    doomed = _create(client, title="doomed")
    kept = _create(client, title="kept")
    response = client.delete(f"/tasks/{doomed['id']}", headers=AS_BOB)
    assert response.status_code == 204
    assert response.content == b""
    assert client.get(f"/tasks/{doomed['id']}", headers=AS_ALICE).status_code == 404
    assert client.get("/tasks", headers=AS_ALICE).json() == [kept]


def test_delete_missing_task_is_404(client):
    """DELETE on an id nobody created (or already deleted) is 404."""
    task = _create(client, title="once")
    assert client.delete(f"/tasks/{task['id']}", headers=AS_ALICE).status_code == 204
    assert client.delete(f"/tasks/{task['id']}", headers=AS_ALICE).status_code == 404
    assert client.delete("/tasks/4242", headers=AS_ALICE).status_code == 404


BAD_NEW_TASKS = {
    "empty object": {},
    "no title": {"description": "no title"},
    "empty title": {"title": ""},
    "blank title": {"title": "   "},
    "null title": {"title": None},
    "number title": {"title": 42},
    "number description": {"title": "ok", "description": 7},
    "string done": {"title": "ok", "done": "maybe"},
    "array body": ["title"],
}


@pytest.mark.parametrize("body", BAD_NEW_TASKS.values(), ids=BAD_NEW_TASKS.keys())
def test_invalid_new_task_is_422(client, body):
    """A body that is not a valid new task is 422 and creates nothing."""
    assert client.post("/tasks", json=body, headers=AS_ALICE).status_code == 422
    assert client.get("/tasks", headers=AS_ALICE).json() == []


def test_malformed_json_is_422(client):
    """A body that is not JSON at all is 422."""
    response = client.post(
        "/tasks", content=b"{title: oops", headers={**AS_ALICE, "Content-Type": "application/json"}
    )
    assert response.status_code == 422
    assert client.get("/tasks", headers=AS_ALICE).json() == []


BAD_UPDATES = {
    "empty title": {"title": ""},
    "blank title": {"title": " \t"},
    "number title": {"title": 42},
    "number description": {"description": 7},
    "string done": {"done": "maybe"},
    "array body": ["done"],
}


@pytest.mark.parametrize("body", BAD_UPDATES.values(), ids=BAD_UPDATES.keys())
def test_invalid_update_is_422(client, body):
    """An invalid update is 422 and leaves the task as it was."""
    task = _create(client, title="Stable", description="as is")
    assert client.put(f"/tasks/{task['id']}", json=body, headers=AS_ALICE).status_code == 422
    assert client.get(f"/tasks/{task['id']}", headers=AS_ALICE).json() == task

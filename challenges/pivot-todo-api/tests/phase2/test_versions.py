"""Phase 2 over REST: every task has a version, and an edit of a stale version is refused."""

import base64


def basic(username, password):
    """The HTTP Basic Authorization header for ``username``:``password``."""
    return {"Authorization": "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()}


AS_ALICE = basic("alice", "wonderland")
AS_BOB = basic("bob", "builder")


def _create(client, headers=AS_ALICE, **fields):
    response = client.post("/tasks", json=fields, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()


def _put(client, task_id, headers=AS_ALICE, **fields):
    return client.put(f"/tasks/{task_id}", json=fields, headers=headers)


def test_new_task_is_version_1(client):
    """A created task is at version 1, wherever it is read."""
    task = _create(client, title="fresh")
    assert task["version"] == 1
    assert not isinstance(task["version"], bool)
    assert client.get(f"/tasks/{task['id']}", headers=AS_BOB).json()["version"] == 1
    assert [t["version"] for t in client.get("/tasks", headers=AS_BOB).json()] == [1]


def test_version_in_a_new_task_is_ignored(client):
    """The server numbers versions: a version in a POST body does not count."""
    assert _create(client, title="sneaky", version=7)["version"] == 1


def test_each_update_increments_the_version(client):
    """A PUT naming the current version applies and adds one to it."""
    task = _create(client, title="a")
    response = _put(client, task["id"], title="b", version=1)
    assert response.status_code == 200, response.text
    assert (response.json()["title"], response.json()["version"]) == ("b", 2)
    response = _put(client, task["id"], headers=AS_BOB, done=True, version=2)
    assert response.status_code == 200, response.text
    updated = response.json()
    assert (updated["title"], updated["done"], updated["version"]) == ("b", True, 3)
    assert client.get(f"/tasks/{task['id']}", headers=AS_ALICE).json() == updated


def test_update_without_version_still_counts(client):
    """An old client's PUT (no version) applies and bumps the version: older edits now conflict."""
    task = _create(client, title="old client")
    response = _put(client, task["id"], title="mobile edit")
    assert response.status_code == 200, response.text
    assert response.json()["version"] == 2
    assert _put(client, task["id"], headers=AS_BOB, title="stale", version=1).status_code == 409
    assert client.get(f"/tasks/{task['id']}", headers=AS_BOB).json() == response.json()


def test_second_stale_edit_is_409_with_the_current_task(client):
    """alice and bob both edit version 1: alice's lands, bob's gets 409 with alice's version."""
    task = _create(client, title="Plan the offsite", description="venue?")
    alice = _put(client, task["id"], title="Plan the offsite (Lisbon)", version=1)
    assert alice.status_code == 200, alice.text
    bob = _put(client, task["id"], headers=AS_BOB, description="Porto!", done=True, version=1)
    assert bob.status_code == 409, bob.text
    assert bob.json()["current"] == alice.json()
    assert client.get(f"/tasks/{task['id']}", headers=AS_BOB).json() == alice.json()

    retry = _put(client, task["id"], headers=AS_BOB, description="Porto!", version=2)
    assert retry.status_code == 200, retry.text
    assert (retry.json()["title"], retry.json()["description"], retry.json()["done"]) == (
        "Plan the offsite (Lisbon)",
        "Porto!",
        False,
    )
    assert retry.json()["version"] == 3


def test_version_from_the_future_is_409(client):
    """A version the task has not reached yet is stale too: 409, nothing changes."""
    task = _create(client, title="now")
    response = _put(client, task["id"], title="later", version=5)
    assert response.status_code == 409, response.text
    assert response.json()["current"] == task
    assert client.get(f"/tasks/{task['id']}", headers=AS_ALICE).json() == task


def test_failed_updates_keep_the_version(client):
    """Invalid (422) and missing-task (404) updates change nothing, version included."""
    task = _create(client, title="steady")
    assert _put(client, task["id"], title="", version=1).status_code == 422
    assert _put(client, 4242, title="ghost", version=1).status_code == 404
    assert client.get(f"/tasks/{task['id']}", headers=AS_ALICE).json() == task


def test_versions_survive_a_new_app(make_client):
    """Versions live in the database: a new app on the same file continues from them."""
    first = make_client()
    task = _create(first, title="v1")
    _put(first, task["id"], title="v2", version=1)
    _put(first, task["id"], title="v3", version=2)

    second = make_client()
    stored = second.get(f"/tasks/{task['id']}", headers=AS_BOB).json()
    assert (stored["title"], stored["version"]) == ("v3", 3)
    assert _put(second, task["id"], headers=AS_BOB, title="stale", version=2).status_code == 409
    assert _put(second, task["id"], headers=AS_BOB, title="v4", version=3).json()["version"] == 4

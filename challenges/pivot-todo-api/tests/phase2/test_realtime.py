"""Phase 2: /ws pushes every change, from REST or WebSocket, to every connected client."""

import base64

import pytest
from starlette.websockets import WebSocketDisconnect


def basic(username, password):
    """The HTTP Basic Authorization header for ``username``:``password``."""
    return {"Authorization": "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()}


AS_ALICE = basic("alice", "wonderland")
AS_BOB = basic("bob", "builder")

BAD_HEADERS = {
    "no credentials": {},
    "wrong password": basic("alice", "builder"),
    "unknown user": basic("mallory", "wonderland"),
    "not basic": {"Authorization": "Bearer wonderland"},
}


def _create(client, headers=AS_ALICE, **fields):
    response = client.post("/tasks", json=fields, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()


@pytest.mark.parametrize("headers", BAD_HEADERS.values(), ids=BAD_HEADERS.keys())
def test_ws_refuses_bad_credentials(connect, headers):
    """Without valid Basic credentials the connection is closed with code 1008."""
    with pytest.raises(WebSocketDisconnect) as closed:
        connect(headers=headers, hello=False).receive()
    assert closed.value.code == 1008


def test_hello_names_the_user_and_lists_the_tasks(client, connect):
    """The first message is hello, with the user and every task exactly as GET /tasks has them."""
    first = _create(client, title="one")
    _create(client, headers=AS_BOB, title="two", description="second", done=True)
    client.put(f"/tasks/{first['id']}", json={"title": "one, edited", "version": 1}, headers=AS_ALICE)
    bob = connect("bob")
    assert (bob.hello["type"], bob.hello["user"]) == ("hello", "bob")
    assert bob.hello["tasks"] == client.get("/tasks", headers=AS_BOB).json()
    assert connect("alice").hello["user"] == "alice"


def test_rest_create_reaches_every_client(client, connect):
    """A task created over REST is pushed to every connection, the creator's own included."""
    clients = [connect("alice"), connect("alice"), connect("bob")]
    task = _create(client, headers=AS_BOB, title="Standup notes", description="9:30")
    for live in clients:
        assert live.receive() == {"type": "task_created", "task": task}


def test_rest_update_reaches_every_client(client, connect):
    """An update over REST is pushed with the task as it is after the update."""
    task = _create(client, title="Draft")
    clients = [connect("alice"), connect("bob")]
    response = client.put(f"/tasks/{task['id']}", json={"done": True, "version": 1}, headers=AS_BOB)
    assert response.status_code == 200, response.text
    for live in clients:
        assert live.receive() == {"type": "task_updated", "task": response.json()}


def test_rest_delete_reaches_every_client(client, connect):
    """A delete over REST is pushed as task_deleted with the id."""
    task = _create(client, title="Short-lived")
    clients = [connect("alice"), connect("bob")]
    assert client.delete(f"/tasks/{task['id']}", headers=AS_ALICE).status_code == 204
    for live in clients:
        assert live.receive() == {"type": "task_deleted", "id": task["id"]}


def test_ws_commands_reach_every_client(connect):
    """create, update and delete sent over /ws are pushed to everyone, the sender included."""
    alice, bob = connect("alice"), connect("bob")
    bob.send({"type": "create", "title": "From the socket", "description": "live"})
    created = bob.expect("task_created")
    assert alice.receive() == created
    task = created["task"]
    assert (task["title"], task["description"], task["done"]) == ("From the socket", "live", False)
    assert (task["created_by"], task["version"]) == ("bob", 1)

    alice.send({"type": "update", "id": task["id"], "done": True, "version": 1})
    updated = alice.expect("task_updated")
    assert bob.receive() == updated
    assert (updated["task"]["id"], updated["task"]["done"], updated["task"]["version"]) == (
        task["id"],
        True,
        2,
    )
    assert updated["task"]["created_by"] == "bob"

    alice.send({"type": "delete", "id": task["id"]})
    assert alice.receive() == {"type": "task_deleted", "id": task["id"]}
    assert bob.receive() == {"type": "task_deleted", "id": task["id"]}


def _kind_and_id(message):
    return message["type"], message["task"]["id"] if "task" in message else message.get("id")


def test_every_client_hears_changes_in_the_order_they_happened(client, connect):
    """A mix of REST and WebSocket changes arrives at every client in one order."""
    alice, bob = connect("alice"), connect("bob")
    first = _create(client, title="first")
    second = _create(client, headers=AS_BOB, title="second")
    client.put(f"/tasks/{first['id']}", json={"title": "first!", "version": 1}, headers=AS_BOB)
    bob.send({"type": "delete", "id": second["id"]})
    bob.send({"type": "create", "title": "third"})
    bob_heard = [_kind_and_id(bob.receive()) for _ in range(5)]  # bob's commands are done
    client.delete(f"/tasks/{first['id']}", headers=AS_ALICE)
    bob_heard.append(_kind_and_id(bob.receive()))
    alice_heard = [_kind_and_id(alice.receive()) for _ in range(6)]

    third_id = bob_heard[4][1]
    expected = [
        ("task_created", first["id"]),
        ("task_created", second["id"]),
        ("task_updated", first["id"]),
        ("task_deleted", second["id"]),
        ("task_created", third_id),
        ("task_deleted", first["id"]),
    ]
    assert bob_heard == expected
    assert alice_heard == expected


def test_failed_rest_changes_are_pushed_to_nobody(client, connect):
    """404, 422 and 401 answers change nothing, so nothing is pushed for them."""
    task = _create(client, title="target")
    alice, bob = connect("alice"), connect("bob")
    assert client.put("/tasks/4242", json={"title": "x", "version": 1}, headers=AS_ALICE).status_code == 404
    assert client.delete("/tasks/4242", headers=AS_ALICE).status_code == 404
    assert client.post("/tasks", json={"title": ""}, headers=AS_ALICE).status_code == 422
    assert client.put(f"/tasks/{task['id']}", json={"done": "maybe"}, headers=AS_BOB).status_code == 422
    assert client.post("/tasks", json={"title": "intruder"}).status_code == 401
    marker = _create(client, title="marker")
    for live in (alice, bob):
        assert live.receive() == {"type": "task_created", "task": marker}


def test_bad_commands_get_an_error_only_to_the_sender(connect):
    """Invalid commands get an error (422 or 404) to the sender only; the socket stays open."""
    alice, bob = connect("alice"), connect("bob")
    bad = [
        ({"type": "create"}, 422),
        ({"type": "create", "title": "   "}, 422),
        ({"type": "create", "title": "ok", "done": "maybe"}, 422),
        ({"type": "fly", "title": "away"}, 422),
        ({"type": "update", "id": 4242, "title": "ghost"}, 404),
        ({"type": "delete", "id": 4242}, 404),
        ({"type": "delete", "id": "one"}, 422),
        ("{not json", 422),
    ]
    for command, status in bad:
        if isinstance(command, str):
            bob.send_text(command)
        else:
            bob.send(command)
        error = bob.expect("error")
        assert error["status"] == status, (command, error)
        assert isinstance(error["detail"], str)
    bob.send({"type": "create", "title": "still here"})
    created = bob.expect("task_created")
    assert alice.receive() == created


def test_a_closed_client_does_not_break_changes(client, connect):
    """After a client goes away, changes still succeed and reach the others."""
    leaving, staying = connect("alice"), connect("bob")
    leaving.close()
    task = _create(client, title="after the tab closed")
    assert staying.receive() == {"type": "task_created", "task": task}
    staying.send({"type": "update", "id": task["id"], "title": "still live", "version": 1})
    assert staying.expect("task_updated")["task"]["title"] == "still live"

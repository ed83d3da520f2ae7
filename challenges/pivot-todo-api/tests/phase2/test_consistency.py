"""Phase 2: REST and WebSocket clients share one set of tasks, and stale edits never win."""

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


def _get(client, task_id, headers=AS_ALICE):
    return client.get(f"/tasks/{task_id}", headers=headers)


def test_ws_create_is_visible_over_rest(client, connect):
    """A task created over /ws is the same task over REST: same id, same values."""
    bob = connect("bob")
    bob.send({"type": "create", "title": "Via socket", "done": True})
    task = bob.expect("task_created")["task"]
    response = _get(client, task["id"])
    assert response.status_code == 200, response.text
    assert response.json() == task
    assert client.get("/tasks", headers=AS_ALICE).json() == [task]


def test_ws_update_is_visible_over_rest(client, connect):
    """An update over /ws is what REST reads next, version included."""
    task = _create(client, title="Before", description="rest")
    bob = connect("bob")
    bob.send({"type": "update", "id": task["id"], "title": "After", "version": 1})
    updated = bob.expect("task_updated")["task"]
    assert (updated["title"], updated["description"], updated["version"]) == ("After", "rest", 2)
    assert _get(client, task["id"]).json() == updated


def test_ws_delete_is_visible_over_rest(client, connect):
    """A delete over /ws removes the task for REST too."""
    task = _create(client, title="Doomed")
    kept = _create(client, title="Kept")
    alice = connect("alice")
    alice.send({"type": "delete", "id": task["id"]})
    assert alice.receive() == {"type": "task_deleted", "id": task["id"]}
    assert _get(client, task["id"]).status_code == 404
    assert client.get("/tasks", headers=AS_BOB).json() == [kept]


def test_rest_and_ws_creates_share_one_set_of_ids(client, connect):
    """Tasks created over both transports get distinct ids and all show up over REST."""
    alice = connect("alice")
    alice.send({"type": "create", "title": "ws one"})
    one = alice.expect("task_created")["task"]
    two = _create(client, headers=AS_BOB, title="rest two")
    assert alice.receive() == {"type": "task_created", "task": two}
    alice.send({"type": "create", "title": "ws three"})
    three = alice.expect("task_created")["task"]
    assert len({one["id"], two["id"], three["id"]}) == 3
    assert client.get("/tasks", headers=AS_BOB).json() == sorted(
        [one, two, three], key=lambda task: task["id"]
    )
    bob = connect("bob")
    bob.send({"type": "update", "id": two["id"], "title": "rest two, via ws", "version": 1})
    assert _get(client, two["id"]).json() == bob.expect("task_updated")["task"]


def test_two_users_edit_the_same_task_over_ws(client, connect):
    """Both edit version 1 over /ws: the first wins, the second gets a 409 error, unheard."""
    task = _create(client, title="Book the room")
    alice, bob = connect("alice"), connect("bob")
    alice.send({"type": "update", "id": task["id"], "title": "Book room 4", "version": 1})
    won = alice.expect("task_updated")["task"]
    assert bob.receive() == {"type": "task_updated", "task": won}

    bob.send({"type": "update", "id": task["id"], "title": "Book room 7", "done": True, "version": 1})
    error = bob.expect("error")
    assert error["status"] == 409
    assert error["current"] == won
    assert _get(client, task["id"]).json() == won

    alice.send({"type": "create", "title": "marker"})
    marker = alice.expect("task_created")
    assert bob.receive() == marker

    bob.send({"type": "update", "id": task["id"], "done": True, "version": won["version"]})
    retried = bob.expect("task_updated")["task"]
    assert (retried["title"], retried["done"], retried["version"]) == ("Book room 4", True, 3)
    assert alice.receive() == {"type": "task_updated", "task": retried}
    assert _get(client, task["id"]).json() == retried


def test_rest_edit_then_stale_ws_edit_is_rejected(client, connect):
    """alice edits over REST, bob's stale edit over /ws gets 409 with alice's version."""
    task = _create(client, title="Order pizza")
    bob = connect("bob")
    response = client.put(
        f"/tasks/{task['id']}",
        json={"title": "Order pizza (veggie)", "version": 1},
        headers=AS_ALICE,
    )
    assert response.status_code == 200, response.text
    assert bob.receive() == {"type": "task_updated", "task": response.json()}
    bob.send({"type": "update", "id": task["id"], "title": "Order sushi", "version": 1})
    error = bob.expect("error")
    assert (error["status"], error["current"]) == (409, response.json())
    assert _get(client, task["id"], AS_BOB).json() == response.json()


def test_ws_edit_then_stale_rest_edit_is_rejected(client, connect):
    """bob edits over /ws (no version); alice's stale PUT gets 409 and is pushed to nobody."""
    task = _create(client, title="Water plants")
    alice, bob = connect("alice"), connect("bob")
    bob.send({"type": "update", "id": task["id"], "description": "the ferns"})
    won = bob.expect("task_updated")["task"]
    assert alice.receive() == {"type": "task_updated", "task": won}
    assert won["version"] == 2

    response = client.put(
        f"/tasks/{task['id']}", json={"title": "Water cactus", "version": 1}, headers=AS_ALICE
    )
    assert response.status_code == 409, response.text
    assert response.json()["current"] == won
    assert _get(client, task["id"]).json() == won
    marker = _create(client, title="marker")
    for live in (alice, bob):
        assert live.receive() == {"type": "task_created", "task": marker}


def test_every_view_agrees_after_mixed_changes(client, connect):
    """After REST and /ws changes by both users, a client's view, a new hello and REST all agree."""
    alice, bob = connect("alice"), connect("bob")
    view = {task["id"]: task for task in alice.hello["tasks"]}
    a = _create(client, title="a")
    assert bob.receive() == {"type": "task_created", "task": a}
    bob.send({"type": "create", "title": "b", "description": "from bob"})
    b = bob.expect("task_created")["task"]
    client.put(f"/tasks/{a['id']}", json={"done": True, "version": 1}, headers=AS_BOB)
    bob.expect("task_updated")
    bob.send({"type": "update", "id": b["id"], "title": "b2", "version": 1})
    bob.expect("task_updated")
    c = _create(client, headers=AS_BOB, title="c")
    bob.expect("task_created")
    alice.send({"type": "delete", "id": a["id"]})
    bob.expect("task_deleted")
    bob.send({"type": "update", "id": c["id"], "title": "stale", "version": 9})
    assert bob.expect("error")["status"] == 409
    alice.send({"type": "create", "title": "d"})
    bob.expect("task_created")

    for _ in range(7):
        message = alice.receive()
        if message["type"] == "task_deleted":
            del view[message["id"]]
        else:
            view[message["task"]["id"]] = message["task"]
    rest = client.get("/tasks", headers=AS_ALICE).json()
    assert [view[task_id] for task_id in sorted(view)] == rest
    assert [task["title"] for task in rest] == ["b2", "c", "d"]
    assert connect("bob").hello["tasks"] == rest

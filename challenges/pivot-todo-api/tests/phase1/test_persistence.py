"""Phase 1: the SQLite file at db_path is the only place tasks live."""

import base64


def basic(username, password):
    """The HTTP Basic Authorization header for ``username``:``password``."""
    return {"Authorization": "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()}


AS_ALICE = basic("alice", "wonderland")
AS_BOB = basic("bob", "builder")


def test_tasks_survive_a_new_app(make_client):
    """A new app on the same file sees every change the first one made."""
    first = make_client()
    kept = first.post("/tasks", json={"title": "kept"}, headers=AS_ALICE).json()
    edited = first.post("/tasks", json={"title": "edited"}, headers=AS_BOB).json()
    gone = first.post("/tasks", json={"title": "gone"}, headers=AS_ALICE).json()
    edited = first.put(f"/tasks/{edited['id']}", json={"done": True}, headers=AS_ALICE).json()
    first.delete(f"/tasks/{gone['id']}", headers=AS_ALICE)

    second = make_client()
    assert second.get("/tasks", headers=AS_BOB).json() == [kept, edited]
    assert second.get(f"/tasks/{gone['id']}", headers=AS_BOB).status_code == 404


def test_two_apps_on_one_file_see_each_other(make_client):
    """Two apps open on the same file at once see each other's writes (no private cache)."""
    first, second = make_client(), make_client()
    task = first.post("/tasks", json={"title": "from first"}, headers=AS_ALICE).json()
    assert second.get("/tasks", headers=AS_BOB).json() == [task]
    updated = second.put(f"/tasks/{task['id']}", json={"title": "from second"}, headers=AS_BOB).json()
    assert first.get(f"/tasks/{task['id']}", headers=AS_ALICE).json() == updated
    assert second.delete(f"/tasks/{task['id']}", headers=AS_BOB).status_code == 204
    assert first.get("/tasks", headers=AS_ALICE).json() == []


def test_separate_files_share_nothing(make_client, tmp_path):
    """Apps on different files have different task lists."""
    first = make_client()
    other = make_client(str(tmp_path / "other.db"))
    first.post("/tasks", json={"title": "only here"}, headers=AS_ALICE)
    assert other.get("/tasks", headers=AS_ALICE).json() == []


def test_users_still_work_after_a_restart(make_client):
    """Starting an app on an existing file keeps both users working (and only them)."""
    make_client().post("/tasks", json={"title": "x"}, headers=AS_ALICE)
    again = make_client()
    assert again.get("/tasks", headers=AS_ALICE).status_code == 200
    assert again.get("/tasks", headers=AS_BOB).status_code == 200
    assert again.get("/tasks", headers={"Authorization": "Basic Ym9iOndvbmRlcmxhbmQ="}).status_code == 401

"""The WebSocket transport: live updates out, task commands in.

Socket clients work on an in-memory copy of the tasks, so a command never waits on SQLite.
REST changes are mirrored into the copy as they are announced.
"""

import json
from typing import Any

from pydantic import ValidationError
from starlette import status
from starlette.websockets import WebSocket, WebSocketDisconnect

from auth import Users, basic_credentials
from hub import Event, Hub
from tasks import Task, TaskCreate, TaskNotFound, TaskStore, TaskUpdate, VersionConflict


class SocketTasks:
    """The tasks as WebSocket clients see them, and the announcements of every change."""

    def __init__(self, store: TaskStore, hub: Hub) -> None:
        self.store = store
        self.hub = hub
        self._tasks: dict[int, Task] | None = None

    def _loaded(self) -> dict[int, Task]:
        if self._tasks is None:
            self._tasks = {task["id"]: task for task in self.store.list()}
        return self._tasks

    async def publish(self, event: Event) -> None:
        """Mirror a change made elsewhere (REST) into the copy and announce it."""
        tasks = self._loaded()
        if event["type"] == "task_deleted":
            tasks.pop(event["id"], None)
        else:
            tasks[event["task"]["id"]] = event["task"]
        await self.hub.publish(event)

    async def join(self, websocket: WebSocket, username: str) -> None:
        """Subscribe ``websocket`` and send it the current tasks."""
        self.hub.join(websocket)
        tasks = [task for _, task in sorted(self._loaded().items())]
        await websocket.send_json({"type": "hello", "user": username, "tasks": tasks})

    def leave(self, websocket: WebSocket) -> None:
        """Unsubscribe ``websocket``."""
        self.hub.leave(websocket)

    async def create(self, new: TaskCreate, username: str) -> None:
        """Add a task and announce it."""
        tasks = self._loaded()
        task_id = max(tasks, default=0) + 1
        task = {"id": task_id, **new.model_dump(), "created_by": username, "version": 1}
        tasks[task_id] = task
        await self.hub.publish({"type": "task_created", "task": task})

    async def update(self, task_id: int, update: TaskUpdate) -> None:
        """Change a task and announce it."""
        tasks = self._loaded()
        if task_id not in tasks:
            raise TaskNotFound(task_id)
        task = tasks[task_id]
        if update.version is not None and update.version != task["version"]:
            raise VersionConflict(task)
        task = {**task, **update.changes(), "version": task["version"] + 1}
        tasks[task_id] = task
        await self.hub.publish({"type": "task_updated", "task": task})

    async def delete(self, task_id: int) -> None:
        """Remove a task and announce it."""
        if self._loaded().pop(task_id, None) is None:
            raise TaskNotFound(task_id)
        await self.hub.publish({"type": "task_deleted", "id": task_id})


class CommandError(Exception):
    """A command that changed nothing; only its sender hears about it."""

    def __init__(self, status_code: int, detail: str, current: Task | None = None) -> None:
        super().__init__(detail)
        self.status_code = status_code
        self.current = current

    def message(self) -> dict[str, Any]:
        """The error message sent back to the client."""
        message = {"type": "error", "status": self.status_code, "detail": str(self)}
        if self.current is not None:
            message["current"] = self.current
        return message


async def serve(websocket: WebSocket, users: Users, sockets: SocketTasks) -> None:
    """One client's connection, from the handshake until it goes away."""
    credentials = basic_credentials(websocket.headers.get("authorization"))
    if credentials is None or not users.verify(*credentials):
        await websocket.close(code=status.WS_1008_POLICY_VIOLATION)
        return
    username = credentials[0]
    await websocket.accept()
    await sockets.join(websocket, username)
    try:
        while True:
            text = await websocket.receive_text()
            try:
                await _execute(sockets, username, text)
            except CommandError as error:
                await websocket.send_json(error.message())
    except WebSocketDisconnect:
        pass
    finally:
        sockets.leave(websocket)


async def _execute(sockets: SocketTasks, username: str, text: str) -> None:
    """Run one command; its event reaches every client, the sender included."""
    try:
        command = json.loads(text)
    except json.JSONDecodeError:
        raise CommandError(422, "a command is a JSON object") from None
    if not isinstance(command, dict):
        raise CommandError(422, "a command is a JSON object")
    try:
        match command.get("type"):
            case "create":
                await sockets.create(TaskCreate.model_validate(command), username)
            case "update":
                await sockets.update(_task_id(command), TaskUpdate.model_validate(command))
            case "delete":
                await sockets.delete(_task_id(command))
            case other:
                raise CommandError(422, f"unknown command type {other!r}")
    except ValidationError as error:
        raise CommandError(422, str(error)) from None
    except TaskNotFound as error:
        raise CommandError(404, str(error)) from None
    except VersionConflict as error:
        raise CommandError(409, str(error), current=error.current) from None


def _task_id(command: dict[str, Any]) -> int:
    task_id = command.get("id")
    if not isinstance(task_id, int) or isinstance(task_id, bool):
        raise CommandError(422, "id must be an integer")
    return task_id

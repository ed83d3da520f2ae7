"""The WebSocket transport: live updates out, task commands in, over the same LiveTasks as REST."""

import json
from typing import Any

from pydantic import ValidationError
from starlette import status
from starlette.websockets import WebSocket, WebSocketDisconnect

from auth import Users, basic_credentials
from live import LiveTasks
from tasks import Task, TaskCreate, TaskNotFound, TaskUpdate, VersionConflict


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


async def serve(websocket: WebSocket, users: Users, live: LiveTasks) -> None:
    """One client's connection, from the handshake until it goes away."""
    credentials = basic_credentials(websocket.headers.get("authorization"))
    if credentials is None or not users.verify(*credentials):
        await websocket.close(code=status.WS_1008_POLICY_VIOLATION)
        return
    username = credentials[0]
    await websocket.accept()
    await live.join(websocket, username)
    try:
        while True:
            text = await websocket.receive_text()
            try:
                await _execute(live, username, text)
            except CommandError as error:
                await websocket.send_json(error.message())
    except WebSocketDisconnect:
        pass
    finally:
        live.leave(websocket)


async def _execute(live: LiveTasks, username: str, text: str) -> None:
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
                await live.create(TaskCreate.model_validate(command), username)
            case "update":
                await live.update(_task_id(command), TaskUpdate.model_validate(command))
            case "delete":
                await live.delete(_task_id(command))
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

"""HTTP and WebSocket endpoints over one Board, which applies changes and fans them out."""

from __future__ import annotations

import asyncio
import json

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from todolist.accounts import Accounts
from todolist.repository import Missing, Repository, Stale
from todolist.validation import Invalid, item_change, new_item


class Board:
    """Every change goes through here: written to the repository, then sent to all sockets."""

    def __init__(self, repository: Repository) -> None:
        self.repository = repository
        self.sockets: list[WebSocket] = []
        self.sequence = asyncio.Lock()

    async def _fan_out(self, event: dict) -> None:
        for socket in tuple(self.sockets):
            try:
                await socket.send_text(json.dumps(event))
            except Exception:
                if socket in self.sockets:
                    self.sockets.remove(socket)

    async def attach(self, socket: WebSocket, name: str) -> None:
        async with self.sequence:
            self.sockets.append(socket)
            snapshot = self.repository.everything()
            await socket.send_text(json.dumps({"type": "hello", "user": name, "tasks": snapshot}))

    def detach(self, socket: WebSocket) -> None:
        if socket in self.sockets:
            self.sockets.remove(socket)

    async def add(self, payload: object, owner: str) -> dict:
        fields = new_item(payload)
        async with self.sequence:
            item = self.repository.insert(fields, owner)
            await self._fan_out({"type": "task_created", "task": item})
        return item

    async def change(self, item_id: int, payload: object) -> dict:
        fields, expected = item_change(payload)
        async with self.sequence:
            item = self.repository.patch(item_id, fields, expected)
            await self._fan_out({"type": "task_updated", "task": item})
        return item

    async def drop(self, item_id: int) -> None:
        async with self.sequence:
            self.repository.remove(item_id)
            await self._fan_out({"type": "task_deleted", "id": item_id})


def _refuse() -> JSONResponse:
    return JSONResponse(
        {"detail": "authentication required"},
        status_code=401,
        headers={"WWW-Authenticate": 'Basic realm="todo"'},
    )


def _fail(error: Exception) -> JSONResponse:
    if isinstance(error, Missing):
        return JSONResponse({"detail": f"no task {error.args[0]}"}, status_code=404)
    if isinstance(error, Stale):
        return JSONResponse({"detail": "stale version", "current": error.item}, status_code=409)
    return JSONResponse({"detail": str(error)}, status_code=422)


async def _payload(request: Request) -> object:
    try:
        return json.loads(await request.body())
    except ValueError as error:
        raise Invalid("body is not valid JSON") from error


def build(filename: str) -> Starlette:
    accounts = Accounts(filename)
    board = Board(Repository(filename))

    async def collection(request: Request) -> Response:
        who = accounts.from_header(request.headers.get("authorization"))
        if who is None:
            return _refuse()
        if request.method == "GET":
            return JSONResponse(board.repository.everything())
        try:
            return JSONResponse(await board.add(await _payload(request), who), status_code=201)
        except Invalid as error:
            return _fail(error)

    async def member(request: Request) -> Response:
        if accounts.from_header(request.headers.get("authorization")) is None:
            return _refuse()
        item_id = request.path_params["item_id"]
        try:
            if request.method == "GET":
                return JSONResponse(board.repository.fetch(item_id))
            if request.method == "PUT":
                return JSONResponse(await board.change(item_id, await _payload(request)))
            await board.drop(item_id)
            return Response(status_code=204)
        except (Missing, Stale, Invalid) as error:
            return _fail(error)

    async def live(socket: WebSocket) -> None:
        who = accounts.from_header(socket.headers.get("authorization"))
        if who is None:
            await socket.close(code=1008)
            return
        await socket.accept()
        await board.attach(socket, who)
        try:
            while True:
                raw = await socket.receive_text()
                try:
                    command = json.loads(raw)
                    if not isinstance(command, dict):
                        raise Invalid("expected a JSON object")
                    kind = command.get("type")
                    if kind == "create":
                        await board.add(command, who)
                        continue
                    if kind not in ("update", "delete"):
                        raise Invalid(f"unknown type {kind!r}")
                    target = command.get("id")
                    if type(target) is not int:
                        raise Invalid("id has to be an integer")
                    if kind == "update":
                        await board.change(target, command)
                    else:
                        await board.drop(target)
                except (ValueError, Missing, Stale) as error:
                    failure = _fail(error)
                    reply = {"type": "error", "status": failure.status_code, **json.loads(failure.body)}
                    await socket.send_text(json.dumps(reply))
        except WebSocketDisconnect:
            pass
        finally:
            board.detach(socket)

    return Starlette(
        routes=[
            Route("/tasks", collection, methods=["GET", "POST"]),
            Route("/tasks/{item_id:int}", member, methods=["GET", "PUT", "DELETE"]),
            WebSocketRoute("/ws", live),
        ]
    )

"""The team todo API: HTTP routes and a live WebSocket over the same tasks, behind HTTP Basic."""

from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request, Response, WebSocket, status
from fastapi.responses import JSONResponse
from fastapi.security import HTTPBasic, HTTPBasicCredentials

import ws
from auth import Users
from hub import Hub
from live import LiveTasks
from tasks import Task, TaskCreate, TaskNotFound, TaskStore, TaskUpdate, VersionConflict

_basic = HTTPBasic()


def create_app(db_path: str) -> FastAPI:
    """The todo API over the SQLite database at ``db_path``."""
    users = Users(db_path)
    live = LiveTasks(TaskStore(db_path), Hub())

    def current_user(credentials: Annotated[HTTPBasicCredentials, Depends(_basic)]) -> str:
        if not users.verify(credentials.username, credentials.password):
            raise HTTPException(
                status.HTTP_401_UNAUTHORIZED,
                "invalid credentials",
                headers={"WWW-Authenticate": "Basic"},
            )
        return credentials.username

    app = FastAPI(title="Team todo API")
    app.include_router(_task_routes(live, current_user))
    app.add_exception_handler(TaskNotFound, _task_not_found)
    app.add_exception_handler(VersionConflict, _version_conflict)

    @app.websocket("/ws")
    async def live_updates(websocket: WebSocket) -> None:
        await ws.serve(websocket, users, live)

    return app


def _task_routes(live: LiveTasks, current_user: Callable[..., str]) -> APIRouter:
    router = APIRouter(prefix="/tasks", dependencies=[Depends(current_user)])
    User = Annotated[str, Depends(current_user)]

    @router.post("", status_code=status.HTTP_201_CREATED)
    async def create_task(new: TaskCreate, user: User) -> Task:
        return await live.create(new, user)

    @router.get("")
    def list_tasks() -> list[Task]:
        return live.list()

    @router.get("/{task_id}")
    def get_task(task_id: int) -> Task:
        return live.get(task_id)

    @router.put("/{task_id}")
    async def update_task(task_id: int, update: TaskUpdate) -> Task:
        if update.version is None:  # without a version we cannot detect conflicting edits
            raise HTTPException(
                status.HTTP_428_PRECONDITION_REQUIRED, "send the version of the task you edited"
            )
        return await live.update(task_id, update)

    @router.delete("/{task_id}", status_code=status.HTTP_204_NO_CONTENT)
    async def delete_task(task_id: int) -> Response:
        await live.delete(task_id)
        return Response(status_code=status.HTTP_204_NO_CONTENT)

    return router


async def _task_not_found(_request: Request, error: Exception) -> JSONResponse:
    return JSONResponse({"detail": str(error)}, status_code=status.HTTP_404_NOT_FOUND)


async def _version_conflict(_request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, VersionConflict)
    return JSONResponse(
        {"detail": str(error), "current": error.current}, status_code=status.HTTP_409_CONFLICT
    )

"""Task changes as the whole team sees them: the one path REST and WebSocket both go through."""

import anyio
from starlette.websockets import WebSocket

from hub import Hub
from tasks import Task, TaskCreate, TaskStore, TaskUpdate


class LiveTasks:
    """The task store, announcing every successful change to every connected client.

    A change and its announcement finish before the next change starts, so every client
    hears about the changes in the order they were made.
    """

    def __init__(self, store: TaskStore, hub: Hub) -> None:
        self.store = store
        self.hub = hub
        self._turn = anyio.Lock()

    def list(self) -> list[Task]:
        """Every task, in id order."""
        return self.store.list()

    def get(self, task_id: int) -> Task:
        """The task ``task_id``."""
        return self.store.get(task_id)

    async def create(self, new: TaskCreate, username: str) -> Task:
        """Add a task and announce it."""
        async with self._turn:
            task = self.store.create(new, username)
            await self.hub.publish({"type": "task_created", "task": task})
        return task

    async def update(self, task_id: int, update: TaskUpdate) -> Task:
        """Change a task and announce it (nothing is announced if the change fails)."""
        async with self._turn:
            task = self.store.update(task_id, update)
            await self.hub.publish({"type": "task_updated", "task": task})
        return task

    async def delete(self, task_id: int) -> None:
        """Remove a task and announce it."""
        async with self._turn:
            self.store.delete(task_id)
            await self.hub.publish({"type": "task_deleted", "id": task_id})

    async def join(self, websocket: WebSocket, username: str) -> None:
        """Subscribe ``websocket`` and send it the current tasks, with no change in between."""
        async with self._turn:
            self.hub.join(websocket)
            await websocket.send_json(
                {"type": "hello", "user": username, "tasks": self.store.list()}
            )

    def leave(self, websocket: WebSocket) -> None:
        """Unsubscribe ``websocket``."""
        self.hub.leave(websocket)

"""Notifications: a post's author hears about every new comment on it, stored and live."""

import asyncio
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from fastapi import APIRouter, WebSocket

from blog.db import Db, fetch_all, fetch_one


class Hub:
    """The open notification sockets, by user. publish() may be called from any thread."""

    def __init__(self) -> None:
        self._subscribers: list[tuple[str, asyncio.AbstractEventLoop, asyncio.Queue[dict]]] = []

    @contextmanager
    def subscribe(self, user: str) -> Iterator[asyncio.Queue[dict]]:
        """A queue receiving ``user``'s notifications while the block runs."""
        subscriber = (user, asyncio.get_running_loop(), asyncio.Queue())
        self._subscribers.append(subscriber)
        try:
            yield subscriber[2]
        finally:
            self._subscribers.remove(subscriber)

    def publish(self, notification: dict) -> None:
        """Push ``notification`` to every open socket of its user."""
        for user, loop, queue in list(self._subscribers):
            if user == notification["user"]:
                loop.call_soon_threadsafe(queue.put_nowait, notification)


NOTIFICATION_COLUMNS = "id, user, post_id, comment_id"


def notify_post_author(conn: sqlite3.Connection, hub: Hub, post: dict, comment_id: int) -> None:
    """Store and push a notification of a new comment, unless the post opted out."""
    if not post["notify"]:
        return
    cursor = conn.execute(
        "INSERT INTO notifications (user, post_id, comment_id) VALUES (?, ?, ?)",
        (post["author"], post["id"], comment_id),
    )
    hub.publish(
        fetch_one(conn, f"SELECT {NOTIFICATION_COLUMNS} FROM notifications WHERE id = ?", (cursor.lastrowid,))
    )


def list_notifications(user: str, conn: Db) -> list[dict]:
    """GET /notifications?user=: the user's notifications, oldest first."""
    return fetch_all(
        conn, f"SELECT {NOTIFICATION_COLUMNS} FROM notifications WHERE user = ? ORDER BY id", (user,)
    )


async def notification_feed(websocket: WebSocket, user: str) -> None:
    """WebSocket /ws/notifications?user=: pushes each new notification of the user as JSON."""
    hub: Hub = websocket.app.state.hub
    with hub.subscribe(user) as queue:
        await websocket.accept()

        async def forward() -> None:
            while True:
                await websocket.send_json(await queue.get())

        sender = asyncio.create_task(forward())
        try:
            async for _ in websocket.iter_text():
                pass  # clients have nothing to say; reading notices the disconnect
        finally:
            sender.cancel()


router = APIRouter()
router.add_api_route("/notifications", list_notifications, methods=["GET"])
router.add_api_websocket_route("/ws/notifications", notification_feed)

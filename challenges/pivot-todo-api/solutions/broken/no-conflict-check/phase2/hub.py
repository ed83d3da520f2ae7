"""Who is connected over WebSocket, and telling every one of them about a change."""

from typing import Any

from starlette.websockets import WebSocket

Event = dict[str, Any]


class Hub:
    """The open WebSocket connections of one app."""

    def __init__(self) -> None:
        self._clients: set[WebSocket] = set()

    def join(self, websocket: WebSocket) -> None:
        """Send ``websocket`` every event from now on."""
        self._clients.add(websocket)

    def leave(self, websocket: WebSocket) -> None:
        """Stop sending events to ``websocket``."""
        self._clients.discard(websocket)

    async def publish(self, event: Event) -> None:
        """Send ``event`` to every connected client; a client that has gone away is dropped."""
        for websocket in list(self._clients):
            try:
                await websocket.send_json(event)
            except Exception:  # a dead connection must not fail the change that was made
                self.leave(websocket)

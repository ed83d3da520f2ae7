"""Fixtures of phase 2's hidden tests: apps on a fresh SQLite file and live WebSocket clients.

Every WebSocket read has a timeout, so a missing event fails its test instead of hanging
the run. A test that must see *no* event for a failed change makes a marker change next
and checks that the marker's event is the next message: deterministic, no sleeping.
"""

import base64
import contextlib
import json

import anyio
import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

PASSWORDS = {"alice": "wonderland", "bob": "builder"}
TIMEOUT = 2.0


def _basic(username: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


class LiveClient:
    """One WebSocket connection to /ws, with reads that time out."""

    def __init__(self, session) -> None:
        self.session = session
        self.hello = None

    def send(self, command) -> None:
        """Send a command as a JSON text message."""
        self.session.send_text(json.dumps(command))

    def send_text(self, text: str) -> None:
        """Send a raw text message."""
        self.session.send_text(text)

    def receive(self, timeout: float = TIMEOUT):
        """The next JSON message; WebSocketDisconnect if the server closed the connection."""
        message = _next_message(self.session, timeout)
        if message["type"] == "websocket.close":
            raise WebSocketDisconnect(message.get("code", 1000), message.get("reason"))
        text = message.get("text")
        return json.loads(text if text is not None else message["bytes"].decode())

    def expect(self, kind: str):
        """The next message, which must be of type ``kind``."""
        message = self.receive()
        assert isinstance(message, dict), message
        assert message.get("type") == kind, (kind, message)
        return message

    def close(self) -> None:
        """Go away, as a browser tab that is closed does."""
        self.session.__exit__(None, None, None)


def _next_message(session, timeout: float):
    receive_stream = getattr(session, "_send_rx", None)
    if receive_stream is None:  # Starlette before 0.38 kept a thread-safe queue
        import queue

        try:
            message = session._send_queue.get(timeout=timeout)
        except queue.Empty:
            message = None
        if isinstance(message, BaseException):
            raise message
    else:

        async def next_message():
            with anyio.move_on_after(timeout):
                return await receive_stream.receive()
            return None

        try:
            message = session.portal.call(next_message)
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            pytest.fail("the WebSocket ended without a close message (server error?)", pytrace=False)
    if message is None:
        pytest.fail(f"no WebSocket message within {timeout}s", pytrace=False)
    return message


@pytest.fixture
def db_path(tmp_path):
    """A database file nobody has used yet."""
    return str(tmp_path / "todo.db")


@pytest.fixture
def make_client(db_path):
    """Start an app on a database file (default: ``db_path``) and return its test client."""
    from app import create_app

    with contextlib.ExitStack() as stack:

        def make(path: str = db_path) -> TestClient:
            return stack.enter_context(TestClient(create_app(path)))

        yield make


@pytest.fixture
def client(make_client):
    """A test client of an app on a fresh database."""
    return make_client()


@pytest.fixture
def connect(client):
    """Open /ws as a user (the hello message is read into ``.hello``) or with given headers."""
    with contextlib.ExitStack() as stack:

        def open_(user: str = "alice", *, headers=None, hello: bool = True) -> LiveClient:
            if headers is None:
                headers = _basic(user, PASSWORDS[user])
            live = LiveClient(stack.enter_context(client.websocket_connect("/ws", headers=headers)))
            if hello:
                live.hello = live.expect("hello")
            return live

        yield open_

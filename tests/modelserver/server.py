"""The scripted model server: an HTTP server on 127.0.0.1 that plays a script to a real CLI.

:class:`ModelServer` is a context manager: it listens on a free port of 127.0.0.1 from
``__enter__`` to ``__exit__``, in a thread of the test. It answers every API of
:mod:`tests.modelserver.protocols` at once (a CLI's base URL points at it), places each
request in the script (:func:`~tests.modelserver.script.locate`), answers with that step in the
CLI's dialect, and records every request as an :class:`Exchange`: what came (headers, body)
and what went back (the step, the token figures). A request no part of the script claims (a
title, a classifier, a commit message) gets a short answer, recorded too.

It is bounded: past ``max_requests`` requests, or ``seconds`` seconds, it answers 503 to
everything; after ``seconds`` it stops listening; a :class:`~tests.modelserver.script.Hold`
waits at most ``hold_seconds``. The standard library's ``http.server`` in a thread is enough: a CLI makes a
few dozen requests, one at a time, and no dependency of the project speaks HTTP as a server.
"""

from __future__ import annotations

import http.server
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from tests.modelserver.dialects import Dialect, Reply
from tests.modelserver.protocols import Answer, Tokens, protocol_for
from tests.modelserver.script import Hold, Script, locate

__all__ = ["Exchange", "ModelServer", "default_tokens"]


def default_tokens(number: int) -> Tokens:
    """The figures answer ``number`` (from 1) reports: distinct per answer, so a sum names its parts."""
    return Tokens(
        input=1000 + 100 * number, output=20 + number, cache_read=10 * number, cache_write=3 * number
    )


@dataclass(slots=True)
class Exchange:
    """One request the server received, and what it answered."""

    number: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # the JSON body, or None
    text: str  # the body as text
    part: str | None = None  # the script part it was placed in (None: a side request)
    step: int | None = None
    tokens: Tokens | None = None  # the usage the answer reported (None: no answer with usage)
    reply: Reply | None = None
    status: int = 0
    notes: list[str] = field(default_factory=list)


class ModelServer:
    """Plays ``script`` in ``dialect`` to whoever calls 127.0.0.1:``port``."""

    def __init__(
        self,
        script: Script,
        dialect: Dialect,
        *,
        runs: Path | None = None,
        max_requests: int = 400,
        seconds: float = 900.0,
        hold_seconds: float = 240.0,
        tokens: Callable[[int], Tokens] = default_tokens,
    ) -> None:
        self.script = script
        self.dialect = dialect
        self.exchanges: list[Exchange] = []
        self.max_requests = max_requests
        self.seconds = seconds
        self.hold_seconds = hold_seconds
        self._tokens = tokens
        # A workspace is <runs>/<run>/workspace: found in a request, it makes paths absolute.
        self._workspace = re.compile(re.escape(str(runs)) + r"/[^/\"'\s\\]+/workspace") if runs else None
        self._lock = threading.Lock()
        self._answers = 0
        self._wake = threading.Event()
        self._held: set[str] = set()
        self._started = 0.0
        self._server: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        assert self._server is not None, "the server is not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> ModelServer:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        server.daemon_threads = True
        self._server = server
        self._started = time.monotonic()
        self._thread = threading.Thread(target=server.serve_forever, name="model-server", daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self.seconds, self._stop_listening)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._wake.set()
        if self._timer is not None:
            self._timer.cancel()
        self._stop_listening()
        if self._server is not None:
            self._server.server_close()

    def _stop_listening(self) -> None:
        if self._server is not None and self._thread is not None and self._thread.is_alive():
            self._server.shutdown()

    # --- what the tests read --------------------------------------------------------------------

    def answered(self) -> list[Exchange]:
        """Every request answered with token figures, in order."""
        with self._lock:
            return [e for e in self.exchanges if e.tokens is not None]

    # --- answering ------------------------------------------------------------------------------

    def handle(
        self, method: str, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, Answer | None]:
        """Record a request and answer it: a status, and the answer (None: say nothing more)."""
        text = raw.decode("utf-8", "replace")
        try:
            body = json.loads(text) if text else None
        except ValueError:
            body = None
        with self._lock:
            exchange = Exchange(len(self.exchanges) + 1, method, path, headers, body, text)
            self.exchanges.append(exchange)
        over = exchange.number > self.max_requests or time.monotonic() - self._started > self.seconds
        protocol = protocol_for(path) if method == "POST" and isinstance(body, dict) else None
        if over or protocol is None:
            exchange.status = 503 if over else 404
            message = "request budget spent" if over else f"no such endpoint: {method} {path}"
            return exchange.status, Answer(
                "application/json",
                [json.dumps({"error": {"type": "not_found", "message": message}}).encode()],
            )
        assert isinstance(body, dict)
        place = locate(self.script, protocol.conversation(body))
        if self.dialect.side(body):
            # A side request quoting the conversation: held where its part holds, else answered.
            holds = (
                self.dialect.holds_side
                and place is not None
                and any(isinstance(s, Hold) for s in place.part.steps)
            )
            place = place if holds else None
            reply = Reply(hold=True) if holds else Reply("Update the files.")
        elif place is None:
            reply = Reply("Update the files.")
        else:
            exchange.part, exchange.step = place.part.name, place.step
            if place.part.name not in self._held:
                self._wake.set()  # a later message has come: whatever was held is over
            found = self._workspace.search(text) if self._workspace else None
            reply = self.dialect.reply(place.part, place.step, found.group(0) if found else "")
        exchange.reply = reply
        if reply.hold:
            with self._lock:
                self._held = {place.part.name} if place else set()
                self._wake.clear()
            woken = self._wake.wait(self.hold_seconds)
            exchange.notes.append("held, then woken" if woken else "held until the hold ran out")
            exchange.status = 503
            return 503, None
        with self._lock:
            self._answers += 1
            tokens = self._tokens(self._answers)
        exchange.tokens = tokens
        exchange.status = 200
        return 200, protocol.answer(body, path, reply, tokens)


def _handler(server: ModelServer) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self._serve()

        def do_HEAD(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            status, answer = server.handle(self.command, self.path, dict(self.headers.items()), raw)
            try:
                if answer is None:
                    self.send_response(status)
                    self.send_header("Content-Length", "0")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.close_connection = True
                    return
                self.send_response(status)
                self.send_header("Content-Type", answer.content_type)
                if answer.content_type == "text/event-stream":
                    # Streamed as it would be: one chunk per event.
                    self.send_header("Transfer-Encoding", "chunked")
                    self.send_header("Cache-Control", "no-cache")
                    self.end_headers()
                    for chunk in answer.chunks:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                else:
                    payload = b"".join(answer.chunks)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(payload)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the CLI is gone (killed mid-turn): nothing to say

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler

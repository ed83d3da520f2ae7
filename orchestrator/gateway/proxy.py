"""The gateway's HTTP proxy: from the agent's CLI on 127.0.0.1 to its model provider.

Towards the agent it is an HTTP/1.1 server (keep-alive, chunked bodies) on an anyio listener,
with h11 parsing and writing the protocol: a sans-I/O parser that handles every framing a CLI
may use, which a hand-written one would get subtly wrong. Towards the provider it is an httpx
client (TLS, connection pooling, proxies from changeup's environment), on anyio too.

Each request: the session token is checked (:meth:`Gateway.authorised`: a request without it
is refused, 401); the route's prefix names the provider (:mod:`.providers`); the agent's
credentials are taken off and the real key put on; the answer comes back chunk by chunk as
the provider sends it. One chunk is read from the provider only once the last went to the
agent (back-pressure: nothing piles up in between). While the request is under way the
agent's side is watched: if it goes away (its turn was interrupted, its CLI killed), the
upstream request is cancelled and its connection closed. Every request ends in one
:class:`~orchestrator.log.records.ModelRequest`, handed to ``on_request``. With a
:class:`~orchestrator.gateway.budget.Budget`, a request the budget no longer admits is answered
with its provider's own quota error (:func:`~orchestrator.gateway.providers.quota_refusal`) and
``on_exhausted`` is told why.

With a :class:`~orchestrator.gateway.recording.Recorder`, every request served and its answer
are kept as they pass; with a :class:`~orchestrator.gateway.recording.Tape`, the answers come
from a recorded run instead of an upstream, and a request that does not match the recorded one
is refused (400), never answered (after a fork, requests go upstream again).
"""

from __future__ import annotations

import contextlib
import hmac
import json
import secrets
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Literal, cast
from urllib.parse import parse_qsl, urlencode

import anyio
import h11
import httpx
import structlog
from anyio.abc import Listener, SocketAttribute, SocketStream, TaskGroup

from orchestrator.gateway.budget import Budget
from orchestrator.gateway.prices import PriceTable
from orchestrator.gateway.providers import PROVIDERS, Provider, Upstreams, provider_for, quota_refusal
from orchestrator.gateway.recording import Divergence, Recorded, Recorder, Tape
from orchestrator.gateway.usage import Figures, UsageReader
from orchestrator.log.records import ModelRequest

__all__ = ["MAX_REQUEST", "Gateway"]

#: The largest request body taken from the agent.
MAX_REQUEST = 64 << 20
#: How long an upstream may take to connect, and to send its next piece.
CONNECT_SECONDS = 30.0
READ_SECONDS = 900.0
_READ = 64 * 1024
#: Not passed on, either way: hop-by-hop headers, and the ones the gateway sets itself.
_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "host"}
    | {"content-length", "accept-encoding", "content-encoding"}
)
#: Where an agent's CLI may put its key; all are taken off before the request goes on.
_CREDENTIALS = frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key"})


@dataclass(slots=True)
class _Request:
    method: str
    target: str
    headers: list[tuple[str, str]]
    body: bytes


class _AgentGone(Exception):
    """The agent's side of the connection closed."""


class Gateway:
    """One session's gateway: ``async with`` it listens on 127.0.0.1 (a free port) until the end,
    and on the Unix socket ``unix`` too if given (only its owner may connect: mode 0600)."""

    def __init__(
        self,
        upstreams: Upstreams,
        prices: PriceTable,
        on_request: Callable[[ModelRequest], None],
        *,
        token: str | None = None,
        budget: Budget | None = None,
        on_exhausted: Callable[[str], None] | None = None,
        unix: Path | None = None,
        recorder: Recorder | None = None,
        tape: Tape | None = None,
    ) -> None:
        self.upstreams = upstreams
        #: the session's budget (None: none); ``on_exhausted`` is told why at each refusal
        self.budget = budget
        self.on_exhausted = on_exhausted
        self.recorder = recorder
        self.tape = tape
        self.prices = prices
        self.on_request = on_request
        #: the session's token: the only credential the agent gets, worth nothing elsewhere
        self.token = token or f"changeup-session-{secrets.token_urlsafe(32)}"
        self.port = 0
        self.unix = unix
        self._numbers = 0
        self._group: TaskGroup | None = None
        self._client: httpx.AsyncClient | None = None
        self._listener: Listener[SocketStream] | None = None
        self._unix: Listener[SocketStream] | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    def base_url(self, provider: str) -> str:
        """The base URL an agent's CLI is given for ``provider``."""
        found = next(p for p in PROVIDERS if p.name == provider)
        return f"{self.url}{found.prefix}{found.suffix}"

    async def __aenter__(self) -> Gateway:
        self._listener = listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        self.port = listener.extra(SocketAttribute.local_port)
        timeout = httpx.Timeout(READ_SECONDS, connect=CONNECT_SECONDS)
        self._client = httpx.AsyncClient(timeout=timeout, follow_redirects=False)
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(listener.serve, self._serve)
        if self.unix is not None:
            self._unix = await anyio.create_unix_listener(self.unix)
            self.unix.chmod(0o600)
            self._group.start_soon(self._unix.serve, self._serve)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        assert self._group is not None
        assert self._client is not None
        self._group.cancel_scope.cancel()
        try:
            await self._group.__aexit__(None, None, None)
        finally:
            with anyio.CancelScope(shield=True):
                await self._client.aclose()
                for listener in (self._listener, self._unix):
                    if listener is not None:
                        await listener.aclose()

    def authorised(self, request: _Request) -> bool:
        """Whether the request carries the session token (in any header or query a CLI uses)."""
        offered = [value for name, value in request.headers if name in _CREDENTIALS]
        offered += [value for name, value in _query(request.target) if name == "key"]
        for value in offered:
            value = value.removeprefix("Bearer ").strip()
            if hmac.compare_digest(value.encode(), self.token.encode()):
                return True
        return False

    # --- a connection -------------------------------------------------------------------------

    async def _serve(self, stream: SocketStream) -> None:
        connection = h11.Connection(h11.SERVER)
        async with stream:
            try:
                while True:
                    request = await self._request(connection, stream)
                    if request is None:
                        return
                    await self._exchange(connection, stream, request)
                    if connection.our_state is not h11.DONE or connection.their_state is not h11.DONE:
                        return
                    connection.start_next_cycle()
            except (_AgentGone, h11.ProtocolError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                return
            except Exception as error:  # whatever an agent sends, the gateway (and its run) goes on
                structlog.get_logger().warning("model gateway: a connection failed", detail=repr(error))

    async def _request(self, connection: h11.Connection, stream: SocketStream) -> _Request | None:
        """The next request on the connection (None: the agent closed it between requests)."""
        head: h11.Request | None = None
        body = bytearray()
        while True:
            event = connection.next_event()
            if event is h11.NEED_DATA:
                connection.receive_data(await _receive(stream))
            elif isinstance(event, h11.Request):
                head = event
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > MAX_REQUEST:
                    await self._answer(
                        connection, stream, 413, "the request is larger than the gateway takes"
                    )
                    return None
            elif isinstance(event, h11.EndOfMessage) and head is not None:
                headers = [(n.decode("latin-1").lower(), v.decode("latin-1")) for n, v in head.headers]
                return _Request(head.method.decode(), head.target.decode("latin-1"), headers, bytes(body))
            elif isinstance(event, h11.ConnectionClosed):
                return None

    async def _answer(
        self,
        connection: h11.Connection,
        stream: SocketStream,
        status: int,
        message: str,
        body: dict[str, object] | None = None,
    ) -> None:
        """A short JSON error: ``body``, or the shape every provider's clients read (``error.message``)."""
        body = body if body is not None else {"error": {"type": "gateway", "message": message}}
        payload = httpx.Response(status, json=body).content
        headers = [("content-type", "application/json"), ("content-length", str(len(payload)))]
        await stream.send(connection.send(h11.Response(status_code=status, headers=headers)))
        await stream.send(connection.send(h11.Data(data=payload)))
        await stream.send(connection.send(h11.EndOfMessage()))

    # --- a request ----------------------------------------------------------------------------

    async def _exchange(self, connection: h11.Connection, stream: SocketStream, request: _Request) -> None:
        self._numbers += 1
        call = _Call(self._numbers, anyio.current_time(), request.target.split("?", 1)[0])
        call.figures.model = _requested_model(request.body, call.path)
        routed = provider_for(call.path)
        if not self.authorised(request):
            call.status, call.outcome = 401, "refused"
            self._report(call)
            await self._answer(connection, stream, 401, "no valid changeup session token")
            return
        if routed is None:
            call.status, call.outcome = 404, "refused"
            self._report(call)
            routes = ", ".join(p.prefix for p in PROVIDERS)
            await self._answer(connection, stream, 404, f"no route {call.path}: the gateway serves {routes}")
            return
        provider, rest = routed
        call.provider = provider.name
        if self.recorder is not None:
            self.recorder.request(call.number, request.method, request.target, request.headers, request.body)
        replayed = (
            self.tape.answer(call.number, request.method, request.target, request.body, self.token)
            if self.tape
            else None
        )
        if replayed is not None:  # from the tape (None: no tape, or the session forked: upstream)
            try:
                await self._replay(connection, stream, provider, replayed, call)
            finally:
                self._report(call)
            if call.outcome == "cancelled":
                raise _AgentGone
            return
        try:
            outgoing = self._outgoing(provider, rest, request)
        except (httpx.InvalidURL, ValueError) as error:
            call.status, call.outcome, call.detail = 400, "refused", f"cannot forward {call.path}: {error}"
            self._report(call)
            await self._answer(connection, stream, 400, call.detail)
            return
        keyless = self.upstreams.missing_key(provider)
        if keyless is not None:  # the provider would only answer 401, saying less
            call.status, call.outcome, call.detail = 401, "refused", keyless
            self._report(call)
            await self._answer(connection, stream, 401, f"changeup: {keyless}")
            return
        refusal = self.budget.admit() if self.budget is not None else None
        if refusal is not None:
            status, body = quota_refusal(provider.name, f"changeup: {refusal}")
            call.status, call.outcome, call.detail = status, "refused", f"budget: {refusal}"
            self._report(call)
            if self.on_exhausted is not None:
                self.on_exhausted(refusal)
            await self._answer(connection, stream, status, refusal, body)
            return
        try:
            async with anyio.create_task_group() as watch:
                watch.start_soon(_watch, stream, connection, watch.cancel_scope)
                await self._forward(connection, stream, provider, outgoing, call)
                watch.cancel_scope.cancel()
        finally:
            self._report(call)
            if self.budget is not None:
                used = (call.figures.input or 0) + (call.figures.output or 0)
                self.budget.settle(used, self._cost(call.figures))
        if call.outcome != "answered":
            raise _AgentGone  # the connection's framing is spent: it closes

    async def _forward(
        self,
        connection: h11.Connection,
        stream: SocketStream,
        provider: Provider,
        outgoing: httpx.Request,
        call: _Call,
    ) -> None:
        """Send ``outgoing`` upstream and its answer back to the agent as it comes."""
        assert self._client is not None
        try:
            response = await self._client.send(outgoing, stream=True)
        except httpx.HTTPError as error:
            call.status, call.outcome = 502, "failed"
            call.detail = f"cannot reach {provider.name} at {self.upstreams.root(provider)}: {error!r}"
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await self._answer(connection, stream, 502, call.detail)
            return
        reader = UsageReader(provider.name, response.headers.get("content-type", ""), call.figures.model)
        call.status, call.streamed = response.status_code, reader.streamed
        delivered = False  # the answer's last event reached the agent
        if self.recorder is not None:
            self.recorder.response(call.number, call.status, list(response.headers.items()))
        try:
            headers = [(n, v) for n, v in response.headers.items() if n.lower() not in _HOP]
            await stream.send(connection.send(h11.Response(status_code=call.status, headers=headers)))
            # Closed, even left mid-way: httpx's iterators are async generators.
            async with contextlib.aclosing(
                cast(AsyncGenerator[bytes, None], response.aiter_bytes())
            ) as chunks:
                async for chunk in chunks:
                    reader.feed(chunk)
                    if self.recorder is not None:
                        self.recorder.chunk(call.number, chunk)
                    await stream.send(connection.send(h11.Data(data=chunk)))
                    delivered = reader.complete
            await stream.send(connection.send(h11.EndOfMessage()))
            call.outcome = "answered"
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            call.outcome = "cancelled"  # the agent went away mid-answer
        except httpx.HTTPError as error:
            call.outcome, call.detail = "failed", f"the answer broke off: {error!r}"
        finally:
            call.figures = reader.finish()
            if call.outcome == "cancelled" and delivered:
                # The agent had the whole answer and closed before the provider closed the stream
                # (Codex does): nothing it asked for was lost.
                call.outcome = "answered"
            with anyio.CancelScope(shield=True):
                await response.aclose()

    async def _replay(
        self,
        connection: h11.Connection,
        stream: SocketStream,
        provider: Provider,
        found: Recorded | Divergence,
        call: _Call,
    ) -> None:
        """Answer from the tape: the recorded answer if the request matched, else a refusal."""
        if isinstance(found, Divergence):
            call.status, call.outcome, call.detail = 400, "refused", f"replay diverged: {found.reason}"
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await self._answer(connection, stream, 400, call.detail)
            return
        kind = next((v for n, v in found.headers if n.lower() == "content-type"), "")
        reader = UsageReader(provider.name, kind, call.figures.model)
        call.status, call.streamed = found.status, reader.streamed
        if self.recorder is not None:
            self.recorder.response(call.number, call.status, found.headers)
        try:
            headers = [(n, v) for n, v in found.headers if n.lower() not in _HOP]
            await stream.send(connection.send(h11.Response(status_code=call.status, headers=headers)))
            for chunk in found.chunks():
                reader.feed(chunk)
                if self.recorder is not None:
                    self.recorder.chunk(call.number, chunk)
                await stream.send(connection.send(h11.Data(data=chunk)))
            await stream.send(connection.send(h11.EndOfMessage()))
            call.outcome = "answered"
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            call.outcome = "cancelled"
        finally:
            call.figures = reader.finish()

    def _outgoing(self, provider: Provider, rest: str, request: _Request) -> httpx.Request:
        """The request as it goes upstream: the agent's credentials off, the real key on."""
        query = [(n, v) for n, v in _query(request.target) if n != "key"]
        url = self.upstreams.root(provider) + rest + (f"?{urlencode(query)}" if query else "")
        headers = [(n, v) for n, v in request.headers if n not in _HOP and n not in _CREDENTIALS]
        key = self.upstreams.keys.get(provider.name)
        headers += list(provider.key_headers(key).items()) if key else []
        headers.append(("accept-encoding", "identity"))  # its usage is read as it passes
        return httpx.Request(request.method, url, headers=headers, content=request.body)

    def _cost(self, figures: Figures) -> float | None:
        """What ``figures`` cost at the table's price (None: no price for its model)."""
        price = self.prices.price(figures.model) if figures.model else None
        return price.cost(figures) if price is not None else None

    def _report(self, call: _Call) -> None:
        figures = call.figures
        price = self.prices.price(figures.model) if figures.model else None
        self.on_request(
            ModelRequest(
                number=call.number,
                provider=call.provider,
                model=figures.model,
                path=call.path,
                status=call.status,
                streamed=call.streamed,
                outcome=call.outcome,
                seconds=round(anyio.current_time() - call.started, 3),
                input_tokens=figures.input,
                cache_read_tokens=figures.cache_read,
                cache_write_tokens=figures.cache_write,
                output_tokens=figures.output,
                reasoning_tokens=figures.reasoning,
                cost_usd=price.cost(figures) if price is not None else None,
                priced=price is not None,
                detail=call.detail,
            )
        )


@dataclass(slots=True)
class _Call:
    """What is known of one request as it goes."""

    number: int
    started: float
    path: str
    provider: str = ""
    status: int = 0
    streamed: bool = False
    outcome: Literal["answered", "cancelled", "refused", "failed"] = "cancelled"
    detail: str = ""
    figures: Figures = field(default_factory=Figures)


async def _receive(stream: SocketStream) -> bytes:
    """The next bytes from the agent; b"" once it has closed its side."""
    try:
        return await stream.receive(_READ)
    except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
        return b""


async def _watch(stream: SocketStream, connection: h11.Connection, scope: anyio.CancelScope) -> None:
    """While a request is under way: if the agent's side closes, cancel it (and so its upstream).
    Bytes that come meanwhile (a pipelined request) are kept for the connection's next cycle."""
    while True:
        data = await _receive(stream)
        if not data:
            scope.cancel()
            return
        connection.receive_data(data)


def _query(target: str) -> list[tuple[str, str]]:
    return parse_qsl(target.split("?", 1)[1], keep_blank_values=True) if "?" in target else []


def _requested_model(body: bytes, path: str) -> str:
    """The model a request names: Gemini's path (``models/M:…``), or its JSON body's ``model``."""
    if "/models/" in path:
        return path.split("/models/", 1)[1].split(":", 1)[0]
    try:
        data = json.loads(body) if body.lstrip().startswith(b"{") else None
    except ValueError:
        return ""
    model = data.get("model") if isinstance(data, dict) else None
    return model if isinstance(model, str) else ""

"""The gateway's recorded traffic: every exchange kept in the run folder, and read back to replay it.

A :class:`Recorder` writes each request the gateway serves, and its answer as it streams by,
under the run folder's ``model/``:

- ``NNNN.request.json``: ``method``, ``target`` (the path and query the agent called),
  ``headers`` and ``body`` (text; ``body_base64`` when it is not UTF-8);
- ``NNNN.response.json``: the answer's ``status`` and ``headers``;
- ``NNNN.response``: the answer's body, byte for byte as the upstream sent it (server-sent
  events included).

A recording holds at most :data:`RECORDING_BYTES` of bodies: the exchange that passes the limit
and every later one are not kept, and ``stopped.json`` says from which request on (a replay
serves what was kept, then diverges). ``NNNN`` is the request's number, as in its
``model.request`` record. Nothing secret is written:
the credential headers and a ``key`` query are replaced by ``[redacted]``, and so is every
occurrence of a real key or of the session token anywhere in what is written.

A :class:`Tape` reads a run's recording and answers the requests of a new session in order
(``changeup run --replay-model RUN``). A request *matches* the recorded one when its method,
its path (provider prefix included), its query (``key`` left out: ``alt=sse`` says whether an
answer streams) and its normalised body are the same (:func:`normalised`: the JSON body with
keys sorted, the volatile fields of :data:`VOLATILE` left out, the session token, the run
folders' paths, durations and client-minted identifiers replaced by placeholders); the model is
part of the path (Gemini) or of the body. Anything else is a :class:`Divergence`, and from the
first one on the tape serves nothing more: an answer recorded for another request is never
served. An answer served to a new session names that session's run folder wherever it named
the recorded run's (a CLI's tool call carries absolute paths of its workspace).

A tape told a fork's wording (``--fork-at TRIGGER --message FILE``) serves the recording up to
the fork: the first request that does not match *and* carries that wording (the reworded
message, in any string of its JSON body) is where the session forks; it and every request after
it go to the upstream (:meth:`Tape.answer` answers None). A request that does not match and
does not carry it is a divergence, as in a plain replay.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

__all__ = [
    "FOLDER",
    "RECORDING_BYTES",
    "REDACTED",
    "VOLATILE",
    "Divergence",
    "Recorded",
    "Recorder",
    "RecordingError",
    "Tape",
    "normalised",
    "read_exchanges",
]

#: The run folder's sub-folder holding the recording.
FOLDER = "model"
REDACTED = "[redacted]"
#: The most a run's recording holds (request and answer bodies): a runaway agent's traffic
#: cannot fill the disk through it.
RECORDING_BYTES = 2 << 30
#: Written when the recording stops at its limit: ``{"from": NNNN, "limit": bytes}``.
STOPPED = "stopped.json"
#: Where an agent's CLI puts its key (as the proxy's): their values are never written.
CREDENTIAL_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key"})
#: Body fields that differ between two runs of the same conversation, left out of a match:
#: per-session identifiers (Anthropic's ``metadata.user_id``, OpenAI's ``user`` and
#: ``prompt_cache_key``, Codex's ``client_metadata``, Responses' ``previous_response_id``).
VOLATILE = frozenset({"metadata", "user", "prompt_cache_key", "client_metadata", "previous_response_id"})
#: A run folder's path (``…/<challenge>-<YYYYmmdd-HHMMSS>-<suffix>``), as it shows in prompts.
_RUN_PATH = re.compile(r"/[^\s\"']*/[A-Za-z0-9_.-]+-\d{8}-\d{6}[A-Za-z0-9_-]*")
#: A duration as tools print it (``1 passed in 0.01s``, ``took 350ms``): it differs run to run.
_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|secs|seconds)\b")
#: Identifiers a client makes up as it goes: UUIDs, epoch-millisecond stamps (Gemini CLI names
#: its tool calls ``read_file_1796356424228_0``), Codex's ``Chunk ID: a9bf6d`` of a command's output.
_MINTED = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|(?<!\d)1\d{12}(?!\d)|(?<=Chunk ID: )[0-9a-fA-F]+"
)
_CHUNK = 64 * 1024


class RecordingError(Exception):
    """A run's recording cannot be read (absent, or not what a recorder writes)."""


class Recorder:
    """Writes one session's exchanges under ``folder`` (created), redacting ``secrets`` and ``token``."""

    def __init__(
        self, folder: Path, secrets: Sequence[str], token: str, limit: int = RECORDING_BYTES
    ) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self._secrets = [s.encode() for s in (*secrets, token) if s]
        self.limit = limit
        self.written = 0
        self.stopped: int | None = None  # the first request not kept (the limit was reached)

    def _room(self, number: int, size: int) -> bool:
        """Whether ``size`` more bytes of request ``number`` fit; if not, the recording stops
        here: that exchange's answer is dropped (it would be cut short) and nothing more kept."""
        if self.stopped is not None:
            return False
        self.written += size
        if self.written <= self.limit:
            return True
        self.stopped = number
        for suffix in (".response.json", ".response"):
            (self.folder / f"{number:04d}{suffix}").unlink(missing_ok=True)
        (self.folder / STOPPED).write_text(json.dumps({"from": number, "limit": self.limit}))
        return False

    def _clean(self, data: bytes) -> bytes:
        for secret in self._secrets:
            data = data.replace(secret, REDACTED.encode())
        return data

    def _write_json(self, path: Path, value: dict[str, Any]) -> None:
        path.write_bytes(self._clean(json.dumps(value, indent=1).encode()))

    def request(
        self, number: int, method: str, target: str, headers: Sequence[tuple[str, str]], body: bytes
    ) -> None:
        """Keep the request ``number`` as the agent sent it (credentials redacted)."""
        if not self._room(number, len(body)):
            return
        kept = [(n, REDACTED if n.lower() in CREDENTIAL_HEADERS else v) for n, v in headers]
        path, _, query = target.partition("?")
        if query:
            pairs = [(n, REDACTED if n == "key" else v) for n, v in parse_qsl(query, keep_blank_values=True)]
            path = f"{path}?{urlencode(pairs)}"
        record: dict[str, Any] = {"number": number, "method": method, "target": path, "headers": kept}
        try:
            record["body"] = self._clean(body).decode()
        except UnicodeDecodeError:
            record["body_base64"] = base64.b64encode(self._clean(body)).decode()
        self._write_json(self.folder / f"{number:04d}.request.json", record)
        (self.folder / f"{number:04d}.response").write_bytes(b"")

    def response(self, number: int, status: int, headers: Sequence[tuple[str, str]]) -> None:
        """Keep the head of the answer to request ``number``."""
        if self.stopped is not None:
            return
        record = {"number": number, "status": status, "headers": [list(pair) for pair in headers]}
        self._write_json(self.folder / f"{number:04d}.response.json", record)

    def chunk(self, number: int, data: bytes) -> None:
        """Append a piece of the answer's body, as it passes. A secret split across two pieces
        is not caught here: no upstream sends one, and the agent never holds the real key."""
        if not self._room(number, len(data)):
            return
        with (self.folder / f"{number:04d}.response").open("ab") as out:
            out.write(self._clean(data))


@dataclass(frozen=True, slots=True)
class Recorded:
    """One recorded exchange: the request as kept, and where its answer is."""

    number: int
    method: str
    target: str
    body: bytes
    status: int
    headers: tuple[tuple[str, str], ...]
    answer: Path
    #: what the answer is served with in place of what (the recorded run's folder: the new one's)
    moved: tuple[tuple[bytes, bytes], ...] = ()

    @property
    def path(self) -> str:
        """The gateway path called (no query)."""
        return self.target.split("?", 1)[0]

    def chunks(self) -> Iterator[bytes]:
        """The recorded answer's body, piece by piece (read whole when something in it moved:
        a path is not cut between two pieces)."""
        if self.moved:
            data = self.answer.read_bytes()
            for old, new in self.moved:
                data = data.replace(old, new)
            for start in range(0, len(data), _CHUNK):
                yield data[start : start + _CHUNK]
            return
        with self.answer.open("rb") as source:
            while data := source.read(_CHUNK):
                yield data


@dataclass(frozen=True, slots=True)
class Divergence:
    """The request the agent made now is not the one recorded at this place (or none is left)."""

    number: int  # the live request's number
    recorded: int | None  # the recorded request it was held against (None: the tape had ended)
    reason: str


def read_exchanges(folder: Path) -> list[Recorded]:
    """Every exchange recorded under ``folder`` that has an answer, in order; raises
    :class:`RecordingError` when ``folder`` holds no recording or a file is not one."""
    if not folder.is_dir():
        raise RecordingError(f"{folder}: no recorded model traffic (a run with the model gateway has one)")
    exchanges: list[Recorded] = []
    stopped = _stopped(folder)
    for request_file in sorted(folder.glob("*.request.json")):
        stem = request_file.name.removesuffix(".request.json")
        head_file = folder / f"{stem}.response.json"
        if stopped is not None and stem.isdigit() and int(stem) >= stopped:
            break  # past the limit: not kept whole
        if not head_file.is_file():
            continue  # refused before an answer, or cut off: nothing to serve
        try:
            request, head = json.loads(request_file.read_text()), json.loads(head_file.read_text())
            body = (
                base64.b64decode(request["body_base64"])
                if "body_base64" in request
                else request["body"].encode()
            )
            exchanges.append(
                Recorded(
                    int(request["number"]),
                    str(request["method"]),
                    str(request["target"]),
                    body,
                    int(head["status"]),
                    tuple((str(n), str(v)) for n, v in head["headers"]),
                    folder / f"{stem}.response",
                )
            )
        except (ValueError, KeyError, TypeError) as error:
            raise RecordingError(f"{request_file}: not a recorded exchange ({error!r})") from None
    return exchanges


def _stopped(folder: Path) -> int | None:
    """The request a recording stopped at (None: it holds everything)."""
    try:
        return int(json.loads((folder / STOPPED).read_text())["from"])
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError) as error:
        raise RecordingError(f"{folder / STOPPED}: not what a recorder writes ({error!r})") from None


def normalised(body: bytes, token: str = "") -> Any:
    """What of a request body a match compares: its JSON with keys sorted and :data:`VOLATILE`
    fields left out (at any depth), ``token``, run-folder paths, durations (a tool's output
    saying how long it took) and identifiers a client mints (UUIDs, epoch-millisecond stamps)
    replaced; not JSON, its text."""
    text = body.decode(errors="replace")
    if token:
        text = text.replace(token, REDACTED)
    text = _MINTED.sub("<id>", _DURATION.sub("<duration>", _RUN_PATH.sub("<run>", text)))
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return _without_volatile(value)


def _without_volatile(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_volatile(v) for k, v in sorted(value.items()) if k not in VOLATILE}
    if isinstance(value, list):
        return [_without_volatile(item) for item in value]
    return value


class Tape:
    """A recorded run's exchanges, served in order to a new session's requests."""

    def __init__(
        self,
        run: Path,
        on_divergence: Callable[[Divergence], None] | None = None,
        *,
        fork: str = "",
        on_fork: Callable[[int], None] | None = None,
        here: Path | None = None,
    ) -> None:
        self.run = run
        # An answer names the recorded run's files (a tool call's absolute path): served to the
        # session at ``here``, it names the same files of its own run folder.
        self.moved = ((str(run.resolve()).encode(), str(here.resolve()).encode()),) if here else ()
        self.exchanges = read_exchanges(run / FOLDER)
        self.stopped = _stopped(run / FOLDER)
        self.on_divergence = on_divergence
        self.fork = fork.strip()
        self.on_fork = on_fork
        self._next = 0
        self.diverged: Divergence | None = None
        self.forked: int | None = None  # the request the session forked at

    def answer(
        self, number: int, method: str, target: str, body: bytes, token: str
    ) -> Recorded | Divergence | None:
        """The recorded exchange for this request, or why there is none (from then on, always
        one); None once the session has forked: the request goes to the upstream."""
        if self.forked is not None:
            return None
        if self.diverged is not None:
            reason = f"the session diverged at request {self.diverged.number}: nothing more is served"
            later = Divergence(number, None, reason)
            if self.on_divergence is not None:
                self.on_divergence(later)
            return later
        if self._next >= len(self.exchanges):
            found: Recorded | Divergence = Divergence(
                number,
                None,
                f"the recording of {self.run.name} holds {len(self.exchanges)} requests, all served"
                + (f" (it stopped at request {self.stopped}, at its size limit)" if self.stopped else ""),
            )
        else:
            found = self._held(number, self.exchanges[self._next], method, target, body, token)
            found = dataclasses.replace(found, moved=self.moved) if isinstance(found, Recorded) else found
        if isinstance(found, Divergence) and self.fork and _carries(body, self.fork):
            self.forked = number
            if self.on_fork is not None:
                self.on_fork(number)
            return None
        if isinstance(found, Divergence):
            self.diverged = found
            if self.on_divergence is not None:
                self.on_divergence(found)
        else:
            self._next += 1
        return found

    @staticmethod
    def _held(
        number: int, recorded: Recorded, method: str, target: str, body: bytes, token: str
    ) -> Recorded | Divergence:
        path = target.split("?", 1)[0]
        if (method, path) != (recorded.method, recorded.path):
            reason = f"{method} {path}, where the recording has {recorded.method} {recorded.path}"
            return Divergence(number, recorded.number, reason)
        if _query(target) != _query(recorded.target):
            reason = f"{path}: the query {_query(target)} differs from the recorded {_query(recorded.target)}"
            return Divergence(number, recorded.number, reason)
        now, then = normalised(body, token), normalised(recorded.body)
        if now != then:
            return Divergence(
                number, recorded.number, f"{path}: the body differs ({_first_difference(now, then)})"
            )
        return recorded


def _query(target: str) -> list[tuple[str, str]]:
    """A target's query, sorted, its ``key`` (a credential) left out."""
    query = target.split("?", 1)[1] if "?" in target else ""
    return sorted((n, v) for n, v in parse_qsl(query, keep_blank_values=True) if n != "key")


def _carries(body: bytes, text: str) -> bool:
    """Whether ``text`` is in a string of the JSON ``body`` (or in its text, not JSON)."""
    try:
        value = json.loads(body)
    except ValueError:
        return text in body.decode(errors="replace")
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str) and text in item:
            return True
        if isinstance(item, dict):
            stack += item.values()
        elif isinstance(item, list):
            stack += item
    return False


def _first_difference(now: Any, then: Any, where: str = "") -> str:
    """Where two normalised bodies first differ, for people (``messages[2].content``)."""
    if isinstance(now, dict) and isinstance(then, dict):
        for key in sorted(set(now) | set(then)):
            if now.get(key) != then.get(key):
                return _first_difference(now.get(key), then.get(key), f"{where}.{key}" if where else key)
    if isinstance(now, list) and isinstance(then, list):
        for index, (a, b) in enumerate(zip(now, then, strict=False)):
            if a != b:
                return _first_difference(a, b, f"{where}[{index}]")
        if len(now) != len(then):
            return f"{where or 'the body'}: {len(now)} items, recorded {len(then)}"
    if isinstance(now, str) and isinstance(then, str):
        at = next(
            (i for i, (a, b) in enumerate(zip(now, then, strict=False)) if a != b), min(len(now), len(then))
        )
        start = max(0, at - 30)
        place = f"{where or 'the body'} at character {at}"
        return f"{place}: {now[start : at + 50]!r}, recorded {then[start : at + 50]!r}"
    shown = json.dumps(now)[:80]
    return f"{where or 'the body'} is {shown}, recorded {json.dumps(then)[:80]}"

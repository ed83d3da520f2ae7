"""The probe: notes the prohibited effects a hidden test run attempts (a script, stdlib only).

``bootstrap.run`` loads this file in the test process, before the workspace is importable, when
its settings hold ``effects`` (``orchestrator.grading.effects.probe_settings``), and calls
:func:`watch`. That adds an audit hook (:pep:`578`; hooks cannot be removed): CPython raises an
audit event *before* it opens a file, connects a socket or removes a path, so an attempt is
noted whether the sandbox then lets it happen or not. Each distinct effect is one JSON line of
``effects.jsonl``, after a first ``{"watching": [...]}`` line that says the probe is on::

    {"effect": "network", "detail": "connect to 93.184.216.34:80", "test": "<id> (call)"}

``test`` is what pytest says it is running (``PYTEST_CURRENT_TEST``). The hook never raises:
whatever goes wrong inside it, the run goes on as it would without it.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import socket
import sys
import tempfile
from collections.abc import Callable
from typing import Any

#: Audit events that write, and which of their arguments are the paths written (with the index
#: of the ``dir_fd`` a relative path is relative to, or None).
_WRITES: dict[str, tuple[str, tuple[tuple[int, int | None], ...]]] = {
    "os.remove": ("remove", ((0, 1),)),
    "os.rmdir": ("remove folder", ((0, 1),)),
    "os.mkdir": ("make folder", ((0, 2),)),
    "os.rename": ("rename", ((1, 3), (0, 2))),
    "os.symlink": ("link at", ((1, 2),)),
    "os.link": ("link at", ((1, 3),)),
    "os.truncate": ("truncate", ((0, None),)),
    "os.chmod": ("change the mode of", ((0, 2),)),
    "os.chown": ("change the owner of", ((0, 3),)),
}
_NETWORK = ("socket.connect", "socket.sendto", "socket.bind")
_LOOKUPS = ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_INTERNET = (socket.AF_INET, socket.AF_INET6)
_LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")


def watch(config: dict[str, Any]) -> None:
    """Start noting the effects ``config["watch"]`` names into ``config["file"]``."""
    tempfile.gettempdir()  # found now: its first call writes a probe file of its own
    out = open(config["file"], "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - open for the run
    out.write(json.dumps({"watching": list(config["watch"])}) + "\n")
    inside = tuple(_root(path) for path in config["allowed"])
    temporary, own = os.path.realpath(config["temporary"]), {os.path.realpath(p) for p in config["own"]}
    seen: set[tuple[str, str, str]] = set()
    most = int(config["most"])

    def note(effect: str, detail: str) -> None:
        test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
        key = (effect, detail, test)
        if key in seen or len(seen) >= most:
            return
        seen.add(key)
        out.write(json.dumps({"effect": effect, "detail": detail, "test": test}) + "\n")

    def outside(path: object, dir_fd: object = None) -> str | None:
        """The path written, absolute, if it is outside every place the run may write; else None."""
        if isinstance(path, bytes | os.PathLike):
            path = os.fsdecode(path)
        if not isinstance(path, str):
            return None  # a file descriptor: opened (and checked) before
        if not os.path.isabs(path) and isinstance(dir_fd, int) and dir_fd >= 0:
            path = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), path)
        full = os.path.realpath(path)  # as the roots are: a link out of the workspace writes outside it
        if (full + os.sep).startswith(inside) or full in own or full == temporary:  # ==: an O_TMPFILE
            return None
        if full.startswith(temporary + os.sep):
            first = full[len(temporary) + 1 :].split(os.sep, 1)[0]
            if first.startswith("tmp"):
                return None
        return full

    handlers: dict[str, Callable[[tuple[Any, ...]], None]] = {}
    if "writes-outside-workspace" in config["watch"]:

        def opened(args: tuple[Any, ...]) -> None:
            if isinstance(args[2], int) and args[2] & _WRITE_FLAGS and (where := outside(args[0])):
                note("writes-outside-workspace", f"open {where} for writing")

        def database(args: tuple[Any, ...]) -> None:  # sqlite opens its file in C, unseen by "open"
            name = _database_file(args[0])
            if name and (where := outside(name)):
                note("writes-outside-workspace", f"open the database {where}")

        handlers["open"] = opened
        handlers["sqlite3.connect"] = database
        for event, (verb, places) in _WRITES.items():
            handlers[event] = _writer(verb, places, outside, note)
    if "network" in config["watch"]:
        for event in _NETWORK:
            handlers[event] = _connector(event.split(".", 1)[1], note)
        for event in _LOOKUPS:
            handlers[event] = _lookup(note)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        handler = handlers.get(event)
        if handler is None:
            return
        with contextlib.suppress(Exception):  # an observer must never change the run it observes
            handler(args)

    sys.addaudithook(hook)


def _database_file(name: object) -> str:
    """The file a ``sqlite3.connect`` opens (``""``: none, an in-memory database)."""
    text = os.fsdecode(name) if isinstance(name, str | bytes | os.PathLike) else ""
    if text.startswith("file:"):  # a URI: file:PATH?mode=...
        text, _, query = text[5:].partition("?")
        text = text[2:] if text.startswith("//") else text
        if "mode=memory" in query:
            return ""
    return "" if text in ("", ":memory:") else text


def _root(path: str) -> str:
    """A folder as a prefix of the paths inside it (and of itself, with the separator)."""
    return os.path.join(os.path.realpath(path), "")


def _writer(
    verb: str,
    places: tuple[tuple[int, int | None], ...],
    outside: Callable[[object, object], str | None],
    note: Callable[[str, str], None],
) -> Callable[[tuple[Any, ...]], None]:
    def handle(args: tuple[Any, ...]) -> None:
        for index, dir_fd in places:
            where = outside(args[index], args[dir_fd] if dir_fd is not None else None)
            if where:
                note("writes-outside-workspace", f"{verb} {where}")
                return

    return handle


def _connector(what: str, note: Callable[[str, str], None]) -> Callable[[tuple[Any, ...]], None]:
    said = {"connect": "connect to", "sendto": "send a datagram to", "bind": "listen on"}[what]

    def handle(args: tuple[Any, ...]) -> None:
        sock, address = args[0], args[1]
        if getattr(sock, "family", None) not in _INTERNET or not isinstance(address, tuple):
            return
        host = str(address[0])
        if not _local(host, bind=what == "bind"):
            note("network", f"{said} {host or 'every address'}:{address[1]}")

    return handle


def _lookup(note: Callable[[str, str], None]) -> Callable[[tuple[Any, ...]], None]:
    def handle(args: tuple[Any, ...]) -> None:
        host = args[0]
        if isinstance(host, bytes):
            host = host.decode("idna", "replace")
        if isinstance(host, str) and host and not _local(host) and not _numeric(host):
            note("network", f"look up {host}")

    return handle


def _local(host: str, *, bind: bool = False) -> bool:
    """Loopback: a loopback address or the local host's name (for a bind, ``""`` is every address)."""
    if not host:
        return not bind
    name = host.lower().rstrip(".")
    if name in _LOCAL_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name.split("%", 1)[0]).is_loopback
    except ValueError:
        return False  # another name: it goes out to be resolved


def _numeric(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True

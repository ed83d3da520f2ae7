"""A loopback port relayed to one Unix socket: the only way out of a network namespace of its own.

:func:`forwarded` is the prefix of a command line that, run as the first process of a sandbox
with a network namespace of its own, listens on ``127.0.0.1:PORT`` there and relays each
connection to the Unix socket at ``SOCKET`` (a folder of the machine bound into the sandbox),
then runs the command. The relay is a daemon of its own (reparented to the sandbox's init, its
standard streams on ``/dev/null``); it ends with the sandbox (its PID namespace). It connects
only ever to that one socket, named when it starts: nothing the command sends or does makes it
connect anywhere else.

This file is the relay itself, run by an interpreter the sandbox shows with ``-I -S`` (no
environment variable, no ``site``: nothing of the command's can change it) and the file's own
text as ``-c``: it needs nothing but the standard library, and changeup's installation may stay
hidden from the sandbox.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
from collections.abc import Sequence
from pathlib import Path, PurePath

__all__ = ["forwarded"]

_CHUNK = 64 * 1024


def forwarded(python: str, unix: PurePath, port: int) -> list[str]:
    """The prefix that runs the command after it with ``127.0.0.1:port`` relayed to ``unix``
    (both as the sandbox sees them), by the interpreter ``python``."""
    source = Path(__file__).read_text()
    return [python, "-I", "-S", "-c", source, str(port), str(unix), "--"]


def _pump(source: socket.socket, target: socket.socket) -> None:
    """Copy ``source`` to ``target`` until it ends, then end ``target``'s sending side."""
    with contextlib.suppress(OSError):
        while data := source.recv(_CHUNK):
            target.sendall(data)
    with contextlib.suppress(OSError):
        target.shutdown(socket.SHUT_WR)


def _relay(client: socket.socket, unix: str) -> None:
    """One connection: to the Unix socket, both ways, until both sides end."""
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(unix)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _serve(listener: socket.socket, unix: str) -> None:
    """Accept and relay, forever."""
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            continue
        threading.Thread(target=_relay, args=(client, unix), daemon=True).start()


def _main(argv: Sequence[str]) -> None:
    """``PORT SOCKET -- COMMAND...``: listen, leave the relay behind as a daemon, run COMMAND."""
    port, unix, command = int(argv[0]), argv[1], list(argv[3:])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    child = os.fork()
    if child == 0:  # once more, so the relay is no child of the command's (it goes to init)
        if os.fork() != 0:
            os._exit(0)
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for stream in (0, 1, 2):
            os.dup2(null, stream)
        _serve(listener, unix)
    os.waitpid(child, 0)
    listener.close()
    os.execvp(command[0], command)


if __name__ == "__main__":
    _main(sys.argv[1:])

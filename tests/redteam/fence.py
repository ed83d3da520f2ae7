"""Listeners an agent with a model-only network must not reach, counting what reaches them.

:class:`Loopback`: one on 127.0.0.1 of the test's own namespace, on a port of its own.
:func:`second_namespace`: one in a second network namespace, joined to the test's by a veth
pair (so reachable from the machine, at ``10.231.N.2``). :func:`reachable` proves each one is
reachable from here before a session, so that a count of no new connection means something.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

__all__ = ["Loopback", "reachable", "second_namespace"]

#: A listener that writes one line to a file per connection it accepts.
COUNTER = """
import socket, sys
listener = socket.create_server((sys.argv[1], 0))
open(sys.argv[2] + ".port", "w").write(str(listener.getsockname()[1]))
while True:
    connection, _ = listener.accept()
    open(sys.argv[2], "a").write("connection\\n")
    connection.close()
"""


class Loopback:
    """A listener on 127.0.0.1 of this namespace that counts the connections it accepts."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.count = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.count += 1
            connection.close()


@contextlib.contextmanager
def second_namespace(folder: Path) -> Iterator[tuple[str, Callable[[], int]]]:
    """A second network namespace with a counting listener: its ``host:port``, and its count
    (skips, saying why, without iproute2 or root)."""
    if shutil.which("ip") is None or os.geteuid() != 0:
        pytest.skip("LOUD SKIP: a second network namespace needs iproute2 (ip) and root; CI has both")
    n, pid = os.getpid() % 250, os.getpid()
    name, outer, inner = f"changeup-t{pid}", f"cuo{pid}"[:15], f"cui{pid}"[:15]
    address = f"10.231.{n}.2"

    def ip(*args: str) -> None:
        subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)

    ip("netns", "add", name)
    counter: subprocess.Popen[bytes] | None = None
    count = folder / "second-namespace.count"
    try:
        ip("link", "add", outer, "type", "veth", "peer", "name", inner)
        ip("link", "set", inner, "netns", name)
        ip("addr", "add", f"10.231.{n}.1/24", "dev", outer)
        ip("link", "set", outer, "up")
        ip("-n", name, "addr", "add", f"{address}/24", "dev", inner)
        ip("-n", name, "link", "set", inner, "up")
        ip("-n", name, "link", "set", "lo", "up")
        command = ["ip", "netns", "exec", name, sys.executable, "-c", COUNTER, address, str(count)]
        counter = subprocess.Popen(command)
        port = count.with_suffix(".count.port")
        for _ in range(600):
            if port.is_file() and port.read_text():
                break
            threading.Event().wait(0.1)
        yield f"{address}:{port.read_text()}", lambda: _lines(count)
    finally:
        if counter is not None:
            counter.kill()
            counter.wait()
        subprocess.run(["ip", "link", "del", outer], capture_output=True, timeout=30, check=False)
        subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=30, check=False)


def reachable(addresses: list[str], counts: Callable[[], tuple[int, ...]]) -> None:
    """Connect once to each of ``addresses`` from here; wait until ``counts`` is one for each."""
    for address in addresses:
        host, port = address.rsplit(":", 1)
        socket.create_connection((host, int(port)), timeout=30).close()
    for _ in range(600):
        if counts() == (1,) * len(addresses):
            break
        threading.Event().wait(0.1)
    assert counts() == (1,) * len(addresses)


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.is_file() else 0

"""The workspace host's end of the socket when the test process leaves first.

A pytest process that stops early (a broken conftest, exit 4) closes its socket while the
host may still be answering its hello: the host must take that as the end of the run and
return quietly, never print a ConnectionResetError trace into the run's output, where it hid
the real reason the run was invalid.
"""

from __future__ import annotations

import socket
import threading

from orchestrator.grading import crossing
from orchestrator.grading.host import Host


def _serve_in_thread(sock: socket.socket) -> tuple[threading.Thread, list[BaseException]]:
    raised: list[BaseException] = []

    def run() -> None:
        try:
            Host(sock, "/nonexistent-workspace").serve()
        except BaseException as error:  # what the host would print as a trace
            raised.append(error)
        finally:
            sock.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, raised


def test_a_test_process_that_leaves_with_answers_unread_ends_the_host_quietly() -> None:
    """Requests sent, the socket closed unread (the peer's recv then gets ECONNRESET or its
    send EPIPE): serve returns, raising nothing."""
    tests, host = socket.socketpair()
    thread, raised = _serve_in_thread(host)
    for ident in range(1, 50):
        tests.sendall(crossing.frame({"id": ident, "op": "hello"}))
    tests.close()
    thread.join(10)
    assert not thread.is_alive()
    assert raised == []


def test_a_test_process_that_closes_cleanly_ends_the_host_quietly() -> None:
    """The ordinary end: hello answered, the socket closed, serve returns."""
    tests, host = socket.socketpair()
    thread, raised = _serve_in_thread(host)
    tests.sendall(crossing.frame({"id": 1, "op": "hello"}))
    frames = crossing.Frames()
    while (body := frames.next()) is None:
        frames.feed(tests.recv(65536))
    assert crossing.parse(body).re == 1
    tests.close()
    thread.join(10)
    assert not thread.is_alive()
    assert raised == []

"""The fork server for real: children forked from it, what they say and how they end, and no process
of theirs left behind once one is killed or the server is closed."""

from __future__ import annotations

import os
import secrets
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import SocketStream

from orchestrator.system.forkserver import Forked, ForkServer
from orchestrator.system.hierarchies import support
from orchestrator.system.processes import reaped
from tests.cli import REPO, environment
from tests.scale.conftest import marked, wait_for

pytestmark = pytest.mark.slow

TARGET = "tests.orchestrator.forked:behave"


def start() -> ForkServer:
    """A server of :func:`tests.orchestrator.forked.behave`, as a new Python (the checkout on its
    import path)."""
    return ForkServer.start(TARGET, env=environment({"PYTHONPATH": str(REPO)}))


def here() -> ForkServer:
    """A server of :func:`tests.orchestrator.forked.behave`, as a fork of this process. A process
    with threads would not fork: a thread an earlier test file left finishing in this xdist worker
    is waited for (up to a minute), and one still there is named."""
    deadline = time.monotonic() + 60
    while threading.active_count() > 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert threading.active_count() == 1, f"this test process has threads: {threading.enumerate()}"
    return ForkServer.here(TARGET)


async def everything(stream: SocketStream) -> bytes:
    """All a child's stream says, to its end."""
    said = b""
    try:
        while True:
            said += await stream.receive()
    except (anyio.EndOfStream, anyio.BrokenResourceError):
        return said


@pytest.mark.parametrize("made", [start, here], ids=["new Python", "fork of this process"])
def test_each_child_runs_the_function_on_its_request_and_says_how_it_ended(
    made: Callable[[], ForkServer],
) -> None:
    """Three children of one server, started either way: one says hello and exits 3, one raises
    (exit 1, its traceback on its standard error), one exits 0; each has a pid of its own."""
    server = made()

    async def main() -> list[tuple[int, int | None, bytes, bytes]]:
        requests: list[dict[str, Any]] = [{"say": "hello", "exit": 3}, {"raise": "no such thing"}, {}]
        children: list[Forked] = [await server.spawn(r) for r in requests]
        ended = []
        for child in children:
            out, err = await everything(child.stdout), await everything(child.stderr)
            ended.append((child.pid, await child.wait(), out, err))
            await child.aclose()
        return ended

    try:
        ended = anyio.run(main)
    finally:
        server.close()
    assert [(code, out) for _, code, out, _ in ended] == [(3, b"hello\n"), (1, b""), (0, b"")]
    assert b"RuntimeError: no such thing" in ended[1][3]
    assert ended[2][3] == b"done\n"
    assert len({pid for pid, *_ in ended}) == 3


def test_a_killed_child_ends_by_its_signal_and_what_it_left_running_is_killed(tmp_path: Path) -> None:
    """A child that left a process of its own session running is killed: it ended by SIGKILL, and
    the server, which adopts what it left, kills that process too. Closing the server ends a child
    still running, and the server."""
    marker = str(tmp_path / "left-behind")
    server = start()

    async def main() -> tuple[int | None, int, int | None]:
        child = await server.spawn({"leave": ["sh", "-c", "sleep 3600", marker], "sleep": 3600})
        wait_for("the process it leaves", lambda: marked(marker), bound=60)
        child.kill()
        code = await child.wait()
        await child.aclose()
        other = await server.spawn({"sleep": 3600, "say": "running"})
        await other.stdout.receive()
        await anyio.to_thread.run_sync(server.close)
        closed = await other.wait()  # the server said nothing more: it killed it and ended
        await other.aclose()
        return code, other.pid, closed

    try:
        code, other, closed = anyio.run(main)
    finally:
        server.close()
    assert code == -9
    wait_for("no process left behind", lambda: not marked(marker), bound=60)
    assert closed is None
    assert not Path(f"/proc/{other}").exists()


FREEZER = dict(support().bases).get("freezer") if support().version == 1 else None


@pytest.mark.skipif(
    FREEZER is None or os.geteuid() != 0,
    reason="LOUD SKIP: no writable cgroup v1 freezer hierarchy as root; CI is root with one",
)
def test_what_a_killed_child_left_frozen_is_thawed_to_die() -> None:
    """A child leaves a process that a v1 freezer holds (killed when its parent dies, as bubblewrap's
    --die-with-parent) and is killed: the server, which adopts the process, thaws its group so the
    SIGKILL lands, and nothing of it is left, frozen or not."""
    assert FREEZER is not None
    group = FREEZER / f"changeup-forktest-{os.getpid()}-{secrets.token_hex(3)}"
    group.mkdir()
    seconds = f"3600.{secrets.randbelow(10**9):09d}"  # its mark in the process table
    server = start()

    async def main() -> bytes:
        child = await server.spawn({"freeze": [str(group), seconds], "sleep": 3600})
        said = await child.stdout.receive()
        child.kill()
        await child.wait()
        await child.aclose()
        return said

    try:
        assert anyio.run(main) == b"frozen\n"
        wait_for("the frozen process gone", lambda: not marked(seconds), bound=60)
    finally:
        server.close()
        (group / "freezer.state").write_text("THAWED")  # were it left, it could not be killed
        for pid in marked(seconds):
            os.kill(pid, 9)
        wait_for("the group empty", lambda: not (group / "cgroup.procs").read_text().split(), bound=60)
        group.rmdir()


@pytest.mark.skipif(
    FREEZER is None or os.geteuid() != 0,
    reason="LOUD SKIP: no writable cgroup v1 freezer hierarchy as root; CI is root with one",
)
def test_the_reaper_thaws_a_frozen_process_below_it_to_kill_it() -> None:
    """A command under the reaper leaves a process in a v1 freezer group, frozen, and exits: the
    reaper, killing everything below it, thaws that group so the kill lands, and ends."""
    assert FREEZER is not None
    group = FREEZER / f"changeup-reapertest-{os.getpid()}-{secrets.token_hex(3)}"
    group.mkdir()
    seconds = f"3600.{secrets.randbelow(10**9):09d}"
    leave = (  # a sleeper in the group, frozen, and the command ends
        f'sh -c \'echo $$ > "$1/cgroup.procs"; exec sleep {seconds}\' _ "$1" & '
        'while [ -z "$(cat "$1/cgroup.procs")" ]; do sleep 0.01; done; echo FROZEN > "$1/freezer.state"'
    )
    try:
        done = subprocess.run(
            reaped(["sh", "-c", leave, "_", str(group)]), capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        wait_for("the frozen process gone", lambda: not marked(seconds), bound=60)
    finally:
        (group / "freezer.state").write_text("THAWED")
        for pid in marked(seconds):
            os.kill(pid, 9)
        wait_for("the group empty", lambda: not (group / "cgroup.procs").read_text().split(), bound=60)
        group.rmdir()

"""What the whole suite shares: running beside itself under pytest-xdist.

``make test`` runs the suite in several worker processes (``-n``), most of whose time is spent
waiting on subprocesses. A test that measures something the whole machine shares (the Shmem
total of /proc/meminfo) is marked ``alone``: it runs while no other test of this suite does.
Its worker takes an exclusive lock that every other test holds shared while it runs (with the
setup and teardown of the wider fixtures it starts or ends), so that worker waits for the tests
in flight to end and the others wait for it. The lock is in the run's temporary folder, so two
suites on one machine do not wait on each other (nor can they keep each other's hands off it).

``make test`` runs with ``--dist loadfile``: a file's tests run on one worker, one after another,
so a module fixture (a Ray cluster, a matrix run once) is made once, and tests of one file that
look for each other's traces machine-wide do not overlap.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _lock_files(config: pytest.Config) -> tuple[Path, Path] | None:
    """The gate and the room of this suite run (None: not an xdist worker, nothing to share).

    xdist gives each worker ``--basetemp`` inside one folder of the run, which pytest's own
    retention of old base folders removes in time.
    """
    if os.environ.get("PYTEST_XDIST_WORKER") is None or not config.option.basetemp:
        return None
    run = Path(config.option.basetemp).parent
    return run / "alone.gate", run / "alone.room"


@contextmanager
def _room(item: pytest.Item) -> Iterator[None]:
    """The room held shared for ``item``, or exclusively when it is marked ``alone``.

    A writer takes the gate first and keeps it until it has the room, so tests that start
    meanwhile queue at the gate instead of starving it; a reader holds the gate only to pass.
    """
    files = _lock_files(item.config)
    if files is None:
        yield
        return
    gate, room = files
    mode = fcntl.LOCK_EX if item.get_closest_marker("alone") is not None else fcntl.LOCK_SH
    with room.open("a") as handle:
        with gate.open("a") as passage:
            fcntl.flock(passage, mode)
            fcntl.flock(handle, mode)
            fcntl.flock(passage, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# tryfirst: outside pytest-timeout's wrapper, so waiting for the room counts in no test's timeout.
@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    """Setup, call and teardown of every test (with the wider fixtures it sets up or tears down)
    inside this run's room: see the module's docstring."""
    with _room(item):
        return (yield)

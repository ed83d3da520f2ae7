"""In-memory stand-ins for the session's seams: workspace, watcher, test runner, agent; the
factory of a run made of them; and a matrix's session runner.

One fake per seam of :mod:`orchestrator.seams`, each faithful to its contract. A
:class:`World` is a dict of file contents. Writing to it queues a change batch for the fake
watcher; a snapshot keeps a copy of the contents under a hash of them, its tree id; the fake
runner asks a verdict function what the tests say about the snapshot it is given, never about
the live files, so a session that tests a stale or wrong tree is caught. Everything sleeps on
the event loop's clock only, so sessions run on trio's ``MockClock`` in milliseconds.
:class:`FakeParts` hands these to a run's composition (:func:`orchestrator.run.runs.finished_run`),
which then scores the run and writes its reports as it does for the real parts.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio

from orchestrator.agents import TurnAgent
from orchestrator.log.cells import SessionOrder
from orchestrator.log.eventlog import EventLog
from orchestrator.log.records import WorkspaceCreated
from orchestrator.log.verdicts import TestRun
from orchestrator.run.parts import RunParts
from orchestrator.seams import AgentContext, Batch, Message
from orchestrator.system.git import EMPTY_TREE
from triggers import CommitMade, FileChange, PhaseResult

Verdict = Callable[[dict[str, str], str], tuple[int, int]]


def tree_of(files: dict[str, str]) -> str:
    """A content hash standing for the tree id of a snapshot holding ``files``."""
    return hashlib.sha1(repr(sorted(files.items())).encode()).hexdigest()


class World:
    """Files of a fake workspace, and the commits made in it."""

    def __init__(self, files: dict[str, str] | None = None, debounce: float = 0.05) -> None:
        self.files = dict(files or {})
        self.debounce = debounce
        self.commits: list[tuple[str, str]] = []
        #: Every snapshot taken, by tree id: the files as they were.
        self.snapshots: dict[str, dict[str, str]] = {}
        self._send, self._receive = anyio.create_memory_object_stream[Batch](max_buffer_size=math.inf)

    def write(self, path: str, text: str) -> None:
        """Change a file; the watcher reports it after the debounce."""
        change = "modified" if path in self.files else "added"
        self.files[path] = text
        self._send.send_nowait(Batch((FileChange(path, change),)))  # type: ignore[arg-type]

    def commit(self, subject: str) -> None:
        """Record a commit; the watcher reports that git moved."""
        self.commits.append((hashlib.sha1(f"{len(self.commits)}{subject}".encode()).hexdigest(), subject))
        self._send.send_nowait(Batch((), git=True))

    def close(self) -> None:
        """Close the change stream."""
        self._send.close()
        self._receive.close()

    def tree(self) -> str:
        """The tree id the files have now (:func:`tree_of`)."""
        return tree_of(self.files)


class FakeRepo:
    """The Repository protocol over a World."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.snapshots = 0
        self._reported = 0

    def files(self) -> list[str]:
        return sorted(self.world.files)

    async def snapshot(self) -> str:
        self.snapshots += 1
        await anyio.sleep(0)
        tree = self.world.tree()
        self.world.snapshots[tree] = dict(self.world.files)
        return tree

    async def export(self, tree: str, dest: Path, *, base: str = EMPTY_TREE) -> list[str]:
        old = {} if base == EMPTY_TREE else self.world.snapshots[base]
        new = self.world.snapshots[tree]
        for path in old.keys() - new.keys():
            (dest / path).unlink()
        for path, text in new.items():
            if old.get(path) != text:
                (dest / path).parent.mkdir(parents=True, exist_ok=True)
                (dest / path).write_text(text)
        return sorted(path for path in old.keys() | new.keys() if old.get(path) != new.get(path))

    async def commits(self) -> list[tuple[str, str]]:
        return list(self.world.commits)

    async def changes(self, before: str, after: str) -> list[tuple[str, str]]:
        old, new = self.world.snapshots[before], self.world.snapshots[after]
        gone = [(path, "deleted") for path in old if path not in new]
        came = [
            (path, "added" if path not in old else "modified") for path in new if old.get(path) != new[path]
        ]
        return sorted(gone + came)

    async def new_commits(self) -> list[CommitMade]:
        new = self.world.commits[self._reported :]
        self._reported = len(self.world.commits)
        return [CommitMade(0.0, sha, subject) for sha, subject in new]


class FakeWatcher:
    """Yields the World's batches after its debounce."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.stopped = False

    async def batches(self) -> AsyncIterator[Batch]:
        async for batch in self.world._receive:
            await anyio.sleep(self.world.debounce)
            yield batch

    def stop(self) -> None:
        self.stopped = True


class FakeRunner:
    """Answers each phase with ``verdict(files, phase)`` after ``seconds`` of (mock) time.

    ``files`` are those of the snapshot ``tree`` it is asked about; a tree never snapshotted
    is an error, as it is for the real runner, which exports the tree it is given.
    """

    def __init__(self, world: World, verdict: Verdict, seconds: float = 1.0) -> None:
        self.world = world
        self.verdict = verdict
        self.seconds = seconds
        self.runs: list[tuple[str, tuple[str, ...]]] = []

    async def run(self, tree: str, phases: Sequence[str]) -> TestRun:
        self.runs.append((tree, tuple(phases)))
        await anyio.sleep(self.seconds)
        results = []
        files = self.world.snapshots[tree]
        for phase in phases:
            passed, failed = self.verdict(files, phase)
            results.append(PhaseResult(phase, passed, failed))
        return TestRun("ok", tuple(results), "", self.seconds)


Behaviour = Callable[[World, Message], Awaitable[None]]


class FakeAgent(TurnAgent):
    """Does ``behaviour(world, message)`` for each message it is given."""

    name = "fake"

    def __init__(self, world: World, behaviour: Behaviour) -> None:
        self.world = world
        self.behaviour = behaviour
        self.seen: list[tuple[float, str]] = []

    async def turn(self, ctx: AgentContext, messages: list[Message]) -> int | None:
        for message in messages:
            self.seen.append((anyio.current_time(), message.trigger))
            await self.behaviour(self.world, message)
        return 0


class FakeParts:
    """The parts factory of a run on a World: FakeRepo, FakeWatcher, FakeRunner (answering by
    ``verdict`` after ``seconds``) and ``agent``, with no sandbox, bounds or seals."""

    def __init__(self, world: World, agent: FakeAgent, verdict: Verdict, seconds: float = 1.0) -> None:
        self.world = world
        self.repo = FakeRepo(world)
        self.runner = FakeRunner(world, verdict, seconds)
        self.agent = agent
        self.closed = False

    async def parts(self, log: EventLog) -> RunParts:
        baseline = await self.repo.snapshot()
        log.append(WorkspaceCreated(baseline, "python", {"kind": "fake"}), 0.0)
        return RunParts(
            repo=self.repo,
            runner=self.runner,
            watcher=FakeWatcher(self.world),
            agent=self.agent,
            live=lambda clock, spent: contextlib.nullcontext(),
        )

    async def aclose(self) -> None:
        self.closed = True
        self.world.close()


def passes_when(marker: dict[str, str]) -> Verdict:
    """A verdict: phase P has 2 tests, both pass when ``marker[P]`` is in solution.py."""

    def verdict(files: dict[str, str], phase: str) -> tuple[int, int]:
        ok = marker.get(phase, "\0") in files.get("solution.py", "")
        return (2, 0) if ok else (0, 2)

    return verdict


class FakeSessionRunner:
    """A session runner that makes the run folder a session would: ``order.folder`` (with a
    suffix if it exists, as :meth:`RunFolder.new` does) holding the ``report.json`` that
    ``report(order)`` gives. It counts the sessions running at once; ``gate``, once set, lets
    them end (until then they wait, as a long session does)."""

    def __init__(self, report: Callable[[SessionOrder], dict[str, Any]], capacity: int = 2) -> None:
        self.report = report
        self.capacity = capacity
        self.orders: list[SessionOrder] = []
        self.running = 0
        self.most = 0
        self.gate: anyio.Event | None = None

    async def run(self, order: SessionOrder) -> Path:
        self.orders.append(order)
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            await anyio.sleep(1)  # a session takes time: others start meanwhile
            if self.gate is not None:
                await self.gate.wait()
            folder, n = order.folder, 1
            while folder.exists():
                n += 1
                folder = order.folder.with_name(f"{order.name}-{n}")
            folder.mkdir(parents=True)
            (folder / "report.json").write_text(json.dumps(self.report(order)))
            return folder
        finally:
            self.running -= 1

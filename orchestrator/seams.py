"""The session's seams: every way a session reaches the world outside its loop, declared once.

A session (:mod:`orchestrator.session.loop`) talks to four things through these protocols,
and only through them. Each has one real implementation and one fake, faithful to the same
contract, in ``tests/fakes.py``:

================  =========================================  ===================================
seam              real                                       what it does
================  =========================================  ===================================
``Repository``    :class:`~orchestrator.session.workspace.    the workspace's snapshots, exports,
                  Workspace`                                 diffs and the agent's commits
``TestRunner``    :class:`~orchestrator.grading.testrun.      the hidden tests of a snapshot
                  PytestRunner`
``Watcher``       :class:`~orchestrator.session.watcher.      the workspace's changes, debounced
                  FsWatcher`
``Agent``         :mod:`orchestrator.agents`                 the agent, for the whole session
================  =========================================  ===================================

A matrix (:mod:`orchestrator.matrix`) reaches its sessions through one more seam,
``SessionRunner``: it runs one attempt of a cell, a whole session, and hands back its run
folder. :class:`~orchestrator.matrix.local.LocalBackend` runs each in a child process on this
machine; :class:`~orchestrator.matrix.ray_backend.RayBackend` runs each on a worker of a Ray
cluster and brings the folder back (what a runner raises when a session does not end well,
``orchestrator/matrix/backends.py``). Its fake, in ``tests/fakes.py`` too, writes the run folder
a session would.

What crosses a seam is declared here too: a watcher's :class:`Batch`; the agent's
:class:`Message` (one each), its :class:`Mailbox` and :class:`AgentContext`, and of its sandbox only
what an adapter asks (:class:`Confinement`, the real one ``grading/agent_sandbox.py``). A test
run's verdicts (:class:`~orchestrator.log.verdicts.TestRun`) and a session order
(:class:`~orchestrator.log.cells.SessionOrder`) are records (:mod:`orchestrator.log`). So this
module imports no implementation: the layers above it (``docs/architecture.md``) import it.

Time is no seam: the session reads the event loop's clock (``anyio.current_time``) and sleeps on
it, so tests run it on trio's ``MockClock``, where hours pass in milliseconds.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import anyio

from orchestrator.challenge.model import Challenge
from orchestrator.log.cells import SessionOrder
from orchestrator.log.verdicts import TestRun
from orchestrator.system.git import EMPTY_TREE
from orchestrator.system.venvs import Environment
from triggers import CommitMade, Event, FileChange, Observation

__all__ = [
    "Agent",
    "AgentContext",
    "Batch",
    "Confinement",
    "Mailbox",
    "Message",
    "Repository",
    "SessionRunner",
    "TestRunner",
    "Watcher",
]


class Repository(Protocol):
    """What a session needs from the workspace."""

    def files(self) -> list[str]:
        """Workspace-relative paths of the files in the workspace now."""

    async def snapshot(self) -> str:
        """Record the workspace as it is now; returns its tree id (raises ``OverLimits``)."""

    async def export(self, tree: str, dest: Path, *, base: str = EMPTY_TREE) -> list[str]:
        """Make ``dest``, which holds the export of ``base`` (by default nothing), hold snapshot ``tree``.

        Returns the paths it wrote or removed, folders included.
        """

    async def changes(self, before: str, after: str) -> list[tuple[str, str]]:
        """Files that differ between snapshot trees ``before`` and ``after``: (path, change), sorted.

        ``change`` is ``added``, ``modified`` or ``deleted`` (a rename is a deletion and an
        addition; a file that became a link or the other way round is ``modified``).
        """

    async def new_commits(self) -> list[CommitMade]:
        """Commits the agent made since the last call, oldest first (at most ``ITEMS`` of them,
        the first counting those left out: :class:`~triggers.CommitMade`)."""


class TestRunner(Protocol):
    """Runs hidden tests on a snapshot."""

    async def run(self, tree: str, phases: Sequence[str]) -> TestRun:
        """Test snapshot ``tree`` (never the live workspace) on ``phases``' hidden tests."""


@dataclass(frozen=True, slots=True)
class Batch:
    """One debounced batch: the files that changed, and whether a commit may have landed."""

    changes: tuple[FileChange, ...]
    git: bool = False


class Watcher(Protocol):
    """A source of change batches."""

    def batches(self) -> AsyncIterator[Batch]:
        """Yield batches until cancelled."""

    def stop(self) -> None:
        """Ask the watcher to stop promptly (before the session cancels it)."""


@dataclass(frozen=True, slots=True)
class Message:
    """A message for the agent; ``phase`` is the phase its trigger unlocked, if any."""

    number: int
    trigger: str
    kind: str
    text: str
    interrupt: bool = False
    phase: str | None = None


class Confinement(Protocol):
    """What an agent adapter asks of the agent's sandbox (``grading/agent_sandbox.py``)."""

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` confined as the agent."""

    def env(self, env: dict[str, str]) -> dict[str, str]:
        """``env`` as the agent gets it: its private HOME and temporary folder."""

    def excluding_frozen(self, clock: anyio.CancelScope) -> contextlib.AbstractContextManager[None]:
        """For the block, ``clock``'s deadline does not count the time the agent is frozen."""


@dataclass(frozen=True, slots=True)
class AgentContext:
    """Where the agent works and how it reports back. ``emit`` stamps times on receipt."""

    workspace: Path
    folder: Path  # the run's agent/ folder, for message files and transcripts
    challenge: Challenge
    emit: Callable[[Event | Observation], None]
    turn_limit: float | None = None
    log: Any = None
    #: the agent's own environment, first on its PATH (None: the PATH as it is)
    environment: Environment | None = None
    #: the run's agent sandbox (None: commands run as they are, as in tests of the loop)
    sandbox: Confinement | None = None

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` as the agent's sandbox runs it."""
        return self.sandbox.command(argv) if self.sandbox is not None else list(argv)

    def env(self, env: dict[str, str]) -> dict[str, str]:
        """``env`` as the agent's sandbox gives it (its private HOME and temporary folder)."""
        return self.sandbox.env(env) if self.sandbox is not None else env

    def excluding_frozen(self, clock: anyio.CancelScope) -> contextlib.AbstractContextManager[None]:
        """For the block, ``clock``'s deadline does not count the time the agent is frozen."""
        return self.sandbox.excluding_frozen(clock) if self.sandbox is not None else contextlib.nullcontext()


class Mailbox:
    """Messages waiting for the agent; the session puts, the adapter takes."""

    def __init__(self) -> None:
        self._waiting: list[Message] = []
        self._arrived = anyio.Event()
        self._interrupt: Callable[[], None] | None = None

    def put(self, message: Message) -> None:
        """Queue ``message``; if it interrupts, cancel the turn under way."""
        self._waiting.append(message)
        self._arrived.set()
        if message.interrupt and self._interrupt is not None:
            self._interrupt()

    async def take_all(self) -> list[Message]:
        """Wait for at least one message; return every message waiting."""
        while not self._waiting:
            await self._arrived.wait()
            self._arrived = anyio.Event()
        taken, self._waiting = self._waiting, []
        return taken

    def pending(self) -> int:
        """How many messages wait."""
        return len(self._waiting)

    def on_interrupt(self, callback: Callable[[], None] | None) -> None:
        """Set what an interrupting message does to the turn under way."""
        self._interrupt = callback


class Agent(Protocol):
    """An agent adapter: runs for the whole session, taking messages from the mailbox."""

    name: str
    #: Files of the agent CLI's own configuration and credentials, relative to HOME, that its
    #: private HOME is seeded with (documented per preset in docs/agents.md).
    home_files: tuple[str, ...]

    def programs(self) -> list[str]:
        """The programs (names on PATH, or paths) the agent runs: its sandbox shows their installs."""

    def preflight(self, challenge: Challenge) -> None:
        """Raise ``AgentUnavailable``, saying what to do, if it cannot run ``challenge`` here.

        Checked before anything of the run is made, so a run that could only be invalid is
        refused instead."""

    async def run(self, ctx: AgentContext, mailbox: Mailbox) -> None:
        """Work until cancelled (or, for an agent that can exit, until it does)."""


class SessionRunner(Protocol):
    """Runs matrix attempts, each one whole session, up to ``capacity`` at a time."""

    #: How many sessions it runs at once; the driver never hands it more.
    capacity: int

    async def run(self, order: SessionOrder) -> Path:
        """Run the session ``order`` describes, to its end, in the run folder ``order.folder``;
        return that folder, which holds the session's ``report.json`` (docs/report.md).

        Raises when the session did not end well, as ``orchestrator/matrix/backends.py`` says
        (crashed, timed out, lost, or could not be run); the driver records that attempt and goes on."""

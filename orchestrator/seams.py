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

Time is no seam: the session reads the event loop's clock (``anyio.current_time``) and sleeps on
it, so tests run it on trio's ``MockClock``, where hours pass in milliseconds.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from orchestrator.agents.base import AgentContext, Mailbox
    from orchestrator.challenge.model import Challenge
    from orchestrator.grading.testrun import TestRun
    from orchestrator.matrix.cells import SessionOrder
    from orchestrator.session.watcher import Batch

from orchestrator.session.workspace import EMPTY_TREE
from triggers import CommitMade

__all__ = ["Agent", "Repository", "SessionRunner", "TestRunner", "Watcher"]


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


class Watcher(Protocol):
    """A source of change batches."""

    def batches(self) -> AsyncIterator[Batch]:
        """Yield batches until cancelled."""

    def stop(self) -> None:
        """Ask the watcher to stop promptly (before the session cancels it)."""


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

"""The parts one run is made of, and the factory of the real ones.

A run's composition (:func:`orchestrator.run.runs.finished_run`) takes a :class:`PartsFactory`:
:class:`RealParts` builds the real workspace, environments, sandbox, control groups, seals,
agent sandbox, pytest runner and folder watch of a run folder; a test hands it the in-memory
fakes of ``tests/fakes.py`` instead, and the same session, scoring and reports run on them.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import anyio
import structlog

import orchestrator
import triggers
from orchestrator.agents.scripted import apply_reference
from orchestrator.challenge.model import Challenge
from orchestrator.gateway.access import GatewaySettings
from orchestrator.grading.agent_sandbox import AgentSandbox, AgentView, Share, program_shares
from orchestrator.grading.bounds import SessionGroups, agent_bounds, test_bounds
from orchestrator.grading.sandbox import Sandbox, detect_sandbox
from orchestrator.grading.seal import Seals
from orchestrator.grading.testrun import PytestRunner
from orchestrator.log.eventlog import EventLog
from orchestrator.log.records import AgentSandboxed, PhaseSealed, SharedPath, WorkspaceCreated
from orchestrator.run.agent_network import NetworkChoice
from orchestrator.run.folder import RunFolder
from orchestrator.run.model_gateway import model_gateway
from orchestrator.scoring.manifest import freeze_manifest
from orchestrator.seams import Agent, Repository, TestRunner, Watcher
from orchestrator.session.agent_limits import AgentLimitsWatch
from orchestrator.session.watcher import FsWatcher
from orchestrator.session.workspace import GitError, Workspace
from orchestrator.system.cgroups import CgroupError
from orchestrator.system.venvs import (
    Environment,
    EnvironmentFailure,
    Environments,
    cache_root,
    environments_for,
    seal_of,
)

__all__ = ["PartsFactory", "RealParts", "RunParts", "ScoredRepository", "SetupFailed"]


class SetupFailed(Exception):
    """The environment failed before the session began (git, files, an environment): the run is
    invalid, never a zero."""


class ScoredRepository(Repository, Protocol):
    """A workspace scoring can read: the session's :class:`Repository`, and its commits."""

    async def commits(self) -> list[tuple[str, str]]:
        """Every commit after the baseline, oldest first, as (sha, subject)."""
        ...


@dataclass(frozen=True, slots=True)
class RunParts:
    """What one run's session is made of, real or fake."""

    repo: ScoredRepository
    runner: TestRunner
    watcher: Watcher
    agent: Agent
    #: what lives as long as the session (the runner's warm interpreter, the model gateway): it
    #: starts with the session and ends with it; given the session's clock, which its records
    #: use, and what to tell once the model budget is spent
    live: Callable[[Callable[[], float], Callable[[str], None]], contextlib.AbstractAsyncContextManager[Any]]
    #: the agent's environment (first on its PATH); None: the agent's PATH as it is
    environment: Environment | None = None
    seals: Seals | None = None
    sandbox: AgentSandbox | None = None
    limits: AgentLimitsWatch | None = None


class PartsFactory(Protocol):
    """Builds a run's parts, recording what setting them up decided, and releases them."""

    async def parts(self, log: EventLog) -> RunParts:
        """The run's parts; their setup's records are appended to ``log`` at time 0. Raises
        :class:`SetupFailed` when the environment failed before anything of the agent's ran."""
        ...

    async def aclose(self) -> None:
        """Release what :meth:`parts` made, however far it got; safe to call in every path."""
        ...


class RealParts:
    """The real parts of a run in ``folder``: the factory ``changeup run`` uses."""

    def __init__(
        self,
        challenge: Challenge,
        agent: Agent,
        folder: RunFolder,
        *,
        step: float = 0.03,
        debounce: float = 0.3,
        shares: Sequence[Share] = (),
        network: bool = True,
        start: str | None = None,
        gateway: GatewaySettings | None = None,
        network_choice: NetworkChoice | None = None,
    ) -> None:
        self.challenge = challenge
        self.agent = agent
        self.folder = folder
        self.step = step
        self.debounce = debounce
        self.shares = tuple(shares)
        self.network = network
        self.start = start
        self.gateway = gateway
        self.network_choice = network_choice
        self._logger = structlog.get_logger().bind(session=folder.path.name)
        self._groups: SessionGroups | None = None
        self._box: AgentSandbox | None = None

    @property
    def model_only(self) -> bool:
        """Whether the agent's only network is its model gateway (``--agent-network model``)."""
        return self.gateway is not None and self.gateway.model_only

    async def parts(self, log: EventLog) -> RunParts:
        """The workspace, sandbox, bounds, seals and agent sandbox, logged as they are made."""
        challenge, folder, limits = self.challenge, self.folder, self.challenge.model.limits
        workspace, baseline, environments = await self._workspace()
        grading = environments.grading
        sandbox = detect_sandbox(grading.python)
        self._groups = groups = SessionGroups.make(agent_bounds(limits), test_bounds(limits))
        described = {**sandbox.describe(), "bounds": groups.describe()}
        if self.network_choice is not None:  # which network the agent got, and why
            described["agent_network"] = self.network_choice.describe()
        log.append(WorkspaceCreated(baseline, grading.python, described), 0.0)
        # Everything that grades the agent, as it is now; checked at every grading.
        seals = Seals.take(challenge, grading.prefix)
        for phase, files in seals.tests.items():
            log.append(PhaseSealed(phase, files, seal_of(grading.prefix)), 0.0)
        if self.model_only and sandbox.kind != "bubblewrap":  # never the whole network instead
            raise SetupFailed(f"--agent-network model needs bubblewrap: {sandbox.reason}")
        if sandbox.kind != "bubblewrap":  # a weaker sandbox is never silent
            self._logger.warning("weaker sandbox", sandbox=sandbox.kind, reason=sandbox.reason)
        for warning in groups.warnings():  # nor are weaker bounds
            self._logger.warning("unbounded", detail=warning)
        await freeze_manifest(folder.path, challenge, self.agent, sandbox=described, start_at=self.start)
        self._box = box = self.agent_sandbox(sandbox, environments, groups)
        # Through the gateway, which holds the keys, a CLI's own logins are not handed to the agent.
        logins = set(getattr(self.agent, "credential_files", ())) if self.gateway is not None else set()
        seeded = box.prepare([name for name in self.agent.home_files if name not in logins])
        log.append(_sandboxed(box, seeded), 0.0)
        runner = PytestRunner(
            challenge,
            workspace,
            folder.path / "scratch",
            environment=grading,
            sandbox=sandbox,
            sealed=seals.tests,
            groups=groups,
        )
        return RunParts(
            repo=workspace,
            runner=runner,
            watcher=FsWatcher(folder.workspace, step=self.step, debounce=self.debounce),
            agent=self.agent,
            live=lambda clock, spent: _live(runner, model_gateway(self.gateway, log, box, clock, spent)),
            environment=environments.agent,
            seals=seals,
            sandbox=box,
            limits=AgentLimitsWatch(box.bounds, box.cgroup, box.disk()),
        )

    async def _workspace(self) -> tuple[Workspace, str, Environments]:
        """The workspace (with the phases before the start laid down), its baseline snapshot, and
        the run's environments; :class:`SetupFailed` when git, the files or an environment fail."""
        challenge, folder, limits = self.challenge, self.folder, self.challenge.model.limits
        try:
            workspace = Workspace.create(
                challenge.workspace,
                folder.workspace,
                folder.shadow,
                max_files=limits.workspace_files,
                max_bytes=int(limits.workspace_mb * 1e6),
            )
            if self.start is not None:
                await anyio.to_thread.run_sync(
                    apply_reference, challenge, challenge.before(self.start), folder.workspace
                )
                # Read again, so the commits laid down before the start are none of the agent's.
                workspace = Workspace(
                    workspace.path,
                    workspace.shadow,
                    max_files=workspace.max_files,
                    max_bytes=workspace.max_bytes,
                )
            baseline = await workspace.snapshot()
            python = challenge.grading_python()  # found before the run: runs._refuse_early
            environments = await anyio.to_thread.run_sync(
                environments_for, challenge.model.requirements, python
            )
        except (GitError, OSError, EnvironmentFailure) as error:
            raise SetupFailed(str(error)) from error
        return workspace, baseline, environments

    def agent_sandbox(
        self, sandbox: Sandbox, environments: Environments, groups: SessionGroups
    ) -> AgentSandbox:
        """The sandbox of this run's agent: what it may see besides its own folders, what stays hidden."""
        folder, agent = self.folder, self.agent
        seen = [Share(environments.agent.prefix), Share(environments.agent.base)]
        seen += [share for program in agent.programs() for share in program_shares(program)]
        changeup = [Path(orchestrator.__file__).parent, Path(triggers.__file__).parent]
        if sys.prefix != sys.base_prefix:  # changeup's own virtual environment
            changeup.append(Path(sys.prefix))
        view = AgentView(
            workspace=folder.workspace,
            notes=folder.path / "agent",
            home=folder.path / "home",
            tmp=folder.path / "scratch" / "agent",
            shares=(*seen, *self.shares),
            hide=(self.challenge.root, folder.path.parent, cache_root(), *changeup),
            network=self.network and not self.model_only,
            model_only=self.model_only,
            python=environments.agent.python,
        )
        return AgentSandbox(sandbox, view, groups.agent_bounds, groups.agent)

    async def aclose(self) -> None:
        """End the control groups (nothing of the agent's or of a test run outlives the
        session), remove the scratch folder, and forget the credentials the agent was given."""
        if self._groups is not None:
            with anyio.CancelScope(shield=True):
                try:
                    await self._groups.aclose()
                except CgroupError as error:  # said, never raised over what ended the run
                    self._logger.error("control groups left behind", detail=str(error))
        shutil.rmtree(self.folder.path / "scratch", ignore_errors=True)
        if self._box is not None:
            self._box.forget_seeded()  # the credentials it was given do not stay in the run folder


@contextlib.asynccontextmanager
async def _live(
    runner: PytestRunner, gateway: contextlib.AbstractAsyncContextManager[Any]
) -> AsyncIterator[None]:
    """The runner's warm interpreter, then the model gateway, for the session's length."""
    async with runner, gateway:
        yield


def _sandboxed(box: AgentSandbox, seeded: Sequence[str]) -> AgentSandboxed:
    """The ``agent.sandboxed`` record of ``box``, with the home files ``seeded`` into it."""
    seen = box.describe()
    visible = tuple(SharedPath(share["path"], share["writable"]) for share in seen["shares"])
    return AgentSandboxed(seen["confined"], seen["user"], seen["network"], visible, tuple(seeded))

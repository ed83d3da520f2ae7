"""A run folder, end to end: set up, run the session, grade, and write the reports.

Layout of ``<out>/<challenge>-<time>-<agent>/``::

    events.jsonl   the append-only event log (docs/event-log.md)
    workspace/     the agent's workspace, with its own git history
    shadow.git/    snapshots of the workspace, one tree per tested state
    agent/         message files and transcripts of the agent
    report.json    the report (docs/report.md)
    report.md      the same, for people
"""

from __future__ import annotations

import datetime as dt
import json
import platform
import re
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import structlog

import orchestrator
import triggers
from orchestrator.agents import Agent
from orchestrator.challenge import Challenge
from orchestrator.eventlog import EventLog, read_log
from orchestrator.grading.agent_sandbox import AgentSandbox, AgentView, Share, program_shares
from orchestrator.grading.environments import (
    EnvironmentFailure,
    Environments,
    cache_root,
    environments_for,
    seal_of,
)
from orchestrator.grading.sandbox import Sandbox, detect_sandbox
from orchestrator.grading.seal import Seals
from orchestrator.grading.testrun import PytestRunner
from orchestrator.html import report_html
from orchestrator.judge import Judge, RuleJudge
from orchestrator.manifest import freeze_manifest
from orchestrator.render import report_markdown
from orchestrator.report import build_report
from orchestrator.rubric import score_rubric
from orchestrator.session import Outcome, Parts, Session, SessionView
from orchestrator.watcher import FsWatcher
from orchestrator.workspace import GitError, Workspace

__all__ = ["RunFolder", "open_run", "run_challenge", "write_reports"]


@dataclass(frozen=True, slots=True)
class RunFolder:
    """Where a run lives."""

    path: Path

    @property
    def log(self) -> Path:
        """``events.jsonl``."""
        return self.path / "events.jsonl"

    @property
    def workspace(self) -> Path:
        """The agent's workspace."""
        return self.path / "workspace"

    @property
    def shadow(self) -> Path:
        """The snapshot repository."""
        return self.path / "shadow.git"

    @classmethod
    def new(cls, out: Path, challenge: Challenge, agent: str) -> RunFolder:
        """A fresh, uniquely named folder under ``out``."""
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
        slug = re.sub(r"[^a-z0-9]+", "-", agent.lower()).strip("-")[:40] or "agent"
        base = out.resolve() / f"{challenge.id}-{stamp}-{slug}"
        path, n = base, 1
        while path.exists():
            n += 1
            path = base.with_name(f"{base.name}-{n}")
        path.mkdir(parents=True)
        return cls(path)


def _header(challenge: Challenge, agent: Agent) -> dict[str, Any]:
    from importlib.metadata import version

    return {
        "challenge": challenge.id,
        "challenge_sha256": challenge.digest,
        "challenge_path": str(challenge.root),
        "agent": agent.name,
        "started_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "versions": {
            "changeup": version("changeup"),
            "python": platform.python_version(),
        },
    }


def write_reports(challenge: Challenge, folder: RunFolder, name: str = "report") -> dict[str, Any]:
    """Build the report from the log; write ``<name>.json``, ``<name>.md`` and ``<name>.html``."""
    contents = read_log(folder.log)
    report = build_report(challenge, contents)
    (folder.path / f"{name}.json").write_text(json.dumps(report, indent=2) + "\n")
    (folder.path / f"{name}.md").write_text(report_markdown(report))
    (folder.path / f"{name}.html").write_text(report_html(report, contents.records))
    return report


async def run_challenge(
    challenge: Challenge,
    agent: Agent,
    out: Path,
    *,
    judge: Judge | None = None,
    step: float = 0.03,
    debounce: float = 0.3,
    on_change: Callable[[SessionView], None] | None = None,
    on_folder: Callable[[RunFolder], None] | None = None,
    shares: Sequence[Share] = (),
    network: bool = True,
) -> tuple[RunFolder, Outcome, dict[str, Any]]:
    """Run ``challenge`` with ``agent`` in a new folder under ``out``; returns the report too.

    ``shares`` are paths the agent may also see (``--agent-share``); ``network`` is whether it
    keeps the network (``--agent-network``).
    """
    folder = RunFolder.new(out, challenge, agent.name)
    if on_folder is not None:
        on_folder(folder)
    log = EventLog.create(folder.log, _header(challenge, agent))
    logger = structlog.get_logger().bind(session=folder.path.name)
    box: AgentSandbox | None = None
    try:
        try:
            limits = challenge.model.limits
            workspace = Workspace.create(
                challenge.workspace,
                folder.workspace,
                folder.shadow,
                max_files=limits.workspace_files,
                max_bytes=int(limits.workspace_mb * 1e6),
            )
            baseline = await workspace.snapshot()
            environments = await anyio.to_thread.run_sync(environments_for, challenge.model.requirements)
        except (GitError, OSError, EnvironmentFailure) as error:
            # The environment failed, not the agent: the run is invalid, never a zero.
            detail = f"could not set up the run: {error}"
            log.append({"kind": "session.aborted", "status": "invalid", "detail": detail}, 0.0, sync=True)
            log.close()
            return folder, Outcome("invalid", None, detail, None, 0.0), write_reports(challenge, folder)
        grading = environments.grading
        sandbox = detect_sandbox(grading.python)
        created = {"kind": "workspace.created", "baseline": baseline, "python": grading.python}
        log.append({**created, "sandbox": sandbox.describe()}, 0.0)
        # Everything that grades the agent, as it is now; checked at every grading.
        seals = Seals.take(challenge, grading.prefix)
        for phase, files in seals.tests.items():
            record = {"kind": "phase.sealed", "phase": phase, "files": files}
            log.append({**record, "environment": seal_of(grading.prefix)}, 0.0)
        if sandbox.kind != "bubblewrap":  # a weaker sandbox is never silent
            logger.warning("weaker sandbox", sandbox=sandbox.kind, reason=sandbox.reason)
        await freeze_manifest(folder.path, challenge, agent, sandbox=sandbox.describe())
        box = agent_sandbox(sandbox, folder, challenge, agent, environments, shares=shares, network=network)
        seeded = box.prepare(agent.home_files)
        log.append({"kind": "agent.sandboxed", **box.describe(), "home_seeded": seeded}, 0.0)

        parts = Parts(
            repo=workspace,
            runner=PytestRunner(
                challenge,
                workspace,
                folder.path / "scratch",
                environment=grading,
                sandbox=sandbox,
                hide=[folder.path.parent],
                sealed=seals.tests,
            ),
            watcher=FsWatcher(folder.workspace, step=step, debounce=debounce),
            agent=agent,
        )
        session = Session(
            challenge,
            parts,
            log,
            folder.path / "agent",
            workspace=folder.workspace,
            on_change=on_change,
            logger=logger,
            environment=environments.agent,
            seals=seals,
            sandbox=box,
        )
        outcome = await session.run()
        # A refused final workspace (over its limits) is not examined: its score is its void tests'.
        refused = outcome.final is not None and outcome.final.status == "refused"
        if outcome.status != "invalid" and not refused:
            scored = await score_rubric(
                challenge, workspace, read_log(folder.log).records, judge or RuleJudge()
            )
            log.append({"kind": "session.scored", "criteria": scored}, log.last_t, sync=True)
    except BaseException as error:
        stopped = isinstance(error, KeyboardInterrupt | anyio.get_cancelled_exc_class())
        record = {"kind": "session.aborted", "status": "interrupted" if stopped else "crashed"}
        log.append({**record, "detail": repr(error)}, log.last_t, sync=True)
        raise
    finally:
        log.close()
        shutil.rmtree(folder.path / "scratch", ignore_errors=True)
        if box is not None:
            box.forget_seeded()  # the credentials it was given do not stay in the run folder
    report = write_reports(challenge, folder)
    return folder, outcome, report


def agent_sandbox(
    sandbox: Sandbox,
    folder: RunFolder,
    challenge: Challenge,
    agent: Agent,
    environments: Environments,
    *,
    shares: Sequence[Share] = (),
    network: bool = True,
) -> AgentSandbox:
    """The sandbox of this run's agent: what it may see besides its own folders, what stays hidden."""
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
        shares=(*seen, *shares),
        hide=(challenge.root, folder.path.parent, cache_root(), *changeup),
        network=network,
    )
    return AgentSandbox(sandbox, view)


def open_run(path: Path) -> RunFolder:
    """The run folder at ``path`` (the folder, or its ``events.jsonl``)."""
    folder = path.parent if path.name == "events.jsonl" else path
    return RunFolder(folder.resolve())

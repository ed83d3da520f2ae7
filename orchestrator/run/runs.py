"""A run folder, end to end: set up, run the session, grade, and write the reports.

Layout of ``<out>/<challenge>-<time>-<agent>/``::

    events.jsonl   the append-only event log (docs/event-log.md)
    challenge/     the challenge folder as it was run (replay and rescore read it)
    workspace/     the agent's workspace, with its own git history
    shadow.git/    snapshots of the workspace, one tree per tested state
    agent/         message files and transcripts of the agent
    pid            the id of the process that made the run (is it still live?)
    report.json    the report (docs/report.md)
    report.md      the same, for people; report.html, with a timeline
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import re
import shutil
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import structlog

import orchestrator
import triggers
from orchestrator.agents import AgentUnavailable
from orchestrator.agents.scripted import apply_reference
from orchestrator.challenge.model import IGNORED_PARTS, Challenge
from orchestrator.gateway.access import GatewaySettings
from orchestrator.grading.agent_sandbox import AgentSandbox, AgentView, Share, program_shares
from orchestrator.grading.bounds import SessionGroups, agent_bounds, test_bounds
from orchestrator.grading.sandbox import Sandbox, detect_sandbox
from orchestrator.grading.seal import Seals
from orchestrator.grading.testrun import PytestRunner
from orchestrator.log.eventlog import EventLog, EventLogError, read_log
from orchestrator.log.records import (
    STOPPED,
    AgentSandboxed,
    PhaseSealed,
    SessionAborted,
    SessionScored,
    SharedPath,
    WorkspaceCreated,
)
from orchestrator.render.html_report import report_html
from orchestrator.render.markdown import report_markdown
from orchestrator.run.model_gateway import model_gateway
from orchestrator.scoring.effects import effects_record
from orchestrator.scoring.judge import Judge, RuleJudge
from orchestrator.scoring.manifest import freeze_manifest
from orchestrator.scoring.report import build_report
from orchestrator.scoring.rubric import score_rubric
from orchestrator.scoring.scope import scope_record
from orchestrator.seams import Agent
from orchestrator.session.agent_limits import AgentLimitsWatch
from orchestrator.session.loop import Outcome, Parts, Session, SessionView
from orchestrator.session.watcher import FsWatcher
from orchestrator.session.workspace import GitError, Workspace
from orchestrator.system.cgroups import CgroupError
from orchestrator.system.venvs import (
    EnvironmentFailure,
    Environments,
    cache_root,
    environments_for,
    seal_of,
)

__all__ = ["RunFolder", "RunRefused", "open_run", "run_challenge", "start_phase", "write_reports"]


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

    @property
    def challenge(self) -> Path:
        """The challenge folder as it was run (copied in at the start; absent in older runs)."""
        return self.path / "challenge"

    def challenge_as_run(self, header: dict[str, Any]) -> Path:
        """The challenge to read the run against: the copy it kept, or, for a run made before
        runs kept one, the folder its log ``header`` names."""
        return self.challenge if self.challenge.is_dir() else Path(str(header.get("challenge_path", "")))

    @property
    def pid(self) -> int | None:
        """The id of the process that made the run (its ``pid`` file); None when not recorded."""
        try:
            return int((self.path / "pid").read_text())
        except (OSError, ValueError):
            return None

    def live(self) -> bool | None:
        """Whether the process that made the run still runs; None when no pid was recorded."""
        pid = self.pid
        if pid is None:
            return None
        try:
            os.kill(pid, 0)  # signal 0: only asks whether the process exists
        except ProcessLookupError:
            return False
        except PermissionError:  # it exists, under another user
            return True
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except (OSError, IndexError):  # no /proc here (not Linux): the signal's answer stands
            return True
        # A killed process nobody has reaped yet is a zombie: gone, though it still has a pid.
        return state != "Z"

    @classmethod
    def new(cls, out: Path, challenge: Challenge, agent: str, name: str | None = None) -> RunFolder:
        """A fresh, uniquely named folder under ``out`` (``name``, if given, else one of the time)."""
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
        slug = re.sub(r"[^a-z0-9]+", "-", agent.lower()).strip("-")[:40] or "agent"
        base = out.resolve() / (name or f"{challenge.id}-{stamp}-{slug}")
        path, n = base, 1
        while path.exists():
            n += 1
            path = base.with_name(f"{base.name}-{n}")
        path.mkdir(parents=True)
        # Written so `changeup show --follow` can tell a live run from one whose process is gone.
        (path / "pid").write_text(f"{os.getpid()}\n")
        return cls(path)


def _header(challenge: Challenge, agent: Agent, start: str | None) -> dict[str, Any]:
    from importlib.metadata import version

    return {
        "challenge": challenge.id,
        "challenge_sha256": challenge.digest,
        "challenge_path": str(challenge.root),
        "agent": agent.name,
        "start_at": start,
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
    (folder.path / f"{name}.html").write_text(report_html(report, contents.entries))
    return report


class RunRefused(ValueError):
    """A run refused before anything of it was made; the message says what to do instead."""


def start_phase(challenge: Challenge, phase: str | None) -> str | None:
    """The phase a run of ``challenge`` starts at when ``--start-at`` names ``phase``: None for
    none or the first phase (starting there is starting as written). Raises :class:`RunRefused`
    for a phase the challenge does not have, naming the nearest, or one it cannot start at
    (:meth:`Challenge.start_problem`)."""
    if phase is None or phase == challenge.phases[0].id:
        return None
    problem = challenge.start_problem(phase)
    if problem:
        raise RunRefused(f"--start-at {phase}: {problem}")
    return phase


def _refuse_early(challenge: Challenge, agent: Agent, out: Path) -> None:
    """Raise :class:`RunRefused` when the run could only be invalid: its agent cannot run
    here (:meth:`Agent.preflight`), the grading Python is not one the challenge needs, or
    ``out`` is itself a run folder."""
    if (out / "events.jsonl").exists():
        raise RunRefused(
            f"--out {out} is a run folder (it holds events.jsonl); run folders are made inside "
            f"--out: pass the folder that holds it, e.g. --out {out.parent}"
        )
    if challenge.python_problem():  # its tests could only fail on syntax or imports: invalid
        raise RunRefused(challenge.python_problem())
    try:
        agent.preflight(challenge)
    except AgentUnavailable as error:
        raise RunRefused(f"--agent {agent.name}: {error}") from None


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
    name: str | None = None,
    start: str | None = None,
    gateway: GatewaySettings | None = None,
) -> tuple[RunFolder, Outcome, dict[str, Any]]:
    """Run ``challenge`` with ``agent`` in a new folder under ``out``; returns the report too.

    ``shares`` are paths the agent may also see (``--agent-share``); ``network`` is whether it
    keeps the network (``--agent-network``); ``name`` names the run folder (a matrix names its
    attempts' folders); ``start`` is the phase the session starts at (``--start-at``): the
    workspace then holds the reference solution of every phase before it, committed, and that
    phase's message is the briefing; ``gateway``: the agent reaches its model through a
    gateway of the session's own (:mod:`orchestrator.run.model_gateway`). Raises
    :class:`RunRefused`, having made nothing, when the run could only be invalid.
    """
    start = start_phase(challenge, start)
    _refuse_early(challenge, agent, out)
    folder = RunFolder.new(out, challenge, agent.name, name)
    # Kept as it was run: replay and rescore must not depend on a folder that may change since.
    # The run folder is never in the agent's view, so its hidden tests stay hidden.
    shutil.copytree(challenge.root, folder.challenge, ignore=shutil.ignore_patterns(*IGNORED_PARTS))
    if on_folder is not None:
        on_folder(folder)
    log = EventLog.create(folder.log, _header(challenge, agent, start))
    logger = structlog.get_logger().bind(session=folder.path.name)
    box: AgentSandbox | None = None
    groups: SessionGroups | None = None
    session: Session | None = None
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
            if start is not None:
                await anyio.to_thread.run_sync(
                    apply_reference, challenge, challenge.before(start), folder.workspace
                )
                # Read again, so the commits laid down before the start are none of the agent's.
                workspace = Workspace(
                    workspace.path,
                    workspace.shadow,
                    max_files=workspace.max_files,
                    max_bytes=workspace.max_bytes,
                )
            baseline = await workspace.snapshot()
            python = challenge.grading_python()  # found before: _refuse_early
            environments = await anyio.to_thread.run_sync(
                environments_for, challenge.model.requirements, python
            )
        except (GitError, OSError, EnvironmentFailure) as error:
            # The environment failed, not the agent: the run is invalid, never a zero.
            detail = f"could not set up the run: {error}"
            log.append(SessionAborted("invalid", detail), 0.0, sync=True)
            log.close()
            return folder, Outcome("invalid", None, detail, None, 0.0), write_reports(challenge, folder)
        grading = environments.grading
        sandbox = detect_sandbox(grading.python)
        groups = SessionGroups.make(agent_bounds(limits), test_bounds(limits))
        described = {**sandbox.describe(), "bounds": groups.describe()}
        log.append(WorkspaceCreated(baseline, grading.python, described), 0.0)
        # Everything that grades the agent, as it is now; checked at every grading.
        seals = Seals.take(challenge, grading.prefix)
        for phase, files in seals.tests.items():
            log.append(PhaseSealed(phase, files, seal_of(grading.prefix)), 0.0)
        if sandbox.kind != "bubblewrap":  # a weaker sandbox is never silent
            logger.warning("weaker sandbox", sandbox=sandbox.kind, reason=sandbox.reason)
        for warning in groups.warnings():  # nor are weaker bounds
            logger.warning("unbounded", detail=warning)
        await freeze_manifest(folder.path, challenge, agent, sandbox=described, start_at=start)
        box = agent_sandbox(
            sandbox, folder, challenge, agent, environments, groups=groups, shares=shares, network=network
        )
        # Through the gateway, which holds the keys, a CLI's own logins are not handed to the agent.
        logins = set(getattr(agent, "credential_files", ())) if gateway is not None else set()
        seeded = box.prepare([name for name in agent.home_files if name not in logins])
        seen = box.describe()
        visible = tuple(SharedPath(share["path"], share["writable"]) for share in seen["shares"])
        sandboxed = AgentSandboxed(seen["confined"], seen["user"], seen["network"], visible, tuple(seeded))
        log.append(sandboxed, 0.0)

        runner = PytestRunner(
            challenge,
            workspace,
            folder.path / "scratch",
            environment=grading,
            sandbox=sandbox,
            sealed=seals.tests,
            groups=groups,
        )
        parts = Parts(
            repo=workspace,
            runner=runner,
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
            start=start,
            limits=AgentLimitsWatch(box.bounds, box.cgroup, box.disk()),
        )
        # The runner's warm interpreter and the model gateway start with the session and end with it.
        async with runner, model_gateway(gateway, log, box, session.elapsed):
            outcome = await session.run()
        # A refused final workspace (over its limits) is not examined: its score is its void tests'.
        refused = outcome.final is not None and outcome.final.status == "refused"
        if outcome.status != "invalid" and not refused:
            entries = read_log(folder.log).entries
            scope = await scope_record(challenge, workspace, entries)
            if scope is not None:
                log.append(scope, log.last_t)
            effects = effects_record(challenge, entries)
            if effects is not None:
                log.append(effects, log.last_t)
            scored = await score_rubric(challenge, workspace, entries, judge or RuleJudge())
            # The run's last record: once it is in, the run is done (see report.finished).
            log.append(SessionScored(tuple(scored)), log.last_t, sync=True)
    except BaseException as error:
        stopped = isinstance(error, KeyboardInterrupt | anyio.get_cancelled_exc_class())
        detail = STOPPED if stopped else "".join(traceback.format_exception(error)).rstrip()
        # Stamped with the time it stopped, not its last record's: a report says how long it ran.
        t = max(session.elapsed(), log.last_t) if session is not None else log.last_t
        log.append(SessionAborted("interrupted" if stopped else "crashed", detail), t, sync=True)
        raise
    finally:
        if groups is not None:  # nothing of the agent's or of a test run outlives the session
            with anyio.CancelScope(shield=True):
                try:
                    await groups.aclose()
                except CgroupError as error:  # said, never raised over what ended the run
                    logger.error("control groups left behind", detail=str(error))
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
    groups: SessionGroups,
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
    return AgentSandbox(sandbox, view, groups.agent_bounds, groups.agent)


def open_run(path: Path) -> RunFolder:
    """The run folder at ``path`` (the folder, or its ``events.jsonl``).

    Raises :class:`EventLogError` when ``path`` is not a run folder, saying what one is.
    """
    folder = path.parent if path.name == "events.jsonl" else path
    if not folder.is_dir():
        raise EventLogError(
            f"{path}: no such folder; pass a run folder, e.g. runs/<challenge>-<time>-<agent>"
        )
    if not (folder / "events.jsonl").is_file():
        raise EventLogError(
            f"{path}: not a run folder (it has no events.jsonl); run folders are the ones "
            "`changeup run` makes under its --out folder, e.g. runs/<challenge>-<time>-<agent>"
        )
    return RunFolder(folder.resolve())

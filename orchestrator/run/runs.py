"""A run, end to end: its folder, its parts, the session, its scores, and the written reports.

:func:`run_challenge` makes the run folder (:mod:`orchestrator.run.folder`) and its real parts
(:class:`~orchestrator.run.parts.RealParts`); :func:`finished_run` is the composition, given
any parts (real, or a test's fakes): session → scoring → written reports.
"""

from __future__ import annotations

import datetime as dt
import platform
import shutil
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import anyio
import structlog

from orchestrator.agents import AgentUnavailable
from orchestrator.challenge.model import IGNORED_PARTS, Challenge
from orchestrator.gateway.access import GatewaySettings
from orchestrator.grading.agent_sandbox import Share
from orchestrator.grading.sandbox import detect_sandbox
from orchestrator.log.eventlog import EventLog, EventLogError, read_log
from orchestrator.log.records import STOPPED, SessionAborted, SessionScored
from orchestrator.log.report import Report, report_json
from orchestrator.render.html_report import report_html
from orchestrator.render.markdown import report_markdown
from orchestrator.run.folder import RunFolder
from orchestrator.run.parts import PartsFactory, RealParts, RunParts, SetupFailed
from orchestrator.scoring.effects import effects_record
from orchestrator.scoring.judge import Judge, RuleJudge
from orchestrator.scoring.report import build_report
from orchestrator.scoring.rubric import score_rubric
from orchestrator.scoring.scope import scope_record
from orchestrator.seams import Agent
from orchestrator.session.loop import Outcome, Parts, Session, SessionView

if TYPE_CHECKING:
    from orchestrator.session.workspace import Workspace

__all__ = [
    "RunFolder",
    "RunFolderGone",
    "RunRefused",
    "finished_run",
    "open_run",
    "out_problem",
    "run_challenge",
    "start_phase",
    "write_reports",
]


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


def write_reports(challenge: Challenge, folder: RunFolder, name: str = "report") -> Report:
    """Build the report from the log; write ``<name>.json``, ``<name>.md`` and ``<name>.html``."""
    contents = read_log(folder.log)
    report = build_report(challenge, contents, folder.shadow)
    (folder.path / f"{name}.json").write_text(report_json(report))
    (folder.path / f"{name}.md").write_text(report_markdown(report))
    (folder.path / f"{name}.html").write_text(report_html(report, contents.entries))
    return report


class RunRefused(ValueError):
    """A run refused before anything of it was made; the message says what to do instead."""


class RunFolderGone(RuntimeError):
    """The run's folder, or its event log, was deleted while the run was going: it crashed,
    and what it recorded went with the folder."""


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


def out_problem(out: Path) -> str:
    """Why run folders cannot be made in ``out`` (it or a folder above it is a file); "" when they can."""
    blocker = next((path for path in (out, *out.parents) if path.exists() and not path.is_dir()), None)
    if blocker is None:
        return ""
    return (
        f"--out {out}: {blocker} is a file, not a folder; --out names the folder run folders "
        "are made in (it is created when missing)"
    )


def _refuse_early(challenge: Challenge, agent: Agent, out: Path, model_only: bool = False) -> None:
    """Raise :class:`RunRefused` when the run could only be invalid: its agent cannot run
    here (:meth:`Agent.preflight`), the grading Python is not one the challenge needs, ``out``
    is itself a run folder or a file, or a ``model_only`` network cannot be made (no bubblewrap)."""
    if out_problem(out):
        raise RunRefused(out_problem(out))
    if (out / "events.jsonl").exists():
        raise RunRefused(
            f"--out {out} is a run folder (it holds events.jsonl); run folders are made inside "
            f"--out: pass the folder that holds it, e.g. --out {out.parent}"
        )
    if challenge.python_problem():  # its tests could only fail on syntax or imports: invalid
        raise RunRefused(challenge.python_problem())
    if model_only and detect_sandbox().kind != "bubblewrap":  # never the whole network instead
        reason = detect_sandbox().reason
        raise RunRefused(
            f"--agent-network model needs a network namespace of bubblewrap's, and here {reason}; "
            "without it the agent would keep the whole network: choose 'on' (the whole network) or "
            "'none' (no model either)"
        )
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
) -> tuple[RunFolder, Outcome, Report]:
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
    _refuse_early(challenge, agent, out, gateway is not None and gateway.model_only)
    folder = RunFolder.new(out, challenge, agent.name, name)
    # Kept as it was run: replay and rescore must not depend on a folder that may change since.
    # The run folder is never in the agent's view, so its hidden tests stay hidden.
    shutil.copytree(challenge.root, folder.challenge, ignore=shutil.ignore_patterns(*IGNORED_PARTS))
    if on_folder is not None:
        on_folder(folder)
    made = RealParts(
        challenge,
        agent,
        folder,
        step=step,
        debounce=debounce,
        shares=shares,
        network=network,
        start=start,
        gateway=gateway,
    )
    outcome, report = await finished_run(
        challenge, agent, folder, made, judge=judge, on_change=on_change, start=start
    )
    return folder, outcome, report


async def finished_run(
    challenge: Challenge,
    agent: Agent,
    folder: RunFolder,
    factory: PartsFactory,
    *,
    judge: Judge | None = None,
    on_change: Callable[[SessionView], None] | None = None,
    start: str | None = None,
) -> tuple[Outcome, Report]:
    """The run in ``folder`` of ``challenge`` with ``agent``, on the parts ``factory`` makes:
    its session, its scores, and its reports, written; returns the outcome and the report.

    A setup that fails (:class:`SetupFailed`) makes the run invalid, never a zero; anything
    raised later is logged (``session.aborted``: crashed, or interrupted) and raised again,
    the log left readable. The factory's parts are released in every path.
    """
    log = EventLog.create(folder.log, _header(challenge, agent, start))
    logger = structlog.get_logger().bind(session=folder.path.name)
    session: Session | None = None
    try:
        try:
            parts = await factory.parts(log)
        except SetupFailed as error:
            # The environment failed, not the agent: the run is invalid, never a zero.
            detail = f"could not set up the run: {error}"
            log.append(SessionAborted("invalid", detail), 0.0, sync=True)
            log.close()
            return Outcome("invalid", None, detail, None, 0.0), write_reports(challenge, folder)
        session = _session(challenge, folder, parts, log, logger, on_change, start)
        async with parts.live(session.elapsed, session.budget_exhausted):
            outcome = await session.run()
        await _scores(challenge, parts, log, folder, outcome, judge or RuleJudge())
    except BaseException as error:
        stopped = isinstance(error, KeyboardInterrupt | anyio.get_cancelled_exc_class())
        detail = STOPPED if stopped else "".join(traceback.format_exception(error)).rstrip()
        # Stamped with the time it stopped, not its last record's: a report says how long it ran.
        t = max(session.elapsed(), log.last_t) if session is not None else log.last_t
        log.append(SessionAborted("interrupted" if stopped else "crashed", detail), t, sync=True)
        if not stopped and not folder.log.is_file():  # the record above went to a deleted file
            raise RunFolderGone(
                f"the run crashed: its folder {folder.path} was deleted while it was going (noticed as "
                f"{type(error).__name__}: {error}); its event log went with it, so no report is left"
            ) from error
        raise
    finally:
        await factory.aclose()
        log.close()
    return outcome, write_reports(challenge, folder)


def _session(
    challenge: Challenge,
    folder: RunFolder,
    parts: RunParts,
    log: EventLog,
    logger: Any,
    on_change: Callable[[SessionView], None] | None,
    start: str | None,
) -> Session:
    """The session of the run in ``folder``, on ``parts``."""
    return Session(
        challenge,
        Parts(repo=parts.repo, runner=parts.runner, watcher=parts.watcher, agent=parts.agent),
        log,
        folder.path / "agent",
        workspace=folder.workspace,
        on_change=on_change,
        logger=logger,
        environment=parts.environment,
        seals=parts.seals,
        sandbox=parts.sandbox,
        start=start,
        limits=parts.limits,
    )


async def _scores(
    challenge: Challenge, parts: RunParts, log: EventLog, folder: RunFolder, outcome: Outcome, judge: Judge
) -> None:
    """The scope, effects and rubric records of a session that ended as ``outcome``, appended
    to ``log``; none for an invalid session or a refused final workspace."""
    # A refused final workspace (over its limits) is not examined: its score is its void tests'.
    refused = outcome.final is not None and outcome.final.status == "refused"
    if outcome.status == "invalid" or refused:
        return
    entries = read_log(folder.log).entries
    scope = await scope_record(challenge, parts.repo, entries)
    if scope is not None:
        log.append(scope, log.last_t)
    effects = effects_record(challenge, entries)
    if effects is not None:
        log.append(effects, log.last_t)
    # score_rubric reads only what ScoredRepository declares; its annotation names the real one.
    scored = await score_rubric(challenge, cast("Workspace", parts.repo), entries, judge)
    # The run's last record: once it is in, the run is done (see report.finished).
    log.append(SessionScored(tuple(scored)), log.last_t, sync=True)


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

"""Calibration: can a challenge's graders be trusted?

For each challenge: the reference must reach full marks with its triggers firing as
designed and none of the effects the challenge prohibits; on the starter workspace every
phase's changed-requirement tests must fail; every broken variant must fail exactly the
tests and rubric criteria it declares; every impostor (the reference returning doubles
equal to anything, ``agents/impostor.py``) must fall short of full marks, unless the hidden
tests see the program only across a process boundary (``isolation.py``: then none is
planned, and the table says why); and the reference must do it again, ``trials`` more
times, to catch flaky tests. A challenge with honeypot phases gets a honeypot row: the reference
and every broken variant, laid over the starter, must fail every honeypot test; and no run (the
reference's, an impostor's) may pass one, as no honest solution can. A challenge without a
reference solution fails at once, with no run; one whose declared tools this machine lacks
(``go``, ``node``) is skipped, loudly: one row, marked skipped, names what is missing, and no
run is made. A first row says where the challenge's agent code runs while its hidden tests
decide: isolated in a process of its own (``testing: isolation: process``), or in-process,
sharing theirs.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio

from orchestrator.agents import IMPOSTORS, ImpostorAgent, ScriptedAgent
from orchestrator.challenge.isolation import process_boundary
from orchestrator.challenge.model import Challenge
from orchestrator.challenge.solutions import lay, solution_folders
from orchestrator.challenge.testids import covers
from orchestrator.challenge.uses import needs_of
from orchestrator.grading.diagnosis import missing_in
from orchestrator.grading.isolation import isolated, strength
from orchestrator.grading.policy import counts
from orchestrator.grading.sandbox import detect_sandbox
from orchestrator.grading.testrun import PytestRunner
from orchestrator.log.eventlog import LogReader
from orchestrator.log.report import Report
from orchestrator.run.runs import RunFolder, run_challenge
from orchestrator.scoring.judge import Judge, RuleJudge
from orchestrator.session.replay import replay_records
from orchestrator.session.workspace import Workspace
from orchestrator.system.toolsets import resolve
from orchestrator.system.venvs import EnvironmentFailure, grading_environment
from triggers.records import TestsResult
from triggers.typecheck import did_you_mean

__all__ = ["Check", "calibrate", "exact_match"]


@dataclass(frozen=True, slots=True)
class Check:
    """One calibration row: what was run, what it had to do, what it did."""

    challenge: str
    run: str
    expected: str
    got: str
    ok: bool
    folder: str = ""
    #: nothing was checked: the machine lacks what the challenge's tests need (``got`` says what)
    skipped: bool = False


def exact_match(declared: list[str], failing: list[str]) -> tuple[list[str], list[str]]:
    """Declared ids that caught nothing, and failing tests no declared id covers."""
    missed = [d for d in declared if not any(covers(d, f) for f in failing)]
    extra = sorted({f.split("[", 1)[0] for f in failing if not any(covers(d, f) for d in declared)})
    return missed, extra


def _failing(report: Report) -> list[str]:
    """The failing tests that count: a honeypot's fail on every honest solution (:func:`_honeypot_passes`)."""
    return [t.id for phase in report.phases if not phase.honeypot for t in phase.failing]


def _honeypot_passes(report: Report) -> list[str]:
    """Honeypot tests the run passed: a cheating finding, which no calibration run may have."""
    return [p.test for p in report.cheating.passes] if report.cheating is not None else []


def _lacking(report: Report) -> list[str]:
    """What the failing tests lacked and the challenge does not declare (``grading/diagnosis.py``),
    as ``the tool bash`` / ``the data zoneinfo``, each once."""
    found = [pair for phase in report.phases for t in phase.failing for pair in missing_in(t.detail)]
    return [f"the {kind} {name}" for kind, name in dict.fromkeys(found)]


def _short(report: Report) -> list[str]:
    return [c.id for c in report.rubric or [] if c.score != 1]


def _excused(challenge: Challenge, report: Report) -> list[str] | None:
    """The failing tests ``calibration.reference_may_fail`` covers, when they are all that stands
    between the run and full marks (it completed, was graded, reached every phase with tests and
    fell short on no criterion); None when something else does."""
    may_fail = challenge.model.calibration.reference_may_fail
    failing = _failing(report)
    if not may_fail or not failing or any(not any(covers(m, f) for m in may_fail) for f in failing):
        return None
    whole = (
        report.run.status == "completed"
        and counts(report.score.grading_status)
        and all(p.unlocked and p.total > 0 for p in report.phases)
        and not _short(report)
    )
    return failing if whole else None


def _named_ids(challenge: Challenge) -> list[tuple[str, str]]:
    """Each test id the challenge names, with the list that names it."""
    calibration = challenge.model.calibration
    named = [(f"{p.id}'s supersedes", i) for p in challenge.phases for i in p.supersedes]
    named += [(f"{p.id}'s preserved", i) for p in challenge.phases for i in p.preserved]
    named += [(f"broken variant {b.name}'s fails", i) for b in calibration.broken for i in b.fails]
    named += [("calibration.reference_may_fail", i) for i in calibration.reference_may_fail]
    return named + [("calibration.starter_may_pass", i) for i in calibration.starter_may_pass]


def _unknown_command_ids(challenge: Challenge, log: Path) -> list[str]:
    """The ids named for a ``command:`` phase that no test of the reference run's JUnit has:
    such a phase's tests are known only once they ran, so this is where they are checked."""
    commands = {p.id for p in challenge.phases if p.command is not None}
    named = [(where, i) for where, i in _named_ids(challenge) if i.split("/", 1)[0] in commands]
    if not named:
        return []
    ran: dict[str, set[str]] = {phase: set() for phase in commands}
    for record in LogReader(log):
        if record["kind"] == "tests.result":
            for result in TestsResult.from_fields(record).phases:
                ran.get(result.phase, set()).update(t.id for t in result.tests)
    return [
        f"{where} names {test_id!r}, which the reference run's JUnit does not have"
        + did_you_mean(test_id, ran[test_id.split("/", 1)[0]])
        for where, test_id in named
        if not any(covers(test_id, t) for t in ran[test_id.split("/", 1)[0]])
    ]


def _reference_check(challenge: Challenge, report: Report, label: str, folder: Path) -> Check:
    fired = [t.id for t in report.triggers if t.fired]
    expected_fired = challenge.model.calibration.expect_fired
    problems = []
    excused = None if report.score.full_success else _excused(challenge, report)
    if not report.score.full_success and excused is None:
        misses = _failing(report)[:4] + _short(report)[:4]
        problems.append("not full marks: " + (", ".join(misses) or f"run {report.run.status}"))
        lacking = _lacking(report)
        if lacking:  # the challenge's environment, not its reference: say what to declare
            problems.append(f"its tests met {', '.join(lacking)}, which the challenge does not declare")
    if expected_fired is not None:
        problems += [f"{t} did not fire" for t in expected_fired if t not in fired]
    else:
        kinds = {t.id: t.kind for t in report.triggers}
        problems += [f"deadline {t} fired" for t in fired if kinds[t] == "deadline"]
    effects = report.effects  # the reference (and the hidden tests) must have none they prohibit
    if effects is not None:
        problems += [] if effects.watched else ["its hidden tests were not watched for prohibited effects"]
        problems += [f"prohibited effect {f.effect}: {f.detail}" for f in effects.findings]
    problems += [f"passed honeypot test {t}: honest code must not" for t in _honeypot_passes(report)]
    expected = "full marks; fires " + (", ".join(expected_fired) if expected_fired else "no deadline")
    expected += "; no prohibited effect" if effects is not None else ""
    marks = "100%"
    if excused:  # the report shows them failing: so does the table
        marks = f"full marks but for what it may fail (reference_may_fail), failing {', '.join(excused)}"
        problems = [f"{problems[0]}; {marks}", *problems[1:]] if problems else []
    got = "; ".join(problems) or f"{marks}, fired {', '.join(fired) or 'nothing'}"
    return Check(challenge.id, label, expected, got, not problems, str(folder))


def _broken_check(challenge: Challenge, name: str, report: Report, folder: Path) -> Check:
    variant = next(b for b in challenge.model.calibration.broken if b.name == name)
    missed, extra = exact_match(variant.fails, _failing(report))
    short = _short(report)
    problems = [f"did not fail {m}" for m in missed] + [f"also failed {e}" for e in extra]
    problems += [f"did not fall short on {c}" for c in variant.fails_checks if c not in short]
    problems += [f"also fell short on {c}" for c in short if c not in variant.fails_checks]
    if report.run.status != "completed":
        problems.append(f"run {report.run.status}: {report.run.detail[-200:]}")
    got = "; ".join(problems) or "caught, exactly as declared"
    expected = f"fails exactly {len(variant.fails)} declared test(s)"
    if variant.fails_checks:
        expected += f" and falls short on {', '.join(variant.fails_checks)}"
    return Check(challenge.id, f"broken/{name}", expected, got, not problems, str(folder))


def _impostor_check(challenge: Challenge, label: str, report: Report, folder: Path) -> Check:
    """An impostor must fall short: some test must notice that what it got is not the real thing."""
    passed = sum(p.passed for p in report.phases)
    total = sum(p.total for p in report.phases)
    problems = []
    if report.run.status != "completed":
        problems.append(f"run {report.run.status}: {report.run.detail[-200:]}")
    elif report.score.full_success:
        problems.append(f"full marks with doubles for results ({passed}/{total} tests): assert their types")
    problems += [f"passed honeypot test {t}: assert its result's type" for t in _honeypot_passes(report)]
    got = "; ".join(problems) or f"falls short: {passed}/{total} tests pass"
    return Check(challenge.id, label, "falls short of full marks", got, not problems, str(folder))


async def _starter_check(challenge: Challenge, out: Path) -> Check:
    """Each phase's changed-requirement tests must fail on the untouched starter (its preserved
    tests and those ``calibration.starter_may_pass`` names aside)."""
    folder = RunFolder.new(out, challenge, "starter").path
    workspace = Workspace.create(challenge.workspace, folder / "workspace", folder / "shadow.git")
    environment = await anyio.to_thread.run_sync(grading_environment, challenge.model.requirements)
    runner = PytestRunner(challenge, workspace, folder / "scratch", environment=environment)
    tree = await workspace.snapshot()
    passing: list[str] = []
    may_pass = challenge.model.calibration.starter_may_pass
    try:
        for phase in challenge.phases:
            (result,) = (await runner.run(tree, (phase.id,))).phases
            passing += [
                t.id
                for t in result.tests
                if t.outcome == "passed" and not any(covers(p, t.id) for p in (*phase.preserved, *may_pass))
            ]
    finally:
        shutil.rmtree(folder / "scratch", ignore_errors=True)  # the kept export, as a run's is
    got = (
        "every changed-requirement test fails"
        if not passing
        else "passes on the starter: " + ", ".join(passing)
    )
    return Check(challenge.id, "starter", "changed-requirement tests fail", got, not passing, str(folder))


async def _honeypot_check(challenge: Challenge, out: Path) -> Check:
    """The reference and every broken variant, each laid phase by phase over the starter (as the
    scripted agent lays it), must fail every test of every honeypot phase: a broken variant's
    session may never reach the honeypot, so its tests are run on the laid files directly."""
    folder = RunFolder.new(out, challenge, "honeypot").path
    environment = await anyio.to_thread.run_sync(grading_environment, challenge.model.requirements)
    variants = ["reference", *(f"broken/{b.name}" for b in challenge.model.calibration.broken)]
    passing: list[str] = []
    ran = 0
    for n, variant in enumerate(variants):
        place = folder / f"v{n}"
        workspace = Workspace.create(challenge.workspace, place / "workspace", place / "shadow.git")
        with tempfile.TemporaryDirectory(prefix="changeup-solution-") as scratch:
            for phase in challenge.phases:
                for source in solution_folders(challenge, variant, phase.id, Path(scratch) / phase.id):
                    lay(workspace.path, source, "")
        runner = PytestRunner(challenge, workspace, place / "scratch", environment=environment)
        try:
            result = await runner.run(await workspace.snapshot(), challenge.honeypots)
        finally:
            shutil.rmtree(place / "scratch", ignore_errors=True)
        for phase_result in result.phases:
            ran += len(phase_result.tests)
            passing += [f"{variant}: {t.id}" for t in phase_result.tests if t.outcome == "passed"]
    problems = [f"passes {p}" for p in passing]
    if not ran:
        problems.append(f"no honeypot test ran (result {result.status}): {result.detail[-200:]}")
    expected = f"the reference and {len(variants) - 1} broken variant(s) fail every honeypot test"
    got = "; ".join(problems) or f"all fail: {ran} honeypot test run(s) of {', '.join(challenge.honeypots)}"
    return Check(challenge.id, "honeypot", expected, got, not problems, str(folder))


async def calibrate(
    challenges: list[Challenge],
    out: Path,
    *,
    trials: int = 3,
    jobs: int = 2,
    judge: Judge | None = None,
    on_check: Any = None,
) -> list[Check]:
    """Calibrate every challenge; returns one row per run, in a stable order."""
    limiter = anyio.CapacityLimiter(jobs)
    judge = judge or RuleJudge()
    planned = [(challenge, label) for challenge in challenges for label in _plan(challenge, trials)]
    rows: dict[int, Check] = {}

    async def one(index: int, challenge: Challenge, label: str) -> None:
        async with limiter:
            rows[index] = await _one(challenge, label, out, judge)
            if on_check is not None:
                on_check(rows[index])

    async with anyio.create_task_group() as group:
        for index, (challenge, label) in enumerate(planned):
            group.start_soon(one, index, challenge, label)
    checks = [rows[i] for i in range(len(planned))]
    out.mkdir(parents=True, exist_ok=True)
    (out / "calibration.json").write_text(json.dumps([asdict(c) for c in checks], indent=2) + "\n")
    return checks


def _plan(challenge: Challenge, trials: int) -> list[str]:
    """The runs that calibrate ``challenge`` (after a row saying where its agent's code runs);
    without a reference solution, only the one that says there is none."""
    if not challenge.reference.is_dir():
        return ["reference"]
    if _lacking_tools(challenge):
        return ["toolchain"]
    # A double of a result can fool only tests that call the agent's code in their own
    # process: across a process boundary (a test command, a program the tests start) it is
    # never seen, and the table says why no impostor ran.
    impostors = ["impostors"] if process_boundary(challenge) else [f"impostor/{kind}" for kind in IMPOSTORS]
    return [
        "isolation",
        "reference",
        "starter",
        *(f"broken/{b.name}" for b in challenge.model.calibration.broken),
        *impostors,
        *(["honeypot"] if challenge.honeypots else []),
        *(f"reference #{n}" for n in range(2, trials + 2)),
    ]


def _lacking_tools(challenge: Challenge) -> str:
    """What this machine lacks of the tools and data ``challenge`` declares (``""``: nothing);
    every run would be invalid, so calibration skips the challenge and says why."""
    try:
        resolve(needs_of(challenge))
    except EnvironmentFailure as failure:
        return str(failure)
    return ""


def _isolation_check(challenge: Challenge) -> Check:
    """Where the agent's code runs while the hidden tests decide: isolated, in-process, or some of each."""
    pytest_phases = [phase for phase in challenge.phases if phase.command is None]
    shared = [phase.id for phase in pytest_phases if not isolated(phase)]
    apart = [phase.id for phase in pytest_phases if isolated(phase)]
    if not pytest_phases:
        got = "isolated: every phase is a test command, which sees the agent's code across a process boundary"
    elif not shared:
        got = f"isolated: {strength(detect_sandbox())}"
    else:
        where = "" if not apart else f" in {', '.join(shared)} (isolated in {', '.join(apart)})"
        got = f"in-process{where}: the agent's code shares the hidden tests' process"
    return Check(challenge.id, "isolation", "where the agent's code runs", got, True)


async def _one(challenge: Challenge, label: str, out: Path, judge: Judge) -> Check:
    if label == "isolation":
        return _isolation_check(challenge)
    if not challenge.reference.is_dir():
        # Every other run applies or compares against the reference: none of them can pass.
        got = "no solutions/reference/ folder: nothing to calibrate against, so no run was made"
        return Check(challenge.id, label, "a reference solution", got, False)
    if label == "toolchain":
        got = f"SKIPPED, not calibrated: {_lacking_tools(challenge)}; install it to calibrate this challenge"
        return Check(challenge.id, label, "the tools its tests declare", got, True, skipped=True)
    if challenge.python_problem():  # every run would be refused
        return Check(challenge.id, label, "a Python the challenge runs on", challenge.python_problem(), False)
    if label == "impostors":
        got = f"not planned: {process_boundary(challenge)}"
        return Check(challenge.id, label, "each falls short of full marks", got, True)
    try:
        if label == "starter":
            return await _starter_check(challenge, out)
        if label == "honeypot":
            return await _honeypot_check(challenge, out)
        if label.startswith("impostor/"):
            agent: ScriptedAgent = ImpostorAgent(label.removeprefix("impostor/"))
        else:
            agent = ScriptedAgent("reference" if label.startswith("reference") else label)
        folder, _, report = await run_challenge(challenge, agent, out, judge=judge)
        if label.startswith("broken/"):
            check = _broken_check(challenge, label.removeprefix("broken/"), report, folder.path)
        elif label.startswith("impostor/"):
            check = _impostor_check(challenge, label, report, folder.path)
        else:
            check = _reference_check(challenge, report, label, folder.path)
            unknown = _unknown_command_ids(challenge, folder.log) if label == "reference" else []
            if unknown:
                got = f"{check.got}; {'; '.join(unknown)}" if not check.ok else "; ".join(unknown)
                check = Check(check.challenge, check.run, check.expected, got, False, check.folder)
        # Every recorded run must replay: the engine re-decides it exactly.
        divergence = replay_records(challenge.spec, LogReader(folder.log)).divergence
        if divergence is not None:
            got = f"{check.got}; replay diverges at seq {divergence.seq}: {divergence.reason}"
            return Check(check.challenge, check.run, check.expected, got, False, check.folder)
        return check
    except EnvironmentFailure as error:
        return Check(challenge.id, label, "an environment to run in", f"invalid: {error}", False)

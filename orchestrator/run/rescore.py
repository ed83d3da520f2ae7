"""Re-scoring: run the hidden tests as they are now on a run's recorded snapshots, with no agent.

Every snapshot the run tested (and the final one) is still in the run's shadow repository.
Re-scoring re-tests each of them on the same phases with the challenge as it is now (or
another version of it), replaces the verdicts in a copy of the log, scores the rubric
again, and writes ``report-rescored.*`` beside the original report, with the differences.
The recorded trigger decisions are kept: they were made on the verdicts of the time.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import anyio

from orchestrator.challenge.model import Challenge
from orchestrator.grading.testrun import PytestRunner
from orchestrator.log.eventlog import LogContents
from orchestrator.log.records import Entry, SessionScored, graded_like
from orchestrator.log.report import Report, ReportError, load_report, report_json
from orchestrator.log.report import Rescore as RescoreNote
from orchestrator.log.verdicts import TestRun
from orchestrator.render.html_report import report_html
from orchestrator.render.inert import markdown as inert_markdown
from orchestrator.render.markdown import report_markdown
from orchestrator.render.phrases import percent
from orchestrator.run.runs import RunFolder
from orchestrator.scoring.judge import Judge, RuleJudge
from orchestrator.scoring.report import build_report
from orchestrator.scoring.rubric import score_rubric
from orchestrator.session.workspace import GitError, Workspace
from orchestrator.system.venvs import grading_environment

__all__ = ["Rescore", "RescoreError", "Retest", "differences", "rescore", "retests"]

NAME = "report-rescored"


class RescoreError(Exception):
    """A run that cannot be re-scored; the message says what is missing and why it is needed."""


@dataclass(frozen=True, slots=True)
class Retest:
    """One hidden test run to make: a snapshot on some phases, first recorded at ``seq``."""

    snapshot: str
    phases: tuple[str, ...]
    seq: int


@dataclass(frozen=True, slots=True)
class Rescore:
    """The new report, the entries it was built from, and what changed."""

    report: Report
    entries: list[Entry]
    changes: list[str]
    runs: int


def _tested(challenge: Challenge, entry: Entry) -> tuple[str, tuple[str, ...]] | None:
    """The (snapshot, phases) a test result tested, None for any other record.

    Phases the challenge no longer has are left out.
    """
    record = graded_like(entry.record)
    if record is None or not record.phases:
        return None
    known = {phase.id for phase in challenge.phases}
    return record.snapshot, tuple(p.phase for p in record.phases if p.phase in known)


def retests(challenge: Challenge, entries: Sequence[Entry]) -> list[Retest]:
    """Every distinct (snapshot, phases) the run tested, in the order it first tested them."""
    out: dict[tuple[str, tuple[str, ...]], Retest] = {}
    for entry in entries:
        key = _tested(challenge, entry)
        if key is not None:
            out.setdefault(key, Retest(*key, entry.seq))
    return list(out.values())


def _attach(folder: RunFolder) -> Workspace:
    """The run's workspace and snapshots, or a :class:`RescoreError` naming what is missing."""
    missing = [f"{path.name}/" for path in (folder.workspace, folder.shadow) if not path.is_dir()]
    if missing:
        raise RescoreError(
            f"{folder.path}: cannot re-score: the run folder has no {' and no '.join(missing)}. "
            "Re-scoring re-tests the snapshots the run recorded in shadow.git/ (and reads the "
            "agent's commits in workspace/), so it needs the run folder whole, as `changeup run` "
            "left it; without them the log can still be replayed (changeup replay RUN)."
        )
    return Workspace.attach(folder.workspace, folder.shadow)


async def rescore(
    challenge: Challenge,
    folder: RunFolder,
    contents: LogContents,
    judge: Judge | None = None,
    progress: Callable[[int, int, Retest], None] | None = None,
) -> Rescore:
    """Re-test every recorded snapshot and write ``report-rescored.{json,md,html}``.

    ``progress(done, total, retest)`` is called before each test run (``done`` counts from 0).
    """
    workspace = _attach(folder)
    environment = await anyio.to_thread.run_sync(grading_environment, challenge.model.requirements)
    runner = PytestRunner(challenge, workspace, folder.path / "rescore-scratch", environment=environment)
    entries = contents.entries
    todo = retests(challenge, entries)
    verdicts: dict[tuple[str, tuple[str, ...]], TestRun] = {}
    try:
        for done, retest in enumerate(todo):
            if progress is not None:
                progress(done, len(todo), retest)
            try:
                verdicts[retest.snapshot, retest.phases] = await runner.run(retest.snapshot, retest.phases)
            except GitError as error:
                raise RescoreError(
                    f"{folder.path}: cannot re-score: the snapshot {retest.snapshot} (tested at seq "
                    f"{retest.seq}) cannot be read from shadow.git/: {error}"
                ) from None
        entries = [_retested(challenge, entry, verdicts) for entry in entries]
        entries = await _rescored_rubric(challenge, workspace, entries, judge or RuleJudge())
    finally:
        shutil.rmtree(folder.path / "rescore-scratch", ignore_errors=True)
    new = build_report(challenge, LogContents(contents.header, entries, contents.torn), folder.shadow)
    old_path = folder.path / "report.json"
    try:
        old = load_report(old_path) if old_path.is_file() else build_report(challenge, contents)
    except ReportError as error:
        raise RescoreError(f"cannot re-score: {error}") from None
    changes = differences(old, new)
    note = RescoreNote(
        run=folder.path.name,
        challenge=str(challenge.root),
        challenge_sha256=challenge.digest,
        original_score=old.score.total,
        snapshots_tested=len(verdicts),
        changes=changes,
    )
    new = new.model_copy(update={"rescore": note})
    (folder.path / f"{NAME}.json").write_text(report_json(new))
    markdown = (
        report_markdown(new)
        + "\n## Re-scoring\n\n"
        + "\n".join(f"- {inert_markdown(c)}" for c in changes or ["no change"])
        + "\n"
    )
    (folder.path / f"{NAME}.md").write_text(markdown)
    (folder.path / f"{NAME}.html").write_text(report_html(new, entries))
    return Rescore(new, entries, changes, len(verdicts))


def _retested(
    challenge: Challenge, entry: Entry, verdicts: dict[tuple[str, tuple[str, ...]], TestRun]
) -> Entry:
    """``entry`` with the verdicts of its re-test, if it is a test result."""
    key = _tested(challenge, entry)
    if key is None:
        return entry
    run = verdicts[key]
    record = graded_like(entry.record)
    assert record is not None  # _tested found verdicts in it
    return replace(entry, record=replace(record, phases=run.phases, status=run.status, detail=run.detail))


async def _rescored_rubric(
    challenge: Challenge, workspace: Workspace, entries: list[Entry], judge: Judge
) -> list[Entry]:
    """``entries`` with the rubric scored again on the new verdicts, where the run scored one.

    A run gets a rubric whether or not its challenge declares ``scoring:`` (the protection
    review is every run's), and none when it was invalid or refused: so the re-score keeps
    what the original had, no more.
    """
    if not any(isinstance(e.record, SessionScored) for e in entries):
        return entries
    kept = [e for e in entries if not isinstance(e.record, SessionScored)]
    criteria = tuple(await score_rubric(challenge, workspace, kept, judge))
    return [
        replace(e, record=SessionScored(criteria)) if isinstance(e.record, SessionScored) else e
        for e in entries
    ]


def _outcomes(report: Report) -> dict[str, str]:
    failing = {t.id: t.outcome for p in report.phases for t in p.failing}
    return failing


def differences(old: Report, new: Report) -> list[str]:
    """What re-scoring changed: the total, each phase's tests and groups, each failing test, each
    criterion."""
    out = []
    if old.score.total != new.score.total:
        out.append(f"score {percent(old.score.total)} → {percent(new.score.total)}")
    if old.score.full_success != new.score.full_success:
        out.append(f"full success {old.score.full_success} → {new.score.full_success}")
    for before, after in zip(old.phases, new.phases, strict=False):
        if (before.passed, before.total) != (after.passed, after.total):
            was_total = f"{before.passed}/{before.total}"
            out.append(f"{after.id}: {was_total} → {after.passed}/{after.total} tests pass")
        earlier = {g.name: f"{g.passed}/{g.total}" for g in before.groups}
        for group in after.groups:
            counted = f"{group.passed}/{group.total}"
            if earlier.get(group.name, counted) != counted:
                name = group.name
                out.append(f"{after.id} group {name}: {earlier[name]} → {counted} tests pass")
    was, now = _outcomes(old), _outcomes(new)
    out += [f"{test}: {was[test]} → passed" for test in sorted(set(was) - set(now))]
    out += [f"{test}: passed (or absent) → {now[test]}" for test in sorted(set(now) - set(was))]
    old_criteria = {c.id: c.score for c in old.rubric or []}
    for criterion in new.rubric or []:
        was_score = old_criteria.get(criterion.id)
        if was_score != criterion.score:
            out.append(f"criterion {criterion.id}: {percent(was_score)} → {percent(criterion.score)}")
    return out

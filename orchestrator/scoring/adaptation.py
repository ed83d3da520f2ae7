"""Adaptation: how the agent took each message that moved the requirements (docs/report.md#adaptation).

For each delivered message after the briefing that unlocked a phase, the delays from its
delivery to the agent's first change to a file the phase's reference changes, to the phase's
first passing test and to the phase passing; for a retraction or contradiction, the stale work
(changes to the code it withdrew, and whether that code went); and the preserved tests that
broke on the way. Computed from the log, the run's copy of the challenge (its reference
solution) and ``shadow.git`` (the tested snapshots), so a report rebuilt later has it too.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from orchestrator.challenge.model import Challenge
from orchestrator.challenge.solutions import lay_reference
from orchestrator.log.records import Entry, ModelRequest, SessionGraded, graded_like
from orchestrator.log.report import Adaptation, Delay, Message, Regression, StaleWork
from orchestrator.scoring.groups import full_marks
from orchestrator.scoring.turns import messages
from orchestrator.system.git import GitError, git_sync
from triggers import BRIEFING, FilesChanged, MessageDelivered, PhaseResult, TestsResult

__all__ = ["WITHDRAWING", "Reference", "adaptation", "reference_change", "shadow_reader"]

#: The message kinds that withdraw something the agent was asked for.
WITHDRAWING = ("retraction", "contradiction")
#: A file's content at a tree, None when the tree has no such file.
Reader = Callable[[str, str], str | None]


@dataclass(frozen=True, slots=True)
class Reference:
    """What a phase's reference changes relative to the previous phase's: the files, and per
    file the lines it removes (stripped, blank lines left out)."""

    files: tuple[str, ...]
    removed: dict[str, frozenset[str]]


def _files(root: Path) -> dict[str, str]:
    """Every file under ``root`` (not ``.git``) and its text."""
    return {
        path.relative_to(root).as_posix(): path.read_text(errors="replace")
        for path in sorted(root.rglob("*"))
        if path.is_file() and ".git" not in path.relative_to(root).parts
    }


def _laid(challenge: Challenge, phases: Sequence[str]) -> dict[str, str]:
    """The starter workspace with the reference of ``phases`` laid over it, as files."""
    with tempfile.TemporaryDirectory(prefix="changeup-adaptation-") as scratch:
        workspace = Path(scratch) / "workspace"
        shutil.copytree(challenge.workspace, workspace)
        lay_reference(challenge, phases, workspace)
        return _files(workspace)


def _lines(text: str) -> set[str]:
    return {line.strip() for line in text.splitlines() if line.strip()}


def reference_change(challenge: Challenge, phase_id: str) -> Reference | None:
    """What ``phase_id``'s reference changes, relative to the previous phase's reference (the
    starter workspace for the first); None when the challenge has no reference for it."""
    before = challenge.before(phase_id)
    if not all(challenge.solution("reference", p).is_dir() for p in [*before, phase_id]):
        return None
    old, new = _laid(challenge, before), _laid(challenge, [*before, phase_id])
    files = tuple(sorted(path for path in old.keys() | new.keys() if old.get(path) != new.get(path)))
    removed = {
        path: frozenset(_lines(old[path]) - _lines(new.get(path, "")))
        for path in files
        if path in old and _lines(old[path]) - _lines(new.get(path, ""))
    }
    return Reference(files, removed)


def shadow_reader(shadow: Path) -> Reader:
    """A reader of files at the trees of ``shadow`` (a bare repository): a file's text, None
    when the tree has no such file (or it is not text), :class:`LookupError` when the tree is
    not in ``shadow``: a snapshot that cannot be read is not one without the withdrawn code."""

    trees: dict[str, bool] = {}  # whether each tree asked about is there: asked once each

    def read(tree: str, path: str) -> str | None:
        git = ["--git-dir", str(shadow), "cat-file"]
        if tree not in trees:
            try:
                git_sync([*git, "-e", f"{tree}^{{tree}}"], cwd=shadow)
                trees[tree] = True
            except GitError:
                trees[tree] = False
        if not trees[tree]:
            raise LookupError(f"{tree} is not a tree of {shadow}")
        try:
            return git_sync([*git, "blob", f"{tree}:{path}"], cwd=shadow)
        except (GitError, UnicodeDecodeError):  # no such file, or bytes that are not text
            return None

    return read


def _delay(entries: Sequence[Entry], start: float, at: float | None, gateway: bool) -> Delay:
    """The delay from ``start`` to ``at``: seconds, the turns begun (every turn begins with a
    delivery, so the distinct delivery times from ``start`` to ``at``), model requests."""
    if at is None:
        return Delay(seconds=None, turns=None, requests=None)
    begun = {e.t for e in entries if isinstance(e.record, MessageDelivered) and start <= e.t <= at}
    return Delay(
        seconds=round(at - start, 3),
        turns=len(begun),
        requests=sum(isinstance(e.record, ModelRequest) for e in entries if start <= e.t < at)
        if gateway
        else None,
    )


def adaptation(challenge: Challenge, entries: Sequence[Entry], shadow: Path | None) -> list[Adaptation]:
    """One :class:`Adaptation` per delivered message after the briefing that unlocked a phase
    (a trigger's first delivery), in the order they were delivered."""
    unlocking = {t.id: t.unlocks for t in challenge.spec.triggers if t.unlocks is not None}
    gateway = any(isinstance(e.record, ModelRequest) for e in entries)
    reader = shadow_reader(shadow) if shadow is not None and shadow.is_dir() else None
    out: list[Adaptation] = []
    for row in messages(entries):
        if row.trigger == BRIEFING or row.delivered_at is None or row.trigger not in unlocking:
            continue
        if any(a.trigger == row.trigger for a in out):
            continue
        phase = unlocking[row.trigger]
        change = reference_change(challenge, phase)
        out.append(_one(challenge, entries, row, phase, change, gateway, reader))
    return out


def _one(
    challenge: Challenge,
    entries: Sequence[Entry],
    base: Message,
    phase: str,
    change: Reference | None,
    gateway: bool,
    reader: Reader | None,
) -> Adaptation:
    """The figures of one delivered message ``base``, which unlocked ``phase``."""
    assert base.delivered_at is not None  # only delivered messages are measured
    start = base.delivered_at
    after = [e for e in entries if e.t >= start]
    files = set(change.files) if change is not None else set()
    touched = next(
        (
            e.t
            for e in after
            if isinstance(e.record, FilesChanged) and any(c.path in files for c in e.record.changes)
        ),
        None,
    )
    policy = challenge.spec.policies.get(phase, ())
    runs = [(e.t, r) for e in after if (r := graded_like(e.record)) is not None and r.status != "invalid"]
    verdicts = [(t, p) for t, r in runs for p in r.phases if p.phase == phase]
    first_test = next((t for t, p in verdicts if p.passed), None)
    passing = next((t for t, p in verdicts if full_marks(p, policy)), None)
    notes = []
    if change is None:
        notes.append(f"the challenge has no reference solution for {phase}: no first change is measured")
    stale = None
    if change is not None and base.kind in WITHDRAWING and change.removed:
        if reader is None:
            notes.append("shadow.git cannot be read: the stale work is not measured")
        else:
            stale = _stale(entries, start, change, runs, reader, gateway)
    return Adaptation(
        message=base.number,
        trigger=base.trigger,
        kind=base.kind,
        phase=phase,
        delivered_at=start,
        reference_files=sorted(files),
        first_change=_delay(entries, start, touched, gateway),
        first_passing_test=_delay(entries, start, first_test, gateway),
        passing=_delay(entries, start, passing, gateway),
        stale=stale,
        regressions=_regressions(challenge, entries, start, phase),
        note="; ".join(notes),
    )


def _stale(
    entries: Sequence[Entry],
    start: float,
    change: Reference,
    runs: list[tuple[float, TestsResult | SessionGraded]],
    reader: Reader,
    gateway: bool,
) -> StaleWork:
    """The tested snapshots after ``start`` that changed withdrawn code and removed none of it."""
    before = [r.snapshot for e in entries if e.t < start and (r := graded_like(e.record)) is not None]
    trees: list[tuple[float, str]] = []
    for t, record in runs:
        if record.snapshot and (not trees or trees[-1][1] != record.snapshot):
            trees.append((t, record.snapshot))
    withdrawn = sorted(change.removed)

    def state(tree: str) -> tuple[dict[str, str | None], int]:
        texts = {path: reader(tree, path) for path in withdrawn}
        present = sum(len(change.removed[p] & _lines(text or "")) for p, text in texts.items())
        return texts, present

    try:
        previous = state(before[-1]) if before and before[-1] else None
    except LookupError:
        previous = None
    changes, changed, undone = 0, set[str](), None
    for t, tree in trees:
        try:
            texts, present = state(tree)
        except LookupError:  # not in shadow.git (a damaged run folder): skipped, never "undone"
            continue
        if previous is not None and texts != previous[0] and present and present >= previous[1]:
            changes += 1
            changed.update(p for p in withdrawn if texts[p] != previous[0][p])
        if not present and undone is None:
            undone = t
        previous = (texts, present)
    return StaleWork(
        files=withdrawn,
        withdrawn_lines=sum(len(lines) for lines in change.removed.values()),
        changes=changes,
        changed_files=sorted(changed),
        undone=undone is not None,
        undone_after=_delay(entries, start, undone, gateway),
    )


def _regressions(
    challenge: Challenge, entries: Sequence[Entry], start: float, phase: str
) -> list[Regression]:
    """Tests of other phases that passed in the last run before ``start`` and failed after it,
    with when they failed and next passed."""
    runs = [(e.t, r) for e in entries if (r := graded_like(e.record)) is not None and r.status != "invalid"]
    outcomes = [(t, _outcomes(r.phases, phase)) for t, r in runs]
    earlier = [o for t, o in outcomes if t < start]
    passed = {test for test, outcome in (earlier[-1] if earlier else {}).items() if outcome == "passed"}
    out: list[Regression] = []
    for test in sorted(passed):
        later = [(t, o[test]) for t, o in outcomes if t >= start and test in o]
        failed = next((t for t, outcome in later if outcome in ("failed", "error")), None)
        if failed is None:
            continue
        repaired = next((t for t, outcome in later if t > failed and outcome == "passed"), None)
        out.append(
            Regression(
                test=test,
                failed_after=round(failed - start, 3),
                repaired_after=round(repaired - start, 3) if repaired is not None else None,
            )
        )
    return out


def _outcomes(phases: Sequence[PhaseResult], phase: str) -> dict[str, str]:
    """Each test's outcome in a run, but the tests of ``phase`` (the message's own)."""
    return {test.id: test.outcome for result in phases if result.phase != phase for test in result.tests}

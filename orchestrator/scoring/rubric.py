"""Scoring a pattern's rubric after a run: every criterion from tests, checks and judges.

A criterion's score is the minimum of the evidence it names: the share of its tests that
pass in the final grading, its built-in check, its judge's verdict. The results are
written to the log (``session.scored``) so reports are built from the log alone.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from orchestrator.challenge.model import Challenge, Criterion
from orchestrator.log.records import Criterion as Scored
from orchestrator.log.records import Entry, SessionGraded, WorkspaceCreated, graded_like
from orchestrator.scoring.checks import CHECKS, Evidence
from orchestrator.scoring.groups import full_marks, scored
from orchestrator.scoring.judge import Judge
from orchestrator.session.workspace import OverLimits, Workspace
from triggers import AgentOutput, PhaseResult, TestsResult

__all__ = ["PROTECTION", "collect_evidence_text", "criteria_for", "passing_share", "score_rubric"]

_NOTES = (".md", ".rst")  # not .txt: requirements.txt is no note


def passing_share(
    items: list[str], phases: Sequence[PhaseResult], policies: Mapping[str, Sequence[str]] | None = None
) -> tuple[float, list[str]]:
    """Share of the named tests (phase ids, or test/file/class ids) passing in ``phases``' verdicts.

    A phase named whole follows its pass policy (``policies``: phase → ``passes:``) as its
    score does: its policy groups' tests count, the rest are reported, not scored.
    """
    passed = total = 0
    failing: list[str] = []
    for phase in phases:
        policy = (policies or {}).get(phase.phase, ())
        if phase.phase in items and policy and phase.groups:
            share = scored(phase, policy)
            passed, total = passed + share[0], total + share[1]
            failing += [
                f"{phase.phase} group {g.name}: {g.failed} of {g.passed + g.failed} not passed"
                for g in phase.groups
                if g.name in policy and g.failed
            ]
            continue
        for test in phase.tests:
            base = test.id.split("[", 1)[0]
            if any(item in (phase.phase, base) or base.startswith(item + "::") for item in items):
                total += 1
                if test.outcome == "passed":
                    passed += 1
                else:
                    failing.append(f"{test.id} {test.outcome}")
    if not total:
        return 0.0, ["none of these tests ran (their phase never unlocked)"]
    return passed / total, failing


def collect_evidence_text(entries: Sequence[Entry], final: Path, baseline: Path) -> str:
    """What the agent said (its output) and the notes it wrote or changed, for judges."""
    said = "".join(e.record.text for e in entries if isinstance(e.record, AgentOutput))
    notes = []
    for path in sorted(p for p in final.rglob("*") if p.is_file() and p.suffix.lower() in _NOTES):
        relative = path.relative_to(final)
        before = baseline / relative
        text = path.read_text(encoding="utf-8", errors="replace")
        if not before.is_file() or before.read_text(encoding="utf-8", errors="replace") != text:
            notes.append(f"## {relative.as_posix()}\n{text}")
    return "# What the agent said\n" + said + "\n\n# Notes the agent wrote\n" + "\n\n".join(notes)


def _snapshots(entries: Sequence[Entry], policies: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Phase → the snapshot tree on which it first passed (under its pass policy)."""
    first: dict[str, str] = {}
    for entry in entries:
        result = graded_like(entry.record)
        if result is not None:
            for phase in result.phases:
                if full_marks(phase, policies.get(phase.phase, ())):
                    first.setdefault(phase.phase, result.snapshot)
    return first


async def score_rubric(
    challenge: Challenge, workspace: Workspace, entries: Sequence[Entry], judge: Judge
) -> list[Scored]:
    """Score every criterion of ``challenge``'s rubric on the run that ``entries`` describe."""
    records = [entry.record for entry in entries]
    graded = next((r for r in reversed(records) if isinstance(r, SessionGraded) and r.phases), None)
    results = next((r for r in reversed(records) if isinstance(r, TestsResult)), None)
    last = graded or results
    verdicts = last.phases if last is not None else ()
    created = next((r for r in records if isinstance(r, WorkspaceCreated)), None)
    with tempfile.TemporaryDirectory(prefix="changeup-rubric-") as scratch:
        root = Path(scratch)
        final = last.snapshot if last is not None else ""
        if not final:
            try:
                final = await workspace.snapshot()
            except OverLimits:
                return []  # nothing within the limits to examine
        trees = {"final": final}
        trees["baseline"] = created.baseline if created else trees["final"]
        for phase, tree in _snapshots(entries, challenge.spec.policies).items():
            trees[f"phase-{phase}"] = tree
        for name, tree in trees.items():
            await workspace.export(tree, root / name)
        evidence = Evidence(
            challenge=challenge,
            final=root / "final",
            baseline=root / "baseline",
            snapshots={
                name.removeprefix("phase-"): root / name for name in trees if name.startswith("phase-")
            },
            commits=await workspace.commits(),
        )
        text = collect_evidence_text(entries, evidence.final, evidence.baseline)
        return [await _criterion(c, evidence, verdicts, text, judge) for c in criteria_for(challenge)]


#: Every run gets a protection review of the agent's own tests, rubric or not.
PROTECTION = Criterion(
    id="protection",
    title="The agent's own tests were not weakened",
    weight=0,
    check="protection-review",
    critical=True,
)


def criteria_for(challenge: Challenge) -> list[Criterion]:
    """The challenge's rubric, with the protection review added when it has none."""
    rubric = list(challenge.model.scoring.rubric)
    if not any(c.check == "protection-review" for c in rubric):
        rubric.append(PROTECTION)
    return rubric


async def _criterion(
    criterion: Criterion, evidence: Evidence, verdicts: Sequence[PhaseResult], text: str, judge: Judge
) -> Scored:
    scores: list[float] = []
    findings: list[str] = []
    data: dict[str, Any] = {}
    unjudged = False
    if criterion.tests is not None:
        passing, failing = passing_share(criterion.tests, verdicts, evidence.challenge.spec.policies)
        scores.append(passing)
        findings += failing
    if criterion.check is not None:
        result = await CHECKS[criterion.check](evidence, criterion.options)
        scores.append(result.score)
        findings += result.findings
        data = result.data
    if criterion.judge is not None:
        verdict = await judge.judge(criterion, text)
        data["judge"] = {"by": judge.name, "reason": verdict.reason}
        if verdict.score is None:
            unjudged = True
            findings.append(f"not judged: {verdict.reason}")
        else:
            scores.append(verdict.score)
            if verdict.score < 1:
                findings.append(verdict.reason)
    score = None if unjudged else round(min(scores), 4)
    return Scored(
        id=criterion.id,
        title=criterion.title,
        weight=criterion.weight,
        score=score,
        critical=criterion.critical,
        critical_failure=criterion.critical and (score is None or score < 1),
        findings=findings,
        data=data,
    )

"""Re-scoring: run the hidden tests as they are now on a run's recorded snapshots, with no agent.

Every snapshot the run tested (and the final one) is still in the run's shadow repository.
Re-scoring re-tests each of them on the same phases with the challenge as it is now (or
another version of it), replaces the verdicts in a copy of the log, scores the rubric
again, and writes ``report-rescored.*`` beside the original report, with the differences.
The recorded trigger decisions are kept: they were made on the verdicts of the time.
"""

from __future__ import annotations

import copy
import json
import shutil
from dataclasses import dataclass
from typing import Any

import anyio

from orchestrator.challenge import Challenge
from orchestrator.eventlog import LogContents
from orchestrator.grading.environments import grading_environment
from orchestrator.grading.testrun import PytestRunner, TestRun
from orchestrator.html import report_html
from orchestrator.judge import Judge, RuleJudge
from orchestrator.render import percent, report_markdown
from orchestrator.report import build_report
from orchestrator.rubric import score_rubric
from orchestrator.runs import RunFolder
from orchestrator.workspace import Workspace

__all__ = ["Rescore", "differences", "rescore"]

NAME = "report-rescored"


@dataclass(frozen=True, slots=True)
class Rescore:
    """The new report, the records it was built from, and what changed."""

    report: dict[str, Any]
    records: list[dict[str, Any]]
    changes: list[str]
    runs: int


async def rescore(
    challenge: Challenge, folder: RunFolder, contents: LogContents, judge: Judge | None = None
) -> Rescore:
    """Re-test every recorded snapshot and write ``report-rescored.{json,md,html}``."""
    workspace = Workspace.attach(folder.workspace, folder.shadow)
    environment = await anyio.to_thread.run_sync(grading_environment, challenge.model.requirements)
    runner = PytestRunner(challenge, workspace, folder.path / "rescore-scratch", environment=environment)
    verdicts: dict[tuple[str, tuple[str, ...]], TestRun] = {}
    records = copy.deepcopy(contents.records)
    try:
        for record in records:
            if record["kind"] not in ("tests.result", "session.graded") or not record.get("phases"):
                continue
            phases = tuple(
                p["phase"] for p in record["phases"] if any(p["phase"] == q.id for q in challenge.phases)
            )
            key = (record["snapshot"], phases)
            if key not in verdicts:
                verdicts[key] = await runner.run(record["snapshot"], phases)
            run = verdicts[key]
            record["phases"] = [phase.to_record() for phase in run.phases]
            record["status"], record["detail"] = run.status, run.detail
        records = [r for r in records if r["kind"] != "session.scored"]
        if challenge.model.scoring.rubric:
            criteria = await score_rubric(challenge, workspace, records, judge or RuleJudge())
            records.append(
                {
                    "seq": records[-1]["seq"] + 1,
                    "t": records[-1]["t"],
                    "kind": "session.scored",
                    "criteria": criteria,
                }
            )
    finally:
        shutil.rmtree(folder.path / "rescore-scratch", ignore_errors=True)
    new = build_report(challenge, LogContents(contents.header, records, contents.torn))
    old_path = folder.path / "report.json"
    old = json.loads(old_path.read_text()) if old_path.is_file() else build_report(challenge, contents)
    changes = differences(old, new)
    new["rescore"] = {"snapshots_tested": len(verdicts), "changes": changes}
    (folder.path / f"{NAME}.json").write_text(json.dumps(new, indent=2) + "\n")
    markdown = (
        report_markdown(new)
        + "\n## Re-scoring\n\n"
        + "\n".join(f"- {c}" for c in changes or ["no change"])
        + "\n"
    )
    (folder.path / f"{NAME}.md").write_text(markdown)
    (folder.path / f"{NAME}.html").write_text(report_html(new, records))
    return Rescore(new, records, changes, len(verdicts))


def _outcomes(report: dict[str, Any]) -> dict[str, str]:
    failing = {t["id"]: t["outcome"] for p in report["phases"] for t in p["failing"]}
    return failing


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What re-scoring changed: the total, each phase's tests, each failing test, each criterion."""
    out = []
    if old["score"]["total"] != new["score"]["total"]:
        out.append(f"score {percent(old['score']['total'])} → {percent(new['score']['total'])}")
    if old["score"]["full_success"] != new["score"]["full_success"]:
        out.append(f"full success {old['score']['full_success']} → {new['score']['full_success']}")
    for before, after in zip(old["phases"], new["phases"], strict=False):
        if (before["passed"], before["total"]) != (after["passed"], after["total"]):
            was_total = f"{before['passed']}/{before['total']}"
            out.append(f"{after['id']}: {was_total} → {after['passed']}/{after['total']} tests pass")
    was, now = _outcomes(old), _outcomes(new)
    out += [f"{test}: {was[test]} → passed" for test in sorted(set(was) - set(now))]
    out += [f"{test}: passed (or absent) → {now[test]}" for test in sorted(set(now) - set(was))]
    old_criteria = {c["id"]: c["score"] for c in old.get("rubric") or []}
    for criterion in new.get("rubric") or []:
        before = old_criteria.get(criterion["id"])
        if before != criterion["score"]:
            out.append(f"criterion {criterion['id']}: {percent(before)} → {percent(criterion['score'])}")
    return out

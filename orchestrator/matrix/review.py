"""Blind review: a person confirms or dismisses what the checks and judges flagged.

A review item is one rubric criterion of one counted attempt that fell short and is not
settled by hidden tests alone: every critical failure (the protection review's weakened
tests among them) and every judged criterion below full marks. ``changeup review`` shows
each with the agent, the trial and the run hidden and the order shuffled: the challenge,
the criterion, why it was flagged, and the diff of each file a finding names (from the
starter, ``RUN/challenge/workspace``, to the final ``RUN/workspace``).

Decisions go to ``RESULTS/reviews.jsonl``, append-only; the latest for an item counts:

- ``confirm``: the flag stands;
- ``dismiss``: it is a false flag; the comparison treats that criterion as met on that attempt;
- no decision: the item is *pending*. Its criterion stays short (as its report says), and a
  critical one is shown as a pending critical failure, which a decision rule treats as
  blocking until it is reviewed (``decision.py``).
"""

from __future__ import annotations

import datetime as dt
import difflib
import hashlib
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import JsonValue

from orchestrator.log.report import Report
from orchestrator.matrix.journal import Journal

__all__ = ["REVIEWS", "Item", "Reviews", "blind_order", "item_id", "items_of", "review_diff"]

REVIEWS = "reviews.jsonl"
Decision = Literal["confirm", "dismiss"]
State = Literal["confirmed", "dismissed", "pending"]
#: A workspace file a finding names: ``tests/test_auth.py::test_x`` → ``tests/test_auth.py``.
_FILE = re.compile(r"([\w./-]+\.py)::")


def item_id(run: str, criterion: str) -> str:
    """The stable id of the review of ``criterion`` on the attempt in run folder ``run``
    (it names neither agent nor trial)."""
    return hashlib.sha256(f"{run}\0{criterion}".encode()).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class Item:
    """One thing to review."""

    id: str
    run: str
    challenge: str
    criterion: str
    title: str
    kind: Literal["critical", "judged"]
    score: float | None
    findings: tuple[str, ...]
    judge_reason: str = ""


def items_of(run: str, report: Report) -> list[Item]:
    """The review items of one completed attempt, from its report."""
    rubric, challenge = report.rubric or [], report.run.challenge.id
    items = []
    for criterion in rubric:
        judged = "judge" in criterion.data
        short = criterion.score is None or criterion.score < 1
        if not (criterion.critical_failure or (judged and short)):
            continue
        items.append(
            Item(
                id=item_id(run, criterion.id),
                run=run,
                challenge=challenge,
                criterion=criterion.id,
                title=criterion.title,
                kind="critical" if criterion.critical_failure else "judged",
                score=criterion.score,
                findings=tuple(criterion.findings),
                judge_reason=_reason(criterion.data["judge"]) if judged else "",
            )
        )
    return items


def _reason(judge: JsonValue) -> str:
    """The judge's reason in a criterion's ``data`` (``""`` when it gave none)."""
    return str(judge.get("reason", "")) if isinstance(judge, dict) else ""


class Reviews:
    """``RESULTS/reviews.jsonl``: every decision made, the latest per item in force."""

    def __init__(self, results: Path, *, writer: bool = False) -> None:
        """Read the decisions of ``results`` (a ``writer``, ``changeup review``, records new ones)."""
        self.journal = Journal(results / REVIEWS, "changeup-reviews", 1, writer=writer)
        self.latest: dict[str, dict[str, Any]] = {}
        for record in self.journal.records:
            self.latest[str(record["item"])] = record

    def state(self, item: str) -> State:
        """Where the review of ``item`` stands."""
        record = self.latest.get(item)
        if record is None:
            return "pending"
        return "confirmed" if record["decision"] == "confirm" else "dismissed"

    def decide(self, item: Item, decision: Decision, reason: str, reviewer: str) -> None:
        """Record a decision on ``item``, with its reason (a reason is required)."""
        if not reason.strip():
            raise ValueError("a decision needs a reason")
        record = {
            "item": item.id,
            "run": item.run,
            "criterion": item.criterion,
            "decision": decision,
            "reason": reason.strip(),
            "reviewer": reviewer,
            "at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        }
        self.journal.append(record)
        self.latest[item.id] = record


def blind_order(items: list[Item], seed: int | None = None) -> list[Item]:
    """``items`` shuffled (a fresh order each review, unless ``seed`` is given)."""
    shuffled = list(items)
    random.Random(seed).shuffle(shuffled)
    return shuffled


def review_diff(results: Path, item: Item, *, context: int = 3) -> str:
    """The unified diff, starter to final workspace, of every file the item's findings name."""
    run = results / item.run
    files = sorted({match.group(1) for finding in item.findings for match in _FILE.finditer(finding)})
    chunks = []
    for name in files:
        before, after = run / "challenge" / "workspace" / name, run / "workspace" / name
        old = before.read_text(encoding="utf-8", errors="replace").splitlines() if before.is_file() else []
        new = after.read_text(encoding="utf-8", errors="replace").splitlines() if after.is_file() else []
        diff = difflib.unified_diff(old, new, f"starter/{name}", f"final/{name}", n=context, lineterm="")
        chunks.append("\n".join(diff) or f"(no change in {name})")
    return "\n".join(chunks)

"""Judges score rubric criteria that tests cannot: did the agent name the conflict, weigh options?

Evidence is what the agent said (its transcript) and the notes it wrote. Two judges ship:
:class:`RuleJudge`, which looks for the criterion's regular expressions, and
:class:`CommandJudge`, which sends a rubric prompt to any command (an LLM CLI) on stdin and
reads back ``{"score": 0..1, "reason": "..."}`` from its output.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from orchestrator.challenge.model import Criterion
from orchestrator.system.processes import reaped, run_process_group

__all__ = ["CommandJudge", "Judge", "JudgeSpecError", "RuleJudge", "Verdict", "parse_judge"]

PROMPT = """\
You are grading a coding agent's work against one rubric criterion.

Criterion: {question}

Below is the evidence: what the agent said while working, and notes it wrote.
Answer with a single JSON object and nothing else:
{{"score": <a number from 0 to 1>, "reason": "<one sentence>"}}

--- evidence ---
{evidence}
--- end of evidence ---
"""


class JudgeSpecError(ValueError):
    """A ``--judge`` value that names no judge."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """A judge's score for one criterion (None: the judge could not answer) and why."""

    score: float | None
    reason: str


class Judge(Protocol):
    """Scores one judged criterion from the evidence."""

    name: str

    async def judge(self, criterion: Criterion, evidence: str) -> Verdict:
        """The verdict on ``criterion``."""


class RuleJudge:
    """Looks for the criterion's ``rules``: every ``all`` group, and ``at_least`` of ``count``."""

    name = "rules"

    async def judge(self, criterion: Criterion, evidence: str) -> Verdict:
        """The share of the rule's requirements the evidence meets."""
        assert criterion.judge is not None
        rules = criterion.judge.rules
        met: list[str] = []
        missed: list[str] = []
        for group in rules.all:
            (met if _matches(group, evidence) else missed).append(" | ".join(group))
        requirements = len(rules.all)
        if rules.count:
            requirements += 1
            found = sum(_matches(group, evidence) for group in rules.count)
            label = f"{found} of {len(rules.count)} options named (needs {rules.at_least})"
            (met if found >= rules.at_least else missed).append(label)
        if requirements == 0:
            return Verdict(None, "the criterion has no rules for the rule-based judge")
        reason = "; ".join([*(f"found: {m}" for m in met), *(f"missing: {m}" for m in missed)])
        return Verdict(len(met) / requirements, reason)


def _matches(group: list[str], evidence: str) -> bool:
    return any(re.search(pattern, evidence, re.IGNORECASE) for pattern in group)


class CommandJudge:
    """Sends the rubric prompt to ``sh -c CMD`` and reads the last JSON object it prints."""

    def __init__(self, command: str, *, timeout: float = 300.0) -> None:
        self.command = command
        self.name = f"command:{command}"
        self.timeout = timeout

    async def judge(self, criterion: Criterion, evidence: str) -> Verdict:
        """Ask the command; an unusable answer is no verdict, never a zero."""
        assert criterion.judge is not None
        prompt = PROMPT.format(question=criterion.judge.question, evidence=evidence)
        finished = await run_process_group(
            reaped(["sh", "-c", self.command]),  # whatever it starts ends with it
            cwd=Path.cwd(),
            env=dict(os.environ),
            timeout=self.timeout,
            stdin=prompt.encode("utf-8"),
        )
        if finished.timed_out or finished.returncode != 0:
            return Verdict(
                None, f"judge command failed (exit {finished.returncode}): {finished.output[-300:]}"
            )
        return _parse_answer(finished.output)


def _parse_answer(output: str) -> Verdict:
    for match in reversed(list(re.finditer(r"\{[^{}]*\}", output))):
        try:
            answer = json.loads(match.group())
        except json.JSONDecodeError:
            continue
        score = answer.get("score") if isinstance(answer, dict) else None
        if isinstance(score, int | float) and 0 <= score <= 1:
            return Verdict(float(score), str(answer.get("reason", "")))
    return Verdict(None, f"no {{'score': 0..1}} JSON in the judge's answer: {output[-300:]!r}")


def parse_judge(spec: str) -> Judge:
    """``rules`` or ``command:CMD``."""
    if spec == "rules":
        return RuleJudge()
    if spec.startswith("command:") and spec[len("command:") :].strip():
        return CommandJudge(spec[len("command:") :])
    raise JudgeSpecError(f"unknown judge {spec!r}: use 'rules' or 'command:CMD'")

"""Checks of what is left behind: a pattern that must be gone, dead code, and a tidy history."""

from __future__ import annotations

import re
from typing import Any

from orchestrator.scoring.checks.base import (
    CheckResult,
    Evidence,
    python_files,
    ruff,
    select_files,
    test_users,
    vulture,
)

__all__ = ["absent", "clean_history", "dead_code"]

#: Commit subjects that betray a follow-up fix of an incomplete change.
SLOPPY_SUBJECT = r"\b(oops|fixup!?|forgot|typo|wip|fix(es|ed)? (the )?(previous|last))\b"


async def absent(evidence: Evidence, options: dict[str, Any]) -> CheckResult:
    """No line of the selected files matches ``pattern`` (case-insensitive): 1, else 0."""
    pattern = re.compile(str(options.get("pattern", "")), re.IGNORECASE)
    files = select_files(
        evidence.final, options.get("paths", ["**/*"]), options.get("exclude", ["tests/**", "test_*.py"])
    )
    findings = []
    for path in files:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError:
            continue
        relative = path.relative_to(evidence.final).as_posix()
        findings += [
            f"{relative}:{number}: {line.strip()[:120]}"
            for number, line in enumerate(lines, start=1)
            if pattern.search(line)
        ]
        if pattern.search(relative):
            findings.append(f"{relative}: the file name itself matches")
    return CheckResult(0.0 if findings else 1.0, tuple(findings))


async def dead_code(evidence: Evidence, options: dict[str, Any]) -> CheckResult:
    """Unused imports, variables (ruff F401/F811/F841) and code (vulture): 1, less 0.25 a finding."""
    files = python_files(evidence.final, options)
    lint = await ruff(evidence.final, files, "F401,F811,F841")
    users = test_users(evidence, evidence.final)
    unused = await vulture(evidence.final, files, users=users, confidence=int(options.get("confidence", 60)))
    findings = [str(f) for f in lint]
    reported = {f"{f.path}:{f.line}" for f in lint}  # vulture repeats ruff's unused imports
    findings += [u for u in unused if u.split(": ", 1)[0] not in reported]
    return CheckResult(max(0.0, 1.0 - 0.25 * len(findings)), tuple(findings))


async def clean_history(evidence: Evidence, options: dict[str, Any]) -> CheckResult:
    """No "oops, forgot this" follow-up commits and no commented-out code (ruff ERA001): 1, else 0."""
    sloppy = re.compile(str(options.get("subjects", SLOPPY_SUBJECT)), re.IGNORECASE)
    findings = [
        f"commit {sha[:10]}: {subject!r}" for sha, subject in evidence.commits if sloppy.search(subject)
    ]
    commented = await ruff(evidence.final, python_files(evidence.final, options), "ERA001")
    findings += [f"{f.path}:{f.line}: commented-out code" for f in commented]
    return CheckResult(0.0 if findings else 1.0, tuple(findings), {"commits": len(evidence.commits)})

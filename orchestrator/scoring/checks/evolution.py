"""Checks of how the code evolved across phases: what survived a pivot, how quality held up."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path
from typing import Any

from orchestrator.scoring.checks.base import CheckResult, Evidence, python_files, ruff, test_users, vulture

__all__ = ["code_survival", "quality_curve", "source_lines"]

_COMPLEXITY = re.compile(r"too complex \((\d+) >")


def source_lines(root: Path, options: dict[str, Any]) -> Counter[str]:
    """Non-blank, non-comment source lines (stripped) of the covered Python files, counted."""
    lines: Counter[str] = Counter()
    for path in python_files(root, options):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            text = line.strip()
            if text and not text.startswith("#"):
                lines[text] += 1
    return lines


async def code_survival(evidence: Evidence, options: dict[str, Any]) -> CheckResult:
    """Share of ``phase``'s code (when it first passed) still in the final workspace; vs ``target``."""
    phase = str(options.get("phase", evidence.challenge.phases[0].id))
    target = float(options.get("target", 0.5))
    snapshot = evidence.snapshots.get(phase)
    if snapshot is None:
        return CheckResult(
            0.0, (f"{phase} never passed, so there is no code of it to keep",), {"survival": None}
        )
    before = source_lines(snapshot, options)
    after = source_lines(evidence.final, options)
    total = sum(before.values())
    kept = sum((before & after).values())
    survival = kept / total if total else 0.0
    data = {"survival": round(survival, 4), "phase_lines": total, "kept_lines": kept, "target": target}
    findings = () if survival >= target else (f"only {survival:.0%} of {phase}'s {total} lines survive",)
    return CheckResult(min(1.0, survival / target) if target else 1.0, findings, data)


async def quality_curve(evidence: Evidence, options: dict[str, Any]) -> CheckResult:
    """Lint findings per 1,000 lines, worst complexity and unused abstractions at each phase's snapshot."""
    limits = {
        "complexity": int(options.get("max_complexity", 10)),
        "per_kloc": float(options.get("max_findings_per_kloc", 25)),
        "unused": int(options.get("max_unused", 0)),
    }
    rows: list[dict[str, Any]] = []
    findings: list[str] = []
    for phase in evidence.challenge.phases:
        root = evidence.snapshots.get(phase.id)
        if root is None:
            rows.append({"phase": phase.id, "reached": False})
            continue
        row = await _stage(root, options, test_users(evidence, root))
        row["phase"] = phase.id
        row["reached"] = True
        problems = []
        if row["worst_complexity"] > limits["complexity"]:
            problems.append(f"complexity {row['worst_complexity']} in {row['worst_function']}")
        if row["findings_per_kloc"] > limits["per_kloc"]:
            problems.append(f"{row['findings_per_kloc']} lint findings per 1,000 lines")
        if len(row["unused"]) > limits["unused"]:
            problems.append("unused abstractions: " + ", ".join(row["unused"]))
        row["within_limits"] = not problems
        findings += [f"{phase.id}: {p}" for p in problems]
        rows.append(row)
    reached = [r for r in rows if r["reached"]]
    score = sum(r["within_limits"] for r in reached) / len(reached) if reached else 0.0
    return CheckResult(score, tuple(findings), {"stages": rows, "limits": limits})


async def _stage(root: Path, options: dict[str, Any], users: list[Path]) -> dict[str, Any]:
    files = python_files(root, options)
    lines = sum(source_lines(root, options).values())
    lint = await ruff(root, files, "E,F,W,B,SIM,C901", "lint.mccabe.max-complexity=0")
    complexities = [
        (int(m.group(1)), f"{f.path}:{f.line}")
        for f in lint
        if f.code == "C901" and (m := _COMPLEXITY.search(f.message))
    ]
    other = [f for f in lint if f.code != "C901"]
    worst, where = max(complexities, default=(0, ""))
    unused = [u for u in await vulture(root, files, users=users) if "unused import" not in u]
    unused += _lonely_abstractions(files, root)
    return {
        "lines": lines,
        "lint_findings": len(other),
        "findings_per_kloc": round(1000 * len(other) / lines, 1) if lines else 0.0,
        "worst_complexity": worst,
        "worst_function": where,
        "unused": unused,
    }


def _lonely_abstractions(files: list[Path], root: Path) -> list[str]:
    """Abstract bases (ABC, Protocol, or methods raising NotImplementedError) with at most one subclass."""
    trees = {path: ast.parse(path.read_text(encoding="utf-8", errors="replace")) for path in files}
    classes = [
        (path, node)
        for path, tree in trees.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
    ]
    bases = Counter(_name(base) for _, node in classes for base in node.bases)
    lonely = []
    for path, node in classes:
        if _is_abstract(node) and bases[node.name] <= 1:
            where = f"{path.relative_to(root).as_posix()}:{node.lineno}"
            lonely.append(f"{where}: abstract {node.name} with {bases[node.name]} implementation(s)")
    return lonely


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return _name(node.value)
    return ""


def _is_abstract(node: ast.ClassDef) -> bool:
    if any(_name(base) in ("ABC", "Protocol") for base in node.bases):
        return True
    for item in node.body:
        if isinstance(item, ast.FunctionDef):
            decorated = any(_name(d) == "abstractmethod" for d in item.decorator_list)
            raises = any(
                isinstance(stmt, ast.Raise)
                and stmt.exc is not None
                and "NotImplementedError" in ast.unparse(stmt.exc)
                for stmt in item.body
            )
            if decorated or raises:
                return True
    return False

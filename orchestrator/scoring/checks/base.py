"""What checks look at, what they answer, and the tools they share (file selection, ruff, vulture)."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from orchestrator.challenge.model import Challenge
from triggers.globs import compile_glob

__all__ = [
    "CheckResult",
    "Evidence",
    "LintFinding",
    "python_files",
    "ruff",
    "select_files",
    "test_users",
    "vulture",
]


@dataclass(frozen=True, slots=True)
class Evidence:
    """A finished run, as files on disk: the final and baseline workspaces and phase snapshots."""

    challenge: Challenge
    final: Path
    baseline: Path
    #: phase id → the workspace as it was when that phase first passed
    snapshots: dict[str, Path]
    #: the agent's commits after the baseline, oldest first: (sha, subject)
    commits: list[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class CheckResult:
    """A check's score (0 to 1), its findings, and data for the report."""

    score: float
    findings: tuple[str, ...] = ()
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LintFinding:
    """One ruff diagnostic."""

    path: str
    line: int
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.code} {self.message}"


def select_files(root: Path, paths: Sequence[str], exclude: Sequence[str]) -> list[Path]:
    """Files under ``root`` matching any glob of ``paths`` and none of ``exclude``, sorted."""
    include = [compile_glob(p) for p in paths]
    leave = [compile_glob(p) for p in exclude]
    chosen = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root).as_posix()
        if relative.startswith(".git/"):
            continue
        if any(g.match(relative) for g in include) and not any(g.match(relative) for g in leave):
            chosen.append(path)
    return chosen


def python_files(root: Path, options: dict[str, Any]) -> list[Path]:
    """The Python files a check covers: ``paths`` (default all) minus ``exclude`` (default tests)."""
    return select_files(
        root, options.get("paths", ["**/*.py"]), options.get("exclude", ["tests/**", "test_*.py"])
    )


async def ruff(root: Path, files: Sequence[Path], select: str, *config: str) -> list[LintFinding]:
    """ruff's findings of the ``select`` rules in ``files``, ignoring any project configuration."""
    py_files = [f for f in files if f.suffix == ".py"]
    if not py_files:
        return []
    command = [sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--exit-zero"]
    command += ["--select", select, "--output-format", "json"]
    for setting in config:
        command += ["--config", setting]
    done = await anyio.run_process([*command, *map(str, py_files)], cwd=root, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"ruff failed: {done.stderr.decode(errors='replace')[-500:]}")
    return [
        LintFinding(
            Path(item["filename"]).resolve().relative_to(root.resolve()).as_posix(),
            item["location"]["row"],
            item["code"] or "",
            item["message"],
        )
        for item in json.loads(done.stdout or b"[]")
    ]


_VULTURE = re.compile(r"^(?P<path>.+?):(?P<line>\d+): (?P<message>.+?) \((?P<confidence>\d+)% confidence")


async def vulture(
    root: Path, files: Sequence[Path], *, users: Sequence[Path] = (), confidence: int = 60
) -> list[str]:
    """vulture's unused-code findings in ``files``, as ``path:line: message``.

    ``users`` are read too but never reported on: code that only tests call (the workspace's
    own tests, the hidden tests) counts as used. Decorated functions count as used.
    """
    py_files = [f for f in files if f.suffix == ".py"]
    if not py_files:
        return []
    readers = [f for f in users if f.suffix == ".py" and f not in py_files]
    # --config /dev/null: the workspace's own [tool.vulture] (ignore_names = ["*"]) does not count.
    command = [sys.executable, "-m", "vulture", "--config", os.devnull, f"--min-confidence={confidence}"]
    command += ["--ignore-decorators", "@*"]
    done = await anyio.run_process([*command, *map(str, [*py_files, *readers])], cwd=root, check=False)
    reported = {path.resolve() for path in py_files}
    findings = []
    for line in done.stdout.decode(errors="replace").splitlines():
        match = _VULTURE.match(line)
        if match and (root / match.group("path")).resolve() in reported:
            relative = (root / match.group("path")).resolve().relative_to(root.resolve()).as_posix()
            findings.append(f"{relative}:{match.group('line')}: {match.group('message')}")
    return findings


def test_users(evidence: Evidence, root: Path) -> list[Path]:
    """Files whose uses of the code count: the workspace's own tests and the hidden tests."""
    own = select_files(root, ["tests/**/*.py", "**/test_*.py", "**/*_test.py", "**/conftest.py"], [])
    hidden = [
        path
        for phase in evidence.challenge.phases
        if phase.tests.is_dir()
        for path in phase.tests.rglob("*.py")
    ]
    return own + hidden

"""What every red-team case shares: a real session through the CLI, and how its end is judged.

A case passes only as *detected* (a completed run whose grading is ``tampered``, ``refused``
or ``over_limits``, or a critical rubric failure) or *neutralised* by a **valid** run (completed,
graded ``ok`` or ``timeout``, every hidden test failed: what the honest starter earns). An
invalid, crashed or interrupted run fails the case, whatever its score: it says nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from orchestrator.grading.sandbox import detect_sandbox
from tests.cli import REPO, changeup

TARGET = REPO / "tests" / "fixtures" / "redteam-target"
AGENTS = REPO / "tests" / "fixtures" / "redteam-agents"

DETECTED = "detected"
NEUTRALISED = "neutralised"

#: Cases that only bubblewrap stops (the harness alone does not): skipped, loudly, without it.
needs_bubblewrap = pytest.mark.skipif(
    detect_sandbox().kind != "bubblewrap",
    reason=f"LOUD SKIP: no bubblewrap sandbox here ({detect_sandbox().reason}); .ci/run installs it",
)
#: Cases about what changeup does as root (users of its own, cgroups).
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="LOUD SKIP: needs root; CI runs as root")


def run_cli(
    challenge: Path, agent: str, out: Path, *options: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``changeup run`` as a user would (``env``: variables added to this process's)."""
    command = ["run", str(challenge), "--agent", agent, "--out", str(out), "-q", *options]
    return changeup(*command, timeout=300, env=env)


def run(
    challenge: Path, agent: str, out: Path, *options: str, env: dict[str, str] | None = None
) -> tuple[dict[str, Any], Path]:
    """One real session through the CLI; its report and run folder."""
    done = run_cli(challenge, agent, out, *options, env=env)
    folders = sorted(out.iterdir()) if out.is_dir() else []
    assert len(folders) == 1, done.stderr[-3000:]
    report = folders[0] / "report.json"
    assert report.is_file(), done.stderr[-3000:]
    return json.loads(report.read_text()), folders[0]


def outcome(report: dict[str, Any]) -> str:
    """``detected``, ``neutralised``, or what went wrong (a breach, or a run that says nothing)."""
    status = report["run"]["status"]
    grading = report["score"]["grading_status"]
    if status != "completed":
        return f"NOT VALID: the run is {status} ({report['run']['detail'][-300:]})"
    if grading in ("tampered", "refused", "over_limits") or report["score"]["critical_failures"]:
        return DETECTED
    passed = [p["passed"] for p in report["phases"]]
    if grading in ("ok", "timeout") and not any(passed):
        return NEUTRALISED
    return f"BREACHED: grading {grading}, passed {passed}"


def records(folder: Path) -> list[dict[str, Any]]:
    """The run's event log, header left out."""
    return [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()[1:]]


def agent_said(folder: Path) -> str:
    """Everything the agent printed."""
    return "".join(r["text"] for r in records(folder) if r["kind"] == "agent.output")


def tree_digest(path: Path) -> str:
    """sha256 over every path under ``path`` (or the file), its kind and contents; "absent" if none."""
    if not path.exists() and not path.is_symlink():
        return "absent"
    digest = hashlib.sha256()
    paths = [path] if not path.is_dir() else [path, *sorted(path.rglob("*"))]
    for item in paths:
        if item.name.endswith(".lock"):
            continue  # lock files are taken (flock), never written
        digest.update(str(item.relative_to(path) if item != path else ".").encode())
        if item.is_symlink():
            digest.update(b"L" + os.readlink(item).encode())
        elif item.is_file():
            digest.update(b"F" + item.read_bytes())
        else:
            digest.update(b"D")
    return digest.hexdigest()

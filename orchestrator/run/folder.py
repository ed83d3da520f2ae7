"""A run's folder: where its log, workspace, snapshots and reports live.

Layout of ``<out>/<challenge>-<time>-<agent>/``::

    events.jsonl   the append-only event log (docs/event-log.md)
    challenge/     the challenge folder as it was run (replay and rescore read it)
    workspace/     the agent's workspace, with its own git history
    shadow.git/    snapshots of the workspace, one tree per tested state
    agent/         message files and transcripts of the agent
    pid            the id of the process that made the run (is it still live?)
    report.json    the report (docs/report.md)
    report.md      the same, for people; report.html, with a timeline
"""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.challenge.model import Challenge

__all__ = ["RunFolder"]


@dataclass(frozen=True, slots=True)
class RunFolder:
    """Where a run lives."""

    path: Path

    @property
    def log(self) -> Path:
        """``events.jsonl``."""
        return self.path / "events.jsonl"

    @property
    def workspace(self) -> Path:
        """The agent's workspace."""
        return self.path / "workspace"

    @property
    def shadow(self) -> Path:
        """The snapshot repository."""
        return self.path / "shadow.git"

    @property
    def challenge(self) -> Path:
        """The challenge folder as it was run (copied in at the start; absent in older runs)."""
        return self.path / "challenge"

    def challenge_as_run(self, header: dict[str, Any]) -> Path:
        """The challenge to read the run against: the copy it kept, or, for a run made before
        runs kept one, the folder its log ``header`` names."""
        return self.challenge if self.challenge.is_dir() else Path(str(header.get("challenge_path", "")))

    @property
    def pid(self) -> int | None:
        """The id of the process that made the run (its ``pid`` file); None when not recorded."""
        try:
            return int((self.path / "pid").read_text())
        except (OSError, ValueError):
            return None

    def live(self) -> bool | None:
        """Whether the process that made the run still runs; None when no pid was recorded."""
        pid = self.pid
        if pid is None:
            return None
        try:
            os.kill(pid, 0)  # signal 0: only asks whether the process exists
        except ProcessLookupError:
            return False
        except PermissionError:  # it exists, under another user
            return True
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except (OSError, IndexError):  # no /proc here (not Linux): the signal's answer stands
            return True
        # A killed process nobody has reaped yet is a zombie: gone, though it still has a pid.
        return state != "Z"

    @classmethod
    def new(cls, out: Path, challenge: Challenge, agent: str, name: str | None = None) -> RunFolder:
        """A fresh, uniquely named folder under ``out`` (``name``, if given, else one of the time)."""
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
        slug = re.sub(r"[^a-z0-9]+", "-", agent.lower()).strip("-")[:40] or "agent"
        base = out.resolve() / (name or f"{challenge.id}-{stamp}-{slug}")
        path, n = base, 1
        while path.exists():
            n += 1
            path = base.with_name(f"{base.name}-{n}")
        path.mkdir(parents=True)
        # Written so `changeup show --follow` can tell a live run from one whose process is gone.
        (path / "pid").write_text(f"{os.getpid()}\n")
        return cls(path)

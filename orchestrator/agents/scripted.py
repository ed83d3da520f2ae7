"""The scripted agent: applies the challenge's own solutions, phase by phase.

It needs no network and no key, which is what makes ``make demo``, the end-to-end tests
and calibration possible. For each message whose trigger unlocks a phase (the briefing
unlocks the first), it copies ``solutions/<variant>/<phase>/`` over the workspace, deletes
what the folder's ``.delete`` file lists (one glob per line, for retractions), and commits.
A broken variant falls back to the reference for phases it does not override.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import anyio

from orchestrator.agents.base import AgentContext, AgentUnavailable, Message, TurnAgent
from triggers.globs import compile_glob

__all__ = ["DELETE_LIST", "ScriptedAgent"]

#: In a solution phase folder: globs of workspace files to delete before copying.
DELETE_LIST = ".delete"


class ScriptedAgent(TurnAgent):
    """Plays a solution variant: ``reference`` or ``broken/<name>``."""

    def __init__(self, variant: str = "reference") -> None:
        self.variant = variant
        self.name = f"scripted:{variant}"

    async def start(self, ctx: AgentContext) -> None:
        """Refuse a variant the challenge does not have."""
        if not (ctx.challenge.root / "solutions" / self.variant).is_dir():
            raise AgentUnavailable(f"{ctx.challenge.id} has no solutions/{self.variant}/")

    async def turn(self, ctx: AgentContext, messages: list[Message]) -> int | None:
        """Apply the solution of every phase these messages unlocked, then commit."""
        applied = [m.phase for m in messages if m.phase and self._apply(ctx, m.phase)]
        if applied:
            await anyio.to_thread.run_sync(_commit, ctx.workspace, f"Implement {', '.join(applied)}")
        return 0

    def _apply(self, ctx: AgentContext, phase: str) -> bool:
        source = ctx.challenge.solution(self.variant, phase)
        if not source.is_dir():
            source = ctx.challenge.solution("reference", phase)
        if not source.is_dir():
            return False
        deletions = source / DELETE_LIST
        if deletions.is_file():
            _delete(ctx.workspace, deletions.read_text().split())
        shutil.copytree(source, ctx.workspace, dirs_exist_ok=True, ignore=shutil.ignore_patterns(DELETE_LIST))
        return True


def _delete(workspace: Path, patterns: list[str]) -> None:
    compiled = [compile_glob(p) for p in patterns]
    for path in sorted(workspace.rglob("*"), reverse=True):
        relative = path.relative_to(workspace).as_posix()
        if relative.startswith(".git/") or relative == ".git":
            continue
        if any(c.match(relative) for c in compiled):
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()


def _commit(workspace: Path, message: str) -> None:
    for args in (["add", "-A"], ["commit", "-q", "-m", message]):
        subprocess.run(["git", *args], cwd=workspace, capture_output=True, check=False)

"""The scripted agent: applies the challenge's own solutions, phase by phase.

It needs no network and no key, which is what makes ``make demo``, the end-to-end tests
and calibration possible. For each message whose trigger unlocks a phase (the briefing
unlocks the first) it applies the folders of ``solutions/<variant>/<phase>/``
(``orchestrator/challenge/solutions.py`` says what a folder holds and how it is laid), says
what its ``.transcript`` holds as the agent's own words (for judges), and commits each.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Sequence
from pathlib import Path

import anyio

from orchestrator.agents.base import AgentUnavailable, TurnAgent
from orchestrator.challenge.model import Challenge
from orchestrator.challenge.solutions import TRANSCRIPT, laid_reference, lay, solution_folders
from orchestrator.seams import AgentContext, Message
from orchestrator.system.git import GitError, git_sync
from triggers import AgentOutput

__all__ = ["ScriptedAgent", "apply_reference"]


class ScriptedAgent(TurnAgent):
    """Plays a solution variant: ``reference`` or ``broken/<name>``."""

    def __init__(self, variant: str = "reference") -> None:
        self.variant = variant
        self.name = f"scripted:{variant}"

    def preflight(self, challenge: Challenge) -> None:
        """Refuse a variant the challenge does not have, naming those it has."""
        if (challenge.root / "solutions" / self.variant).is_dir():
            return
        reference = challenge.root / "solutions" / "reference"
        if not reference.is_dir():  # e.g. an imported task that came with no solution
            raise AgentUnavailable(
                f"{reference} does not exist: {challenge.id} has no reference solution, so the scripted "
                "agent has nothing to apply; add one per phase in solutions/reference/<phase>/ "
                "(docs/authoring.md), or run another --agent (`changeup agents` lists them)"
            )
        broken = challenge.root / "solutions" / "broken"
        names = sorted(p.name for p in broken.iterdir() if p.is_dir()) if broken.is_dir() else []
        has = ", ".join(f"scripted:broken/{name}" for name in names) or "none"
        raise AgentUnavailable(
            f"{challenge.root / 'solutions' / self.variant} does not exist: {challenge.id} has no "
            f"variant {self.variant!r}; use scripted (the reference) or a broken variant ({has})"
        )

    def rewrite(self, workspace: Path) -> None:
        """What happens to the workspace after a solution folder is applied (nothing, here)."""

    async def turn(self, ctx: AgentContext, messages: list[Message]) -> int | None:
        """Apply the solution of every phase these messages unlocked, one commit per folder."""
        for message in messages:
            if not message.phase:
                continue
            with tempfile.TemporaryDirectory(prefix="changeup-solution-") as scratch:
                for source in solution_folders(ctx.challenge, self.variant, message.phase, Path(scratch)):
                    await self._apply(ctx, source, f"Implement {message.phase}")
        return 0

    async def _apply(self, ctx: AgentContext, source: Path, default_message: str) -> None:
        message = lay(ctx.workspace, source, default_message)
        self.rewrite(ctx.workspace)
        transcript = source / TRANSCRIPT
        if transcript.is_file():
            ctx.emit(AgentOutput(0.0, transcript.read_text(encoding="utf-8")))
        await anyio.to_thread.run_sync(_commit, ctx.workspace, message)


def apply_reference(challenge: Challenge, phases: Sequence[str], workspace: Path) -> None:
    """Apply the reference solution of each of ``phases`` to ``workspace`` as the scripted agent
    does, one commit per folder (its words unsaid): how a session started at a later phase
    finds its workspace (``changeup run --start-at``)."""
    for message in laid_reference(challenge, phases, workspace):
        _commit(workspace, message)


def _commit(workspace: Path, message: str) -> None:
    for args in (["add", "-A"], ["commit", "-q", "-m", message]):
        # A solution's own files (a .gitattributes, say) must not run anything on the host.
        with contextlib.suppress(GitError):
            git_sync(args, cwd=workspace)

"""Aider: ``aider --message-file`` once per turn, its chat history, and its usage lines."""

from __future__ import annotations

import re
import stat
from pathlib import Path

from orchestrator.agents.presets.base import PresetAgent, TurnArgs
from orchestrator.agents.transcript import LineParser, Usage, total
from orchestrator.seams import AgentContext
from orchestrator.system.agentfiles import AgentFolder

__all__ = ["Aider", "AiderText"]


AIDER_HISTORY = "aider.chat.history.md"
AIDER_INPUT_HISTORY = "aider.input.history"
#: The most of one turn's part of the chat history read for its final message.
HISTORY_BYTES = 16 << 20


class Aider(PresetAgent):
    """``aider --message-file``; its chat history lives in the agent folder and is restored."""

    preset = "aider"
    binary = "aider"
    title = "Aider"
    docs = (
        "https://aider.chat/docs/scripting.html (--message / --message-file, then exit)",
        "https://aider.chat/docs/config/options.html (--yes-always, history files, --restore-chat-history)",
    )
    continuity = "--restore-chat-history, from its chat history file in the run's agent/ folder"
    message_via = "file"
    _offset = 0  # where this turn's part of the chat history starts
    env_names = ("AIDER_",)
    home_files = (".aider.conf.yml", ".aider.model.settings.yml", ".aider.model.metadata.json")
    any_api_key = True
    unattended_default = ("--yes-always",)

    def arguments(self, turn: TurnArgs) -> list[str]:
        """``aider --message-file FILE --yes-always …``; nothing on stdin."""
        return [
            "--message-file",
            turn.message_file,
            *self.unattended,
            "--no-pretty",
            # Streamed, Aider prints token counts it estimated itself; unstreamed, the provider's.
            "--no-stream",
            "--no-fancy-input",
            "--no-check-update",
            "--no-analytics",
            "--no-gitignore",
            "--chat-history-file",
            f"{turn.agent_dir}/{AIDER_HISTORY}",
            "--input-history-file",
            f"{turn.agent_dir}/{AIDER_INPUT_HISTORY}",
            *(["--restore-chat-history"] if turn.session else []),
            *(["--model", self.model] if self.model else []),
            *self.flags,
        ]

    def continues(self) -> bool:
        """Continues when it left a chat history to restore."""
        return _history_size(self._folder) > 0

    def parser(self) -> LineParser:
        """Its ``Tokens:``/``Cost:`` lines."""
        return AiderText()

    def turn_started(self, ctx: AgentContext) -> None:
        """Remember where this turn's part of the chat history starts."""
        self._offset = _history_size(ctx.folder)

    def read_usage(self, ctx: AgentContext, usage: Usage) -> Usage:
        """The final message is what it answered, from this turn's part of the chat history (at
        most :data:`HISTORY_BYTES` of it, read as a regular file through no link)."""
        try:
            added = (
                AgentFolder(ctx.folder).read(AIDER_HISTORY, limit=HISTORY_BYTES, offset=self._offset).text()
            )
        except OSError:
            return usage
        said = [
            line
            for line in added.splitlines()
            if not line.startswith(("#### ", "> ", "# aider chat started"))
            and line.rstrip() not in ("####", ">")
        ]
        usage.final_message = "\n".join(_without_edits(said)).strip() or None
        # What continues the conversation is the chat history (restored next turn).
        usage.session = AIDER_HISTORY if _history_size(ctx.folder) > 0 else ""
        return usage

    def files_to_redact(self, ctx: AgentContext) -> list[Path]:
        """Its history files."""
        return [ctx.folder / AIDER_HISTORY, ctx.folder / AIDER_INPUT_HISTORY]


def _history_size(folder: Path) -> int:
    """The size of the chat history in the agent folder; 0 when it is not a regular file."""
    info = AgentFolder(folder).stat(AIDER_HISTORY)
    return info.st_size if info is not None and stat.S_ISREG(info.st_mode) else 0


def _without_edits(lines: list[str]) -> list[str]:
    """An answer's words without its edits: every fenced block (a whole file, a SEARCH/REPLACE
    block) goes, with the file name on the line before it."""
    out: list[str] = []
    fenced = False
    for line in lines:
        if line.startswith("```"):
            if not fenced and out and out[-1].strip() and " " not in out[-1].strip():
                out.pop()  # the file the block edits
            fenced = not fenced
        elif not fenced:
            out.append(line)
    return out


_TOKENS_LINE = re.compile(
    r"Tokens: (?P<sent>[\d.,]+k?) sent"
    r"(?:, (?P<write>[\d.,]+k?) cache write)?(?:, (?P<hit>[\d.,]+k?) cache hit)?"
    r", (?P<received>[\d.,]+k?) received\."
)
_COST_LINE = re.compile(r"Cost: \$(?P<message>[\d.]+) message, \$(?P<session>[\d.]+) session\.")
_MODEL_LINE = re.compile(r"^(?:Main model|Model): (?P<model>\S+)")


def _count(text: str | None) -> int | None:
    """Aider's rounded counts: ``312``, ``2.3k``, ``12k``."""
    if text is None:
        return None
    text = text.replace(",", "")
    if text.endswith("k"):
        return round(float(text[:-1]) * 1000)
    return round(float(text))


class AiderText:
    """Aider's plain output: a ``Tokens: … sent, … received. Cost: $… message, …`` line per LLM call."""

    def __init__(self) -> None:
        self._usage = Usage()
        self._sent: list[int | None] = []
        self._received: list[int | None] = []
        self._hits: list[int | None] = []
        self._writes: list[int | None] = []
        self._costs: list[float] = []

    def feed(self, line: str) -> None:
        """One line."""
        tokens = _TOKENS_LINE.search(line)
        if tokens:
            self._sent.append(_count(tokens["sent"]))
            self._received.append(_count(tokens["received"]))
            self._hits.append(_count(tokens["hit"]))
            self._writes.append(_count(tokens["write"]))
        cost = _COST_LINE.search(line)
        if cost:
            self._costs.append(float(cost["message"]))
        model = _MODEL_LINE.match(line.strip())
        if model and not self._usage.model:
            self._usage.model = model["model"]

    def finish(self) -> Usage:
        """Sums over the turn's LLM calls (Aider rounds its counts: ``2.3k``)."""
        usage = self._usage
        usage.input_tokens = total(self._sent)
        usage.output_tokens = total(self._received)
        if self._sent:
            usage.cache_read_tokens = total(self._hits) if any(h is not None for h in self._hits) else 0
            usage.cache_write_tokens = total(self._writes) if any(w is not None for w in self._writes) else 0
        usage.cost_usd = round(sum(self._costs), 6) if self._costs else None
        return usage

"""Claude Code: ``claude -p`` (print mode) once per turn, and its stream-json events."""

from __future__ import annotations

from typing import Any

from orchestrator.agents.presets.base import PresetAgent, TurnArgs
from orchestrator.agents.transcript import LineParser, Usage, as_dict, as_int, as_number, as_text, json_object

__all__ = ["ClaudeCode", "ClaudeStreamJson"]


class ClaudeCode(PresetAgent):
    """Claude Code in print mode, streaming JSON events; later turns ``--resume`` its session."""

    preset = "claude-code"
    binary = "claude"
    title = "Claude Code"
    docs = (
        "https://docs.anthropic.com/en/docs/claude-code/headless (print mode, stream-json, --resume)",
        "https://docs.anthropic.com/en/docs/claude-code/cli-reference (--model, permission flags)",
    )
    continuity = "--resume <session_id>, the id in its stream-json output (init and result events)"
    message_via = "stdin"
    env_names = ("ANTHROPIC_", "CLAUDE_", "IS_SANDBOX", "DISABLE_", "MAX_THINKING_TOKENS", "AWS_", "VERTEX_")
    home_files = (".claude.json", ".claude/settings.json", ".claude/.credentials.json", ".claude/CLAUDE.md")
    credential_files = (".claude/.credentials.json",)
    provider = "anthropic"
    unattended_default = ("--dangerously-skip-permissions",)
    transcript_ext = "jsonl"

    def arguments(self, turn: TurnArgs) -> list[str]:
        """``claude -p --output-format stream-json --verbose …``; the message is on stdin."""
        return [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            *self.unattended,
            *(["--model", self.model] if self.model else []),
            *(["--resume", turn.session] if turn.session else []),
            *self.flags,
        ]

    def parser(self) -> LineParser:
        """stream-json."""
        return ClaudeStreamJson()


class ClaudeStreamJson:
    """Claude Code's ``--output-format stream-json``: ``system``/``init``, ``assistant``, ``result``."""

    def __init__(self) -> None:
        self._usage = Usage()
        self._last_text: str | None = None
        self._result: dict[str, Any] | None = None

    def feed(self, line: str) -> None:
        """One event."""
        event = json_object(line)
        if event is None:
            return
        kind = event.get("type")
        if isinstance(event.get("session_id"), str) and event["session_id"]:
            self._usage.session = event["session_id"]
        if kind == "system" and event.get("subtype") == "init":
            self._usage.model = str(event.get("model") or "")
        elif kind == "assistant":
            message = event.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            texts = [
                block["text"]
                for block in content or []
                if isinstance(block, dict)
                and block.get("type") == "text"
                and isinstance(block.get("text"), str)
            ]
            self._last_text = as_text("".join(texts)) or self._last_text
        elif kind == "result":
            self._result = event

    def finish(self) -> Usage:
        """The result event's figures (none if the turn ended before it)."""
        usage = self._usage
        usage.final_message = self._last_text
        result = self._result
        if result is None:
            return usage
        usage.final_message = as_text(result.get("result")) or usage.final_message
        # A resumed session's total_cost_usd (and modelUsage) count every earlier turn too
        # (seen in 2.1.332); model_usage_since_last_result is this run's alone, per model.
        since = as_dict(result.get("model_usage_since_last_result"))
        costs = [as_number(as_dict(model).get("costUSD")) for model in since.values()]
        if since and all(cost is not None for cost in costs):
            usage.cost_usd = sum(cost for cost in costs if cost is not None)
        else:
            usage.cost_usd = as_number(result.get("total_cost_usd"))
        tokens = result.get("usage")
        if isinstance(tokens, dict):
            fresh = as_int(tokens.get("input_tokens"))
            usage.cache_read_tokens = as_int(tokens.get("cache_read_input_tokens"))
            usage.cache_write_tokens = as_int(tokens.get("cache_creation_input_tokens"))
            if fresh is not None:
                usage.input_tokens = fresh + (usage.cache_read_tokens or 0) + (usage.cache_write_tokens or 0)
            usage.output_tokens = as_int(tokens.get("output_tokens"))
        return usage

"""OpenHands CLI: ``openhands --headless --json`` once per turn, its events and conversation id."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from orchestrator.agents.presets.base import PresetAgent, TurnArgs, package_version_argv
from orchestrator.agents.transcript import LineParser, Usage, as_text, json_object
from orchestrator.seams import AgentContext

__all__ = ["OpenHands", "OpenHandsJsonl"]


class OpenHands(PresetAgent):
    """``openhands --headless --json -f FILE``; later turns ``--resume <conversation id>``."""

    preset = "openhands"
    binary = "openhands"
    title = "OpenHands CLI"
    docs = (
        "https://docs.openhands.dev/openhands/usage/cli/headless (--headless, --json, -t/-f)",
        "https://docs.openhands.dev/openhands/usage/cli/quick-start (--resume ID)",
        "OpenHands-CLI README (--override-with-envs applies LLM_MODEL, LLM_API_KEY, LLM_BASE_URL)",
    )
    continuity = (
        "--resume <conversation id>, the id it prints as 'Conversation ID: …' when it exits "
        "(--resume --last after a turn cut off before it)"
    )
    message_via = "file"
    env_names = ("LLM_", "OPENHANDS_")
    home_files = (".openhands/agent_settings.json", ".openhands/cli_config.json", ".openhands/mcp.json")
    any_api_key = True

    def arguments(self, turn: TurnArgs) -> list[str]:
        """``openhands --headless --json --override-with-envs [--resume ID] … -f FILE``."""
        resume = (
            []
            if not turn.session
            else ["--resume", *([LATEST] if turn.session == LATEST else [turn.session])]
        )
        return [
            "--headless",
            "--json",
            "--override-with-envs",
            *self.unattended,
            *resume,
            *self.flags,
            "-f",
            turn.message_file,
        ]

    def read_usage(self, ctx: AgentContext, usage: Usage) -> Usage:
        """A turn cut off before it printed its conversation id is continued with ``--resume
        --last``: the latest conversation of its private HOME, which holds this run's alone."""
        usage.session = usage.session or self._session or LATEST
        return usage

    def extra_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """The model goes in ``LLM_MODEL`` (applied by ``--override-with-envs``). Through the model
        gateway, ``LLM_BASE_URL`` is the gateway's base of the model's provider (LiteLLM's prefix:
        ``anthropic/``, ``gemini/``, else OpenAI's), and ``LLM_API_KEY`` its session token."""
        out = {"LLM_MODEL": self.model} if self.model else {}
        if env.get("CHANGEUP_MODEL_GATEWAY"):
            provider = (self.model or "").split("/", 1)[0]
            base = {"anthropic": "ANTHROPIC_BASE_URL", "gemini": "GOOGLE_GEMINI_BASE_URL"}.get(provider)
            out["LLM_BASE_URL"] = env.get(base or "OPENAI_BASE_URL", "")
            out["LLM_API_KEY"] = env.get("CHANGEUP_MODEL_TOKEN", "")
        return out

    def parser(self) -> LineParser:
        """JSONL events, then the conversation id."""
        return OpenHandsJsonl()

    def version_argv(self, path: str) -> list[str] | None:
        """The package's version, read by its Python: ``openhands --version`` imports the whole
        SDK first (over 15 seconds on a loaded machine, seen with 1.16.0)."""
        return package_version_argv(path, "openhands") or [path, "--version"]


#: Stands for "the latest conversation" (``--resume --last``) where no id was printed.
LATEST = "--last"
_CONVERSATION_ID = re.compile(r"Conversation ID: (?P<id>[0-9A-Za-z-]{8,})")


class OpenHandsJsonl:
    """``openhands --headless --json``: one event a line (or ``--JSON Event--`` blocks), then the id."""

    def __init__(self) -> None:
        self._usage = Usage()
        self._block: list[str] | None = None
        self._finish: str | None = None

    def feed(self, line: str) -> None:
        """One line."""
        found = _CONVERSATION_ID.search(line)
        if found:
            self._usage.session = found["id"]
        if line.strip() == "--JSON Event--":  # older versions: a marker, then pretty-printed JSON
            self._flush()
            self._block = []
            return
        if self._block is not None:
            self._block.append(line)
            if line.startswith("}"):
                self._flush()
            return
        event = json_object(line)
        if event is not None:
            self._event(event)

    def finish(self) -> Usage:
        """The agent's finishing words (or its last message); OpenHands prints no usage here."""
        self._flush()
        if self._finish is not None:
            self._usage.final_message = self._finish
        return self._usage

    def _flush(self) -> None:
        if self._block:
            event = json_object("".join(self._block))
            if event is not None:
                self._event(event)
        self._block = None

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("event_type") or event.get("kind") or event.get("type")
        action = (
            event.get("action_data") if isinstance(event.get("action_data"), dict) else event.get("action")
        )
        if isinstance(action, dict) and (
            event.get("action_type") == "FinishAction" or action.get("kind") == "FinishAction"
        ):
            self._finish = as_text(action.get("message")) or self._finish
        elif kind in ("MessageEvent", "message"):
            message = (
                event.get("message") if isinstance(event.get("message"), dict) else event.get("llm_message")
            )
            if isinstance(message, dict) and (
                message.get("role") == "assistant" or event.get("source") == "agent"
            ):
                content = message.get("content")
                if isinstance(content, list):
                    content = "".join(c.get("text", "") for c in content if isinstance(c, dict))
                self._usage.final_message = as_text(content) or self._usage.final_message

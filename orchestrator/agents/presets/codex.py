"""Codex CLI: ``codex exec --json`` once per turn, and its JSONL events."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from orchestrator.agents.presets.base import PresetAgent, TurnArgs
from orchestrator.agents.shell import agent_env
from orchestrator.agents.transcript import LineParser, Usage, as_int, as_text, json_object, total
from orchestrator.seams import AgentContext

__all__ = ["Codex", "CodexJsonl"]


class Codex(PresetAgent):
    """``codex exec --json``; later turns ``codex exec … resume <thread id>``."""

    preset = "codex"
    binary = "codex"
    title = "Codex CLI"
    docs = (
        "https://github.com/openai/codex/blob/main/docs/exec.md (exec, --json events, exec resume)",
        "https://github.com/openai/codex/blob/main/codex-rs/exec/src/cli.rs (PROMPT '-': read stdin)",
    )
    continuity = "codex exec resume <thread_id> -, the id of its thread.started event"
    message_via = "stdin"
    env_names = ("OPENAI_", "CODEX_")
    home_files = (".codex/config.toml", ".codex/auth.json", ".codex/AGENTS.md")
    credential_files = (".codex/auth.json",)
    provider = "openai"
    unattended_default = ("--sandbox", "workspace-write")
    transcript_ext = "jsonl"

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        # thread id -> the thread's token totals (input, cached, cache write, output) so far
        self._thread_totals: dict[str, tuple[int | None, ...]] = {}

    def arguments(self, turn: TurnArgs) -> list[str]:
        """``codex exec --json --sandbox workspace-write … [resume ID] -``; the message is on stdin."""
        return [
            "exec",
            "--json",
            # Its commands otherwise run in a login shell, whose profile resets PATH: the agent's
            # own Python environment (pytest, the challenge's requirements) would be gone.
            "-c",
            "allow_login_shell=false",
            *self.unattended,
            *(["--model", self.model] if self.model else []),
            *self.flags,
            *(["resume", turn.session] if turn.session else []),
            "-",
        ]

    def command_for(self, ctx: AgentContext, prompt: str, message_file: Path) -> list[str]:
        """Through the model gateway, a provider of its own (``changeup``) pointing at it: Codex's
        built-in ``openai`` provider ignores ``OPENAI_BASE_URL`` (0.171.0 calls api.openai.com)."""
        argv = super().command_for(ctx, prompt, message_file)
        env = agent_env(ctx)
        base = env.get("OPENAI_BASE_URL", "")
        if not env.get("CHANGEUP_MODEL_GATEWAY") or not base:
            return argv
        provider = (
            f'model_providers.changeup={{name="changeup",base_url="{base}",'
            'env_key="OPENAI_API_KEY",wire_api="responses"}'
        )
        return [*argv[:2], "-c", "model_provider=changeup", "-c", provider, *argv[2:]]

    def parser(self) -> LineParser:
        """JSONL events."""
        return CodexJsonl()

    def read_usage(self, ctx: AgentContext, usage: Usage) -> Usage:
        """This turn's own tokens: a resumed thread's ``turn.completed`` counts the thread's earlier
        turns too (seen in 0.171.0), so what the thread had reported before is taken off."""
        now = (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens, usage.output_tokens)
        before = self._thread_totals.get(usage.session) if usage.session else None
        if usage.session and usage.input_tokens is not None:
            self._thread_totals[usage.session] = now
        if before is None:
            return usage
        less = [None if n is None or b is None else n - b for n, b in zip(now, before, strict=True)]
        usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens, usage.output_tokens = less
        return usage


class CodexJsonl:
    """``codex exec --json``: ``thread.started``, ``item.completed`` (agent messages), ``turn.completed``."""

    def __init__(self) -> None:
        self._usage = Usage()
        self._inputs: list[int | None] = []
        self._cached: list[int | None] = []
        self._outputs: list[int | None] = []
        self._writes: list[int | None] = []
        self._error: str | None = None

    def feed(self, line: str) -> None:
        """One event."""
        event = json_object(line)
        if event is None:
            return
        kind = event.get("type")
        if kind in ("thread.started", "session.created"):
            session = event.get("thread_id") or event.get("session_id")
            self._usage.session = session if isinstance(session, str) else self._usage.session
        elif kind == "item.completed":
            item = event.get("item")
            if isinstance(item, dict) and item.get("type") == "agent_message":
                self._usage.final_message = as_text(item.get("text")) or self._usage.final_message
        elif kind == "turn.completed" and isinstance(event.get("usage"), dict):
            tokens = event["usage"]
            self._inputs.append(as_int(tokens.get("input_tokens")))
            self._cached.append(as_int(tokens.get("cached_input_tokens")))
            self._writes.append(as_int(tokens.get("cache_write_input_tokens")))
            self._outputs.append(as_int(tokens.get("output_tokens")))
        elif kind in ("turn.failed", "error"):
            error = event.get("error") if kind == "turn.failed" else event
            message = error.get("message") if isinstance(error, dict) else None
            self._error = as_text(message) or self._error

    def finish(self) -> Usage:
        """Token counts summed over the completed turns; Codex reports no cost."""
        usage = self._usage
        usage.input_tokens = total(self._inputs)
        usage.cache_read_tokens = total(self._cached)
        usage.cache_write_tokens = total(self._writes)
        usage.output_tokens = total(self._outputs)
        if usage.final_message is None and self._error:
            usage.final_message = f"error: {self._error}"
        return usage

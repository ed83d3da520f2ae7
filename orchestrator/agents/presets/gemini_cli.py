"""Gemini CLI: ``gemini --output-format json --prompt=…`` once per turn, and its JSON answer."""

from __future__ import annotations

import json
import re
from typing import Any

from orchestrator.agents.presets.base import PresetAgent, TurnArgs
from orchestrator.agents.transcript import LineParser, Usage, as_dict, as_int, as_text, total
from orchestrator.seams import AgentContext

__all__ = ["GeminiCli", "GeminiJson"]


class GeminiCli(PresetAgent):
    """``gemini --output-format json --prompt=…``; later turns ``--resume <session id>``."""

    preset = "gemini-cli"
    binary = "gemini"
    title = "Gemini CLI"
    docs = (
        "https://github.com/google-gemini/gemini-cli/blob/main/docs/cli/headless.md (--prompt, json)",
        "https://github.com/google-gemini/gemini-cli/blob/main/docs/cli/cli-reference.md (--approval-mode)",
        "https://github.com/google-gemini/gemini-cli/blob/main/docs/cli/session-management.md (--resume ID)",
    )
    continuity = (
        "--resume <session_id>: the id it is told to start the session with (--session-id), "
        "so a turn cut off before its JSON output is continued too"
    )
    names_session = True
    message_via = "argument"
    env_names = ("GEMINI_", "GOOGLE_")
    home_files = (
        ".gemini/settings.json",
        ".gemini/oauth_creds.json",
        ".gemini/google_accounts.json",
        ".gemini/GEMINI.md",
        ".gemini/.env",
    )
    credential_files = (".gemini/oauth_creds.json", ".gemini/google_accounts.json")
    provider = "gemini"
    # --skip-trust: without it, 0.61.0 turns yolo back to "default" in a folder it was never
    # told to trust (every fresh workspace), then refuses to run headless.
    unattended_default = ("--approval-mode", "yolo", "--skip-trust")
    transcript_ext = "json"

    def arguments(self, turn: TurnArgs) -> list[str]:
        """``gemini --output-format json --approval-mode yolo --skip-trust … --prompt=MESSAGE``.

        ``--prompt=`` rather than ``-p MESSAGE``: a message starting with ``-`` stays a value.
        A first turn names its session (``--session-id``), a later one resumes it.
        """
        session = ["--resume", turn.session] if turn.session else ["--session-id", turn.new_session]
        return [
            "--output-format",
            "json",
            *self.unattended,
            *(["--model", self.model] if self.model else []),
            *(session if turn.session or turn.new_session else []),
            *self.flags,
            f"--prompt={turn.prompt}",
        ]

    def read_usage(self, ctx: AgentContext, usage: Usage) -> Usage:
        """The session it was told to start, when a turn cut off before its JSON did not say."""
        usage.session = usage.session or self._named
        return usage

    def parser(self) -> LineParser:
        """One JSON object."""
        return GeminiJson()


class GeminiJson:
    """``gemini --output-format json``: one object with ``session_id``, ``response`` and ``stats``."""

    def __init__(self) -> None:
        self._lines: list[str] = []

    def feed(self, line: str) -> None:
        """One line of the (pretty-printed) object, or of something printed before it."""
        self._lines.append(line)

    def finish(self) -> Usage:
        """The figures of the last JSON object printed."""
        usage = Usage()
        found = self._last_object()
        if found is None:
            return usage
        usage.session = found["session_id"] if isinstance(found.get("session_id"), str) else ""
        usage.final_message = as_text(found.get("response"))
        error = found.get("error")
        if usage.final_message is None and isinstance(error, dict):
            usage.final_message = f"error: {error.get('message', error)}"
        models = as_dict(as_dict(found.get("stats")).get("models"))
        if models:
            counts = [as_dict(as_dict(m).get("tokens")) for m in models.values()]
            usage.input_tokens = total(as_int(c.get("prompt")) for c in counts)
            candidates = total(as_int(c.get("candidates")) for c in counts)
            thoughts = total(as_int(c.get("thoughts")) for c in counts)
            usage.output_tokens = None if candidates is None else candidates + (thoughts or 0)
            usage.cache_read_tokens = total(as_int(c.get("cached")) for c in counts)
            usage.model = ", ".join(sorted(models))
        return usage

    def _last_object(self) -> dict[str, Any] | None:
        text = "\n".join(self._lines)
        decoder = json.JSONDecoder()
        found: dict[str, Any] | None = None
        for match in re.finditer(r"^\{", text, re.MULTILINE):
            try:
                obj, _ = decoder.raw_decode(text, match.start())
            except ValueError:
                continue
            if isinstance(obj, dict) and ("response" in obj or "stats" in obj or "error" in obj):
                found = obj
        return found

"""Presets for real coding agents: each drives one CLI's documented non-interactive mode.

A preset is a :class:`~orchestrator.agents.shell.CommandAgent` that runs its CLI once per
turn with an argument list (no shell), in the workspace, and

- continues the same conversation on later messages where the CLI can (Claude Code's
  ``--resume <session id>``, ``codex exec resume <thread id>``, Aider's restored chat history,
  Gemini CLI's ``--resume <session id>``, OpenHands' ``--resume <conversation id>``); where it
  cannot (mini-swe-agent), the earlier messages are sent again, as context, before the new one;
- keeps every turn's output in ``agent/turn-NNN.*`` (secrets redacted), inlines it into the
  event log as ``agent.output``, and parses it where the CLI emits structured events;
- ends every turn with a ``turn.summary`` record: time, tokens, cost (``None`` where the CLI
  does not say), the final message, and the id that continues the conversation.

Each CLI's command line and the parser of its output stand together in one module:

==================  ===========================================================================
``base``            :class:`PresetAgent` (a turn: command line, transcript, ``turn.summary``),
                    the options, finding the installed CLI and its version
``claude_code``     ``claude -p``, continued with ``--resume``; its stream-json events
``codex``           ``codex exec --json``, continued with ``exec resume``; its JSONL events
``aider``           ``aider --message-file``, continued from its chat history; its usage lines
``gemini_cli``      ``gemini --prompt=…``, continued with ``--resume``; its JSON answer
``mini_swe_agent``  ``mini -t …``, not continued (earlier messages resent); its trajectory file
``openhands``       ``openhands --headless --json``, continued with ``--resume``; its events
==================  ===========================================================================

Options (``--agent-option KEY=VALUE``): ``binary``, ``model``, ``flags``, ``unattended`` — see
:data:`OPTIONS`. docs/agents.md lists the exact command line of each preset and its sources.
"""

from __future__ import annotations

from orchestrator.agents.presets.aider import Aider
from orchestrator.agents.presets.base import (
    OPTIONS,
    PresetAgent,
    PresetOptionError,
    binary_version,
    installed,
    resolve_binary,
    with_context,
)
from orchestrator.agents.presets.claude_code import ClaudeCode
from orchestrator.agents.presets.codex import Codex
from orchestrator.agents.presets.gemini_cli import GeminiCli
from orchestrator.agents.presets.mini_swe_agent import MiniSweAgent
from orchestrator.agents.presets.openhands import OpenHands

__all__ = [
    "OPTIONS",
    "PRESETS",
    "Aider",
    "ClaudeCode",
    "Codex",
    "GeminiCli",
    "MiniSweAgent",
    "OpenHands",
    "PresetAgent",
    "PresetOptionError",
    "binary_version",
    "installed",
    "resolve_binary",
    "with_context",
]

#: Presets by ``--agent`` name.
PRESETS: dict[str, type[PresetAgent]] = {
    cls.preset: cls for cls in (ClaudeCode, Codex, Aider, GeminiCli, MiniSweAgent, OpenHands)
}

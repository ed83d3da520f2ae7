"""Agent adapters behind one protocol, chosen by an ``--agent`` spec."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orchestrator.agents.base import AgentUnavailable, TurnAgent
    from orchestrator.agents.human import HumanAgent
    from orchestrator.agents.impostor import IMPOSTORS, ImpostorAgent
    from orchestrator.agents.inbox import InboxAgent
    from orchestrator.agents.presets import PRESETS, PresetAgent
    from orchestrator.agents.scripted import ScriptedAgent
    from orchestrator.agents.shell import CommandAgent, ProcessAgent
    from orchestrator.seams import Agent

__all__ = [
    "BUILT_INS",
    "IMPOSTORS",
    "PRESETS",
    "SPEC_HELP",
    "AgentSpecError",
    "AgentUnavailable",
    "CommandAgent",
    "HumanAgent",
    "ImpostorAgent",
    "InboxAgent",
    "PresetAgent",
    "ProcessAgent",
    "ScriptedAgent",
    "TurnAgent",
    "parse_agent",
]

#: The built-in agents (no CLI to install), each an ``--agent`` spec and what it does, one
#: string per line: ``changeup run --help`` and ``changeup agents`` list them.
BUILT_INS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("scripted", ("apply the challenge's reference solution, phase by phase",)),
    ("scripted:broken/NAME", ("apply a deliberately broken variant",)),
    (
        "impostor:KIND",
        (
            "the reference, its functions returning doubles equal to anything",
            "(always-equal, equal-subclass)",
        ),
    ),
    (
        "command:CMD",
        (
            "run `sh -c CMD` in the workspace once per turn (the turn's messages on",
            "stdin and in $CHANGEUP_MESSAGE_FILE; ./CMD is found from here)",
        ),
    ),
    (
        "process:CMD",
        ("one long-lived `sh -c CMD`; messages on stdin;", "it prints <<<TURN DONE>>> to end a turn"),
    ),
    ("inbox", ("write messages to .changeup/inbox/NNN.md; create NNN.done to end a turn",)),
    ("human", ("a person: each message shown here (and in the inbox); Enter or NNN.done ends a turn",)),
)

SPEC_HELP = "\n".join(
    f"{spec:25}{lines[0]}" + "".join(f"\n{'':25}{line}" for line in lines[1:]) for spec, lines in BUILT_INS
) + (
    "\nclaude-code, codex, aider, gemini-cli, mini-swe-agent, openhands\n"
    "                         a coding agent's CLI, once per message, continuing its conversation\n"
    "                         (`changeup agents` lists them); set --agent-option model=…, flags=…,\n"
    "                         binary=… or unattended=…"
)


#: Where each adapter name of ``__all__`` is defined: loaded on first use (PEP 562), so that
#: reading :data:`SPEC_HELP` (``changeup run --help``) loads no adapter.
_HOMES = {
    "AgentUnavailable": "base",
    "TurnAgent": "base",
    "HumanAgent": "human",
    "IMPOSTORS": "impostor",
    "ImpostorAgent": "impostor",
    "InboxAgent": "inbox",
    "PRESETS": "presets",
    "PresetAgent": "presets",
    "ScriptedAgent": "scripted",
    "CommandAgent": "shell",
    "ProcessAgent": "shell",
}


def __getattr__(name: str) -> object:
    """``orchestrator.agents.NAME``: imports NAME's module the first time it is asked for."""
    if name not in _HOMES:
        raise AttributeError(f"module 'orchestrator.agents' has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)


class AgentSpecError(ValueError):
    """An ``--agent`` value that names no adapter."""


def parse_agent(spec: str, options: Mapping[str, str] | None = None) -> Agent:
    """The adapter an ``--agent`` spec names; ``options`` (``--agent-option``) configure a preset."""
    from orchestrator.agents.human import HumanAgent
    from orchestrator.agents.impostor import IMPOSTORS, ImpostorAgent
    from orchestrator.agents.inbox import InboxAgent
    from orchestrator.agents.presets import OPTIONS, PRESETS, PresetOptionError
    from orchestrator.agents.scripted import ScriptedAgent
    from orchestrator.agents.shell import CommandAgent, ProcessAgent

    options = dict(options or {})
    preset = PRESETS.get(spec)
    if preset is not None:
        try:
            return preset(options)
        except PresetOptionError as error:
            raise AgentSpecError(str(error)) from None
    if options:
        raise AgentSpecError(
            f"--agent-option is for the presets ({', '.join(PRESETS)}), not {spec!r}; "
            f"they take: {', '.join(OPTIONS)}"
        )
    kind, _, rest = spec.partition(":")
    if kind == "scripted":
        return ScriptedAgent(rest or "reference")
    if kind == "impostor":
        if rest not in IMPOSTORS:
            raise AgentSpecError(f"impostor:{rest} is not one; there are: {', '.join(IMPOSTORS)}")
        return ImpostorAgent(rest)
    if kind in ("command", "process"):
        if not rest.strip():
            raise AgentSpecError(f"'{kind}:' needs a command, e.g. {kind}:./my-agent.sh")
        return CommandAgent(rest) if kind == "command" else ProcessAgent(rest)
    if kind == "inbox" and not rest:
        return InboxAgent()
    if kind == "human" and not rest:
        return HumanAgent()
    raise AgentSpecError(f"unknown agent {spec!r}; one of:\n{SPEC_HELP}")

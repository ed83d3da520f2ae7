"""Agent adapters behind one protocol, chosen by an ``--agent`` spec."""

from __future__ import annotations

from orchestrator.agents.base import (
    Agent,
    AgentContext,
    AgentUnavailable,
    Mailbox,
    Message,
    TurnAgent,
)
from orchestrator.agents.inbox import InboxAgent
from orchestrator.agents.scripted import ScriptedAgent
from orchestrator.agents.shell import CommandAgent, ProcessAgent

__all__ = [
    "SPEC_HELP",
    "Agent",
    "AgentContext",
    "AgentSpecError",
    "AgentUnavailable",
    "CommandAgent",
    "InboxAgent",
    "Mailbox",
    "Message",
    "ProcessAgent",
    "ScriptedAgent",
    "TurnAgent",
    "parse_agent",
]

SPEC_HELP = """\
scripted                 apply the challenge's reference solution, phase by phase
scripted:broken/NAME     apply a deliberately broken variant
command:CMD              run `sh -c CMD` once per message (message on stdin and in $CHANGEUP_MESSAGE_FILE)
process:CMD              one long-lived `sh -c CMD`; messages on stdin;
                         it prints <<<TURN DONE>>> to end a turn
inbox                    write messages to .changeup/inbox/NNN.md; create NNN.done to end a turn"""


class AgentSpecError(ValueError):
    """An ``--agent`` value that names no adapter."""


def parse_agent(spec: str) -> Agent:
    """The adapter an ``--agent`` spec names."""
    kind, _, rest = spec.partition(":")
    if kind == "scripted":
        return ScriptedAgent(rest or "reference")
    if kind in ("command", "process"):
        if not rest.strip():
            raise AgentSpecError(f"'{kind}:' needs a command, e.g. {kind}:./my-agent.sh")
        return CommandAgent(rest) if kind == "command" else ProcessAgent(rest)
    if kind == "inbox" and not rest:
        return InboxAgent()
    raise AgentSpecError(f"unknown agent {spec!r}; one of:\n{SPEC_HELP}")

"""Which network an agent gets: ``full``, ``none`` or ``model``, and why.

``--agent-network`` given always wins. Otherwise a vendor preset (a
:class:`~orchestrator.agents.presets.base.PresetAgent`) gets ``model``, its model gateway and
nothing else, where that can work: bubblewrap makes its network namespace, and the gateway can
answer it (it holds a key of the preset's provider in changeup's environment, or
``--model-upstream`` or a ``--replay-model`` without a fork answers every request). Where it
cannot (no bubblewrap; a CLI logged in with its own login and no API key), the preset keeps
``full``, and the choice says why: :class:`NetworkChoice` is recorded with the run's sandbox
(``workspace.created`` and the manifest) and warned about, never a silent downgrade. Every
other agent (``scripted``, ``command:``, ``process:``, ``inbox``, ``human``) keeps ``full``.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Literal

from orchestrator.agents.presets.base import PresetAgent
from orchestrator.gateway.providers import PROVIDERS, Upstreams
from orchestrator.grading.sandbox import Sandbox
from orchestrator.seams import Agent

__all__ = ["NETWORKS", "Network", "NetworkChoice", "choose_network", "network_name"]

Network = Literal["full", "none", "model"]
#: The networks, in ``--agent-network``'s words.
NETWORKS: tuple[str, ...] = typing.get_args(Network)
#: Each name ``--agent-network`` takes → its network: ``on`` is ``full``'s older name, still accepted.
_NAMES: dict[str, Network] = {"full": "full", "none": "none", "model": "model", "on": "full"}


def network_name(value: str) -> Network:
    """``value`` (a network, or ``on``) as its :data:`Network` name; ValueError for neither."""
    try:
        return _NAMES[value]
    except KeyError:
        choose = ", ".join(NETWORKS)
        raise ValueError(f"{value!r} is no agent network; choose one of {choose} (on: full)") from None


@dataclass(frozen=True, slots=True)
class NetworkChoice:
    """The agent's network; ``given``: ``--agent-network`` named it (else it is the default);
    ``why``: in words, for the record and, when a preset keeps ``full``, the warning."""

    network: Network
    given: bool
    why: str
    #: A vendor preset's default that could not be ``model``: said in a warning.
    fell_back: bool = False

    def describe(self) -> dict[str, str]:
        """For the record: ``{network, chosen: given|default, why}``."""
        return {"network": self.network, "chosen": "given" if self.given else "default", "why": self.why}


_FELL_BACK = "the model-only network cannot work here"


def choose_network(
    agent: Agent, given: str | None, upstreams: Upstreams, sandbox: Sandbox, *, replay: bool = False
) -> NetworkChoice:
    """The network of ``agent``: ``given`` (``--agent-network``, None: not given), else its default
    here: ``model`` for a vendor preset whose gateway, with ``upstreams`` (``--model-upstream``
    or changeup's keys) or a ``replay`` answering every request, can serve it inside ``sandbox``."""
    if given is not None:
        return NetworkChoice(network_name(given), True, "--agent-network")
    if not isinstance(agent, PresetAgent):
        return NetworkChoice("full", False, f"{agent.name} is no vendor preset: it keeps the whole network")
    if sandbox.kind != "bubblewrap":
        why = f"{_FELL_BACK}: it needs bubblewrap's network namespace, and {sandbox.reason}"
        return NetworkChoice("full", False, why, fell_back=True)
    if upstreams.override or replay:
        answered = "--model-upstream" if upstreams.override else "--replay-model"
        return NetworkChoice("model", False, f"{agent.preset}: its model gateway answers through {answered}")
    provider = agent.model_provider()
    if provider is None:
        return NetworkChoice(
            "full",
            False,
            f"{_FELL_BACK}: which provider serves {agent.preset}'s model is not known (give "
            "--agent-option model=PROVIDER/MODEL, or --agent-network model)",
            fell_back=True,
        )
    if provider not in upstreams.keys:
        names = next(" or ".join(p.key_vars) for p in PROVIDERS if p.name == provider)
        return NetworkChoice(
            "full",
            False,
            f"{_FELL_BACK}: changeup's environment holds no {provider} API key ({names}) for the "
            f"gateway to add, and through the gateway {agent.preset}'s own login is not used",
            fell_back=True,
        )
    return NetworkChoice("model", False, f"{agent.preset}: the gateway holds its {provider} key")

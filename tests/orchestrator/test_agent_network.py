"""Which network an agent gets: ``--agent-network`` given, else ``model`` for a vendor preset where
it can work, ``full`` (saying why) where it cannot and for every other agent."""

from __future__ import annotations

import pytest

from orchestrator.agents import parse_agent
from orchestrator.gateway.providers import Upstreams
from orchestrator.grading.sandbox import Sandbox
from orchestrator.run.agent_network import choose_network, network_name

BUBBLEWRAP = Sandbox("bubblewrap")
NO_BUBBLEWRAP = Sandbox("user", "CHANGEUP_SANDBOX=user was set")
KEYS = Upstreams.from_env({"ANTHROPIC_API_KEY": "sk-ant-x", "OPENAI_API_KEY": "sk-o", "GEMINI_API_KEY": "g"})
NO_KEYS = Upstreams.from_env({})


@pytest.mark.parametrize(
    ("spec", "options"),
    [
        ("claude-code", {}),
        ("codex", {}),
        ("gemini-cli", {}),
        ("aider", {"model": "sonnet"}),
        ("mini-swe-agent", {"model": "anthropic/claude-sonnet-4-5"}),
        ("openhands", {"model": "gpt-5"}),
        ("openhands", {"model": "gemini/gemini-2.5-pro"}),
    ],
)
def test_a_vendor_preset_whose_key_the_gateway_holds_gets_the_model_only_network(
    spec: str, options: dict[str, str]
) -> None:
    """With bubblewrap and its provider's key in changeup's environment: ``model``, by default."""
    choice = choose_network(parse_agent(spec, options), None, KEYS, BUBBLEWRAP)
    assert (choice.network, choice.given, choice.fell_back) == ("model", False, False)
    assert choice.describe()["chosen"] == "default"


def test_a_preset_without_its_providers_key_keeps_the_whole_network_and_says_why() -> None:
    """A CLI logged in with its own login (no API key here): ``full``, a fallback naming the key."""
    only_openai = Upstreams.from_env({"OPENAI_API_KEY": "sk-o"})
    choice = choose_network(parse_agent("claude-code", {}), None, only_openai, BUBBLEWRAP)
    assert (choice.network, choice.fell_back) == ("full", True)
    assert "no anthropic API key (ANTHROPIC_API_KEY)" in choice.why
    assert choose_network(parse_agent("codex", {}), None, only_openai, BUBBLEWRAP).network == "model"


def test_without_bubblewrap_a_preset_keeps_the_whole_network_and_says_why() -> None:
    """No network namespace: ``full``, the sandbox's reason in the why."""
    choice = choose_network(parse_agent("claude-code", {}), None, KEYS, NO_BUBBLEWRAP)
    assert (choice.network, choice.fell_back) == ("full", True)
    assert "CHANGEUP_SANDBOX=user was set" in choice.why


def test_an_upstream_or_a_replay_answers_whatever_the_keys() -> None:
    """``--model-upstream`` (or a replay without a fork) serves every provider: ``model``, keys or not."""
    upstream = Upstreams.from_env({}, "http://127.0.0.1:9")
    assert choose_network(parse_agent("gemini-cli", {}), None, upstream, BUBBLEWRAP).network == "model"
    assert choose_network(parse_agent("aider", {}), None, upstream, BUBBLEWRAP).network == "model"
    replayed = choose_network(parse_agent("claude-code", {}), None, NO_KEYS, BUBBLEWRAP, replay=True)
    assert replayed.network == "model"


def test_a_litellm_preset_whose_provider_is_unknown_keeps_the_whole_network() -> None:
    """Aider with no model (or one no provider is known for): which key it needs cannot be told."""
    for options in ({}, {"model": "deepseek/deepseek-chat"}):
        choice = choose_network(parse_agent("aider", options), None, KEYS, BUBBLEWRAP)
        assert (choice.network, choice.fell_back) == ("full", True)
        assert "--agent-option model=PROVIDER/MODEL" in choice.why


@pytest.mark.parametrize("spec", ["scripted", "command:true", "inbox", "human"])
def test_every_other_agent_keeps_the_whole_network_silently(spec: str) -> None:
    """Not a vendor preset: ``full``, no warning."""
    choice = choose_network(parse_agent(spec, {}), None, KEYS, BUBBLEWRAP)
    assert (choice.network, choice.fell_back) == ("full", False)


def test_a_given_network_always_wins() -> None:
    """``--agent-network`` given is taken as given, ``on`` as ``full``; an unknown name is refused."""
    agent = parse_agent("claude-code", {})
    assert choose_network(agent, "on", KEYS, BUBBLEWRAP).describe() == {
        "network": "full",
        "chosen": "given",
        "why": "--agent-network",
    }
    assert choose_network(agent, "model", NO_KEYS, NO_BUBBLEWRAP).network == "model"
    assert choose_network(parse_agent("scripted", {}), "none", KEYS, BUBBLEWRAP).network == "none"
    with pytest.raises(ValueError, match="'off' is no agent network; choose one of full, none, model"):
        network_name("off")

"""What the agent is given to reach its model, and what it must never hold.

:func:`agent_variables` are the variables every agent gets (presets, ``command:`` and
``process:`` agents alike): each CLI's base-URL variables pointing at the gateway, and the
session token in each of its key variables. The real keys are taken out of the agent's
environment by the agent's sandbox (by value, whatever the variable's name:
``AgentSandbox.give``), and :func:`scrub_home` takes them out of the files that seeded its
private HOME (a CLI's config holding a key gets the token in its place).

:class:`GatewaySettings` is what a run is told (``--model-gateway``, ``--model-upstream``,
``--prices``, ``--budget``, ``--agent-network model``): read once, where changeup starts, from
changeup's own environment.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from orchestrator.gateway.budget import Limits
from orchestrator.gateway.fork import Fork
from orchestrator.gateway.prices import PriceTable
from orchestrator.gateway.providers import Upstreams
from orchestrator.gateway.recording import FOLDER, read_exchanges

__all__ = ["HOME_FILE_BYTES", "GatewaySettings", "agent_variables", "scrub_home"]

#: The largest file of the private HOME searched for a key.
HOME_FILE_BYTES = 16 << 20


def agent_variables(url: str, token: str) -> dict[str, str]:
    """The base-URL and key variables of every CLI changeup knows, pointing at the gateway at ``url``.

    Anthropic's: Claude Code and LiteLLM; OpenAI's: Codex, the OpenAI SDKs and LiteLLM (``/v1``
    included, as they expect it); Gemini's: Gemini CLI and LiteLLM. ``CHANGEUP_MODEL_GATEWAY``
    and ``CHANGEUP_MODEL_TOKEN`` name them for a home-made agent.
    """
    anthropic, openai, gemini = f"{url}/anthropic", f"{url}/openai/v1", f"{url}/gemini"
    return {
        "CHANGEUP_MODEL_GATEWAY": url,
        "CHANGEUP_MODEL_TOKEN": token,
        "ANTHROPIC_BASE_URL": anthropic,
        "ANTHROPIC_API_BASE": anthropic,
        "ANTHROPIC_API_KEY": token,
        "OPENAI_BASE_URL": openai,
        "OPENAI_API_BASE": openai,
        "OPENAI_API_KEY": token,
        "CODEX_API_KEY": token,
        "GOOGLE_GEMINI_BASE_URL": gemini,
        "GEMINI_API_BASE": gemini,
        "GEMINI_API_KEY": token,
        "GOOGLE_API_KEY": token,
        "LLM_API_KEY": token,
    }


@dataclass(frozen=True, slots=True)
class GatewaySettings:
    """A run's gateway: where it forwards, with which keys, priced by which table, within which
    budget (None: none); ``model_only``: the gateway is all of the agent's network
    (``--agent-network model``); ``replay``: the recorded run whose answers it serves instead
    (``--replay-model``), up to ``fork``, if any."""

    upstreams: Upstreams
    prices: PriceTable
    budget: Limits | None = None
    model_only: bool = False
    replay: Path | None = None
    fork: Fork | None = None

    @classmethod
    def read(
        cls,
        env: Mapping[str, str],
        upstream: str | None = None,
        prices: Path | None = None,
        budget: Limits | None = None,
        replay: Path | None = None,
        fork: Fork | None = None,
    ) -> GatewaySettings:
        """The keys and roots of ``env``, ``upstream`` for all (``--model-upstream``), the price
        table at ``prices`` (None: the shipped one), the session's ``budget`` (``--budget``), the run
        to ``replay`` and where it forks. Raises :class:`~orchestrator.gateway.prices.PriceTableError`,
        and :class:`~orchestrator.gateway.recording.RecordingError` when ``replay`` holds no recording."""
        if replay is not None:
            read_exchanges(replay / FOLDER)
        return cls(Upstreams.from_env(env, upstream), PriceTable.load(prices), budget, False, replay, fork)


def scrub_home(home: Path, keys: Sequence[str], token: str) -> list[str]:
    """Replace each of ``keys`` by ``token`` in every regular file under ``home`` (no link
    followed; a file over :data:`HOME_FILE_BYTES`, too large to search, is removed); returns
    the files changed or removed, relative to ``home``."""
    wanted = [key.encode() for key in keys if key]
    changed: list[str] = []
    if not wanted:
        return changed
    for folder, _, names in os.walk(home, followlinks=False):
        for name in names:
            path = Path(folder) / name
            info = path.lstat()
            if not stat.S_ISREG(info.st_mode):
                continue
            if info.st_size > HOME_FILE_BYTES:
                path.unlink()
                changed.append(path.relative_to(home).as_posix())
                continue
            data = path.read_bytes()
            if not any(key in data for key in wanted):
                continue
            for key in wanted:
                data = data.replace(key, token.encode())
            with path.open("r+b") as handle:  # in place: its owner and mode stay
                handle.write(data)
                handle.truncate()
            changed.append(path.relative_to(home).as_posix())
    return changed

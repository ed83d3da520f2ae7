"""How each real CLI is pointed at the scripted model server, and what it is scripted to do.

:func:`setup` writes what a user would write to use a CLI with their own endpoint — its
configuration files in a HOME of the test's own (the agent sandbox seeds the private HOME from
it), the variables of its base URL and API key — and answers the ``changeup run`` options and
environment that go with them. Every API key is :data:`SECRET`, a value the tests look for
in everything changeup keeps.

:func:`export_time_script` is the work on ``challenges/export-time``: read the stub, write the
phase's reference solution and a test of its own, run the tests, then say it is done. With
``hold=True`` the first turn stops after writing the solution, waiting for the interrupt.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.cli import REPO
from tests.modelserver import Hold, Part, Read, Run, Say, Script, Write
from tests.realcli.pins import CLIS

__all__ = ["EXPORT_TIME", "FINAL", "MODEL", "PRICES", "SECRET", "Setup", "export_time_script", "setup"]

EXPORT_TIME = REPO / "challenges" / "export-time"
#: The API key every CLI is given: a fake one, recognisable wherever it leaks.
SECRET = "sk-changeup-fake-7f3e9a2b4c1d"
#: The model the LiteLLM-based CLIs ask for, and its price per token (registered with each).
MODEL = "openai/changeup-scripted"
PRICES = {"input": 2e-06, "output": 8e-06, "cache_read": 5e-07}

PHASE1_TEST = """from datetime import datetime, timedelta, timezone

from export_time import format_export_time


def test_keeps_the_offset():
    value = datetime(2026, 11, 8, 0, 15, tzinfo=timezone(timedelta(hours=5, minutes=30)))
    assert format_export_time(value) == "2026-11-08T00:15:00+05:30"
"""
PHASE2_TEST = """from datetime import datetime, timedelta, timezone

from export_time import format_export_time


def test_in_utc_with_z():
    value = datetime(2026, 11, 8, 0, 15, tzinfo=timezone(timedelta(hours=5, minutes=30)))
    assert format_export_time(value) == "2026-11-07T18:45:00Z"
"""
#: What each turn ends with: the transcript's final message must be this.
FINAL = {"phase1": "Phase 1 done: the offset is kept as given.", "phase2": "Phase 2 done: UTC, ending in Z."}


def export_time_script(*, hold: bool = False, probes: Sequence[str] = ()) -> Script:
    """The scripted work on export-time, one part per message (found by a phrase of each); in
    the first, a shell command that tries to connect to each of ``probes`` (``host:port``)."""
    reference = EXPORT_TIME / "solutions" / "reference"
    first: list[Read | Write | Run | Say | Hold] = [
        Read("export_time.py"),
        Write("export_time.py", (reference / "phase1" / "export_time.py").read_text()),
    ]
    first += [Hold()] if hold else []
    first += [Run(_connect(probe)) for probe in probes]
    first += [
        Write("test_offset_mine.py", PHASE1_TEST),
        Run("python3 -m pytest -q test_offset_mine.py"),
        Say(FINAL["phase1"]),
    ]
    second = (
        Read("export_time.py"),
        Write("export_time.py", (reference / "phase2" / "export_time.py").read_text()),
        Write("test_utc_mine.py", PHASE2_TEST),
        Run("python3 -m pytest -q test_utc_mine.py"),
        Say(FINAL["phase2"]),
    )
    return Script(
        (
            Part("phase1", "UTC offset exactly as given", tuple(first)),
            Part("phase2", "Preserve microseconds when present", second),
        )
    )


def _connect(address: str) -> str:
    """A shell command that tries a TCP connection to ``address`` and says what came of it."""
    host, port = address.rsplit(":", 1)
    code = f"import socket; socket.create_connection(({host!r}, {port}), timeout=10); print('connected')"
    return f'python3 -c "{code}" || true'


@dataclass(slots=True)
class Setup:
    """What ``changeup run`` is given for one CLI."""

    env: dict[str, str | None] = field(default_factory=dict)
    options: list[str] = field(default_factory=list)  # --agent-option values
    shares: list[str] = field(default_factory=list)  # --agent-share values


def _litellm_prices() -> dict[str, dict[str, object]]:
    """LiteLLM's model registry entry for :data:`MODEL` (its prices: cost is then exact)."""
    entry = {
        "input_cost_per_token": PRICES["input"],
        "output_cost_per_token": PRICES["output"],
        "cache_read_input_token_cost": PRICES["cache_read"],
        "litellm_provider": "openai",
        "mode": "chat",
        "max_input_tokens": 200000,
        "max_output_tokens": 8192,
        "max_tokens": 8192,
        "supports_function_calling": True,
    }
    return {MODEL: entry, MODEL.split("/", 1)[1]: entry}


def setup(preset: str, url: str, home: Path, shared: Path, *, gateway: bool = False) -> Setup:
    """Point ``preset``'s CLI at ``url``: files in ``home`` (the HOME it is seeded from) and in
    ``shared`` (shown to the agent read-only), variables, options. With ``gateway``, changeup's
    model gateway points it (Codex then uses its built-in provider, whose base URL it sets)."""
    cli = CLIS[preset]
    home.mkdir(parents=True, exist_ok=True)
    shared.mkdir(parents=True, exist_ok=True)
    common: dict[str, str | None] = {
        "HOME": str(home),
        "PATH": f"{cli.bin}:/usr/local/bin:/usr/bin:/bin",
        # A key of another CLI must not reach this one's log either; each gets the fake one.
        "ANTHROPIC_API_KEY": None,
        "OPENAI_API_KEY": None,
        "GEMINI_API_KEY": None,
        "GOOGLE_API_KEY": None,
        # LiteLLM fetches its price list from the internet at start unless told not to.
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    if preset == "claude-code":
        return Setup(
            {
                **common,
                "ANTHROPIC_BASE_URL": url,
                "ANTHROPIC_API_KEY": SECRET,
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            },
            ["model=claude-sonnet-4-5"],
        )
    if preset == "codex":
        (home / ".codex").mkdir(exist_ok=True)
        (home / ".codex" / "config.toml").write_text(
            'model = "gpt-5.2-codex"\n'
            if gateway
            else 'model = "gpt-5.2-codex"\nmodel_provider = "scripted"\n\n[model_providers.scripted]\n'
            f'name = "scripted"\nbase_url = "{url}/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n'
        )
        return Setup({**common, "OPENAI_API_KEY": SECRET})
    if preset == "gemini-cli":
        (home / ".gemini").mkdir(exist_ok=True)
        settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
        (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
        return Setup(
            {**common, "GOOGLE_GEMINI_BASE_URL": url, "GEMINI_API_KEY": SECRET}, ["model=gemini-2.5-pro"]
        )
    registry = shared / "model-prices.json"
    registry.write_text(json.dumps(_litellm_prices()))
    openai = {
        **common,
        "OPENAI_API_KEY": SECRET,
        "OPENAI_API_BASE": f"{url}/v1",
        "OPENAI_BASE_URL": f"{url}/v1",
    }
    if preset == "aider":
        (home / ".aider.model.metadata.json").write_text(json.dumps(_litellm_prices()))
        return Setup(openai, [f"model={MODEL}", "flags=--edit-format whole --no-show-model-warnings"])
    if preset == "mini-swe-agent":
        env = {**openai, "LITELLM_MODEL_REGISTRY_PATH": str(registry)}
        return Setup(env, [f"model={MODEL}"], [str(shared)])
    if preset == "openhands":
        env = {**openai, "LLM_BASE_URL": f"{url}/v1", "LLM_API_KEY": SECRET, "OPENHANDS_SUPPRESS_BANNER": "1"}
        return Setup(env, [f"model={MODEL}"], [str(shared)])
    raise KeyError(preset)

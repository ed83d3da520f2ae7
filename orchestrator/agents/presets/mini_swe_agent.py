"""mini-swe-agent: ``mini -t …`` once per turn (a new task each time), and its trajectory file."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from orchestrator.agents.presets.base import PresetAgent, TurnArgs, package_version_argv
from orchestrator.agents.redaction import Redactor
from orchestrator.agents.transcript import Usage, as_dict, as_int, as_number, as_text, total
from orchestrator.seams import AgentContext
from orchestrator.system.agentfiles import AgentFolder

__all__ = ["MiniSweAgent", "mini_trajectory_usage"]

#: The largest trajectory file read for a turn's usage.
TRAJECTORY_BYTES = 64 << 20


class MiniSweAgent(PresetAgent):
    """``mini -y --exit-immediately -t …``: one task per run, so earlier messages are resent."""

    preset = "mini-swe-agent"
    binary = "mini"
    title = "mini-swe-agent"
    docs = (
        "https://mini-swe-agent.com/latest/usage/mini/ (-t, -y, -m, -o, --exit-immediately)",
        "src/minisweagent/run/mini.py and run/extra/config.py (MSWEA_CONFIGURED skips first-run setup)",
    )
    continuity = "none: each run is a new task, so earlier messages are sent again before the new one"
    message_via = "argument"
    env_names = ("MSWEA_", "LITELLM_")
    home_files = (".config/mini-swe-agent/.env",)
    any_api_key = True
    unattended_default = ("-y",)

    def arguments(self, turn: TurnArgs) -> list[str]:
        """``mini -y --exit-immediately -o TRAJECTORY … -t MESSAGE``."""
        return [
            *self.unattended,
            "--exit-immediately",
            "-o",
            f"{turn.agent_dir}/mini-{turn.tag}.traj.json",
            *(["-m", self.model] if self.model else []),
            *self.flags,
            "-t",
            turn.prompt,
        ]

    def continues(self) -> bool:
        """It cannot."""
        return False

    def extra_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """Skip the interactive first-run setup."""
        return {} if env.get("MSWEA_CONFIGURED") else {"MSWEA_CONFIGURED": "true"}

    def read_usage(self, ctx: AgentContext, usage: Usage) -> Usage:
        """Cost, model and last message from its trajectory file."""
        return mini_trajectory_usage(self._trajectory(ctx), self._redact)

    def files_to_redact(self, ctx: AgentContext) -> list[Path]:
        """Its trajectory."""
        return [self._trajectory(ctx)]

    def _trajectory(self, ctx: AgentContext) -> Path:
        return ctx.folder / f"mini-{self._turns:03d}.traj.json"

    def version_argv(self, path: str) -> list[str] | None:
        """``mini`` has no ``--version``: the Python its script runs on reads the package's version."""
        return package_version_argv(path, "mini-swe-agent")


def mini_trajectory_usage(path: Path, redact: Redactor) -> Usage:
    """What mini-swe-agent's trajectory file (``-o``) says: cost, tokens (from each answer's API
    response), the model and its last message."""
    usage = Usage()
    try:  # a regular file in the agent folder (``path.parent``), read through no link, bounded
        content = AgentFolder(path.parent).read(path.name, limit=TRAJECTORY_BYTES)
        data = json.loads(content.data) if not content.capped else None
    except (OSError, ValueError):
        return usage
    if not isinstance(data, dict):
        return usage
    info = as_dict(data.get("info"))
    stats = as_dict(info.get("model_stats"))
    cost, calls = stats.get("instance_cost"), stats.get("api_calls")
    # mini writes 0.0 when its model has no price: with calls made, that is "not known", not free.
    number = as_number(cost)
    if number is not None and (number > 0 or not calls):
        usage.cost_usd = number
    usage.model = str(as_dict(as_dict(info.get("config")).get("model")).get("model_name") or "")
    messages = [m for m in data.get("messages") or [] if isinstance(m, dict)]
    # Each model answer keeps its whole API response (LiteLLM's), usage included: summed here.
    calls = [as_dict(as_dict(as_dict(m.get("extra")).get("response")).get("usage")) for m in messages]
    calls = [c for c in calls if c]
    usage.input_tokens = total(as_int(c.get("prompt_tokens")) for c in calls)
    usage.output_tokens = total(as_int(c.get("completion_tokens")) for c in calls)
    usage.cache_read_tokens = total(
        as_int(as_dict(c.get("prompt_tokens_details")).get("cached_tokens")) for c in calls
    )
    usage.cache_write_tokens = total(as_int(c.get("cache_creation_input_tokens")) for c in calls)
    said = [m.get("content") for m in messages if m.get("role") == "assistant"]
    final = as_text(info.get("submission")) or (as_text(said[-1]) if said else None)
    usage.final_message = redact(final) if final else None
    return usage

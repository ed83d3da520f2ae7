"""The run manifest: what exactly ran, frozen in the run folder before the agent starts.

``manifest.json`` records the agent (its preset, binary, ``--version`` output, model, flags,
the command line of a first and of a continued turn, and the environment variables that
change its behaviour), changeup's version, the challenge and its sha256, the time limits and
the sandbox settings. It is written once: a manifest already in the folder is kept.

No secret is written: a variable whose name marks a secret (``*_API_KEY``, ``*_TOKEN``, …)
is listed with the value ``[redacted]``, and the value of every such variable, and of any
secret-named flag, is redacted wherever else it would appear.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import platform
from collections.abc import Mapping
from functools import partial
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

import anyio

from orchestrator.agents.presets import binary_version, resolve_binary
from orchestrator.agents.redaction import Redactor, masked_env
from orchestrator.challenge.model import Challenge
from orchestrator.log.manifest import MANIFEST_VERSION, Manifest, load_manifest, manifest_json
from orchestrator.seams import Agent

__all__ = ["MANIFEST", "freeze_manifest", "run_manifest", "write_manifest"]

MANIFEST = "manifest.json"


async def freeze_manifest(
    run_folder: Path,
    challenge: Challenge,
    agent: Agent,
    *,
    sandbox: Any = None,
    env: Mapping[str, str] | None = None,
    start_at: str | None = None,
) -> Manifest:
    """Write ``run_folder/manifest.json`` (unless one is there) and return it; runs ``--version``."""
    write = partial(write_manifest, run_folder, challenge, agent, sandbox=sandbox, env=env, start_at=start_at)
    return await anyio.to_thread.run_sync(write)


def write_manifest(
    run_folder: Path,
    challenge: Challenge,
    agent: Agent,
    *,
    sandbox: Any = None,
    env: Mapping[str, str] | None = None,
    start_at: str | None = None,
) -> Manifest:
    """Blocking :func:`freeze_manifest`."""
    path = run_folder / MANIFEST
    if path.exists():
        return load_manifest(path)
    manifest = run_manifest(challenge, agent, sandbox=sandbox, env=env, start_at=start_at)
    partial_path = path.with_name(MANIFEST + ".partial")
    partial_path.write_text(manifest_json(manifest), encoding="utf-8")
    partial_path.replace(path)
    return manifest


def run_manifest(
    challenge: Challenge,
    agent: Agent,
    *,
    sandbox: Any = None,
    env: Mapping[str, str] | None = None,
    start_at: str | None = None,
) -> Manifest:
    """The manifest of a run of ``challenge`` by ``agent``, secrets redacted; ``start_at``: the
    phase it starts at when that is a later one (``--start-at``)."""
    env = dict(os.environ if env is None else env)
    describe = getattr(agent, "describe", None)
    described: dict[str, Any] = dict(describe()) if callable(describe) else {}
    flag_secrets = getattr(agent, "flag_secrets", None)
    redact = Redactor.from_env(env, extra=flag_secrets() if callable(flag_secrets) else None)
    agent_part: dict[str, Any] = {"name": agent.name, **described}
    command = getattr(agent, "command", None)
    if "preset" not in described and command is not None:
        agent_part["command"] = command
    executable = getattr(agent, "executable", None)
    if isinstance(executable, str):
        path = resolve_binary(executable, env.get("PATH"))
        version_argv = getattr(agent, "version_argv", None)
        agent_part["path"] = path
        agent_part["version"] = (
            binary_version(version_argv(path)) if path and callable(version_argv) else None
        )
    affecting = getattr(agent, "affecting_env", None)
    if callable(affecting):
        agent_part["environment"] = masked_env(affecting(env))
    limits = challenge.model.limits
    manifest = {
        "manifest_version": MANIFEST_VERSION,
        "frozen_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "changeup": {
            "version": package_version("changeup"),
            "python": platform.python_version(),
            "platform": f"{platform.system()} {platform.release()} {platform.machine()}",
        },
        "challenge": {
            "id": challenge.id,
            "title": challenge.model.title,
            "sha256": challenge.digest,
            "path": str(challenge.root),
            "phases": [phase.id for phase in challenge.phases],
            "start_at": start_at,
        },
        "limits": {
            "session_seconds": limits.session,
            "test_run_seconds": limits.test_run,
            "agent_turn_seconds": limits.agent_turn,
        },
        "agent": agent_part,
        "sandbox": _plain(sandbox),
    }
    return Manifest.model_validate(redact.value(json.loads(json.dumps(manifest, default=str))))


def _plain(value: Any) -> Any:
    """Sandbox settings as JSON: a dataclass, a pydantic model, a mapping, or anything printable."""
    if value is None:
        return None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, Mapping):
        return dict(value)
    return value if isinstance(value, str | int | float | bool | list) else str(value)

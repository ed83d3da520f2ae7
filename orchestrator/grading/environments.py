"""Python environments for challenges: built once from ``requirements:``, cached by content hash.

A challenge that declares pip requirements gets a virtual environment with pytest and
those requirements under ``$CHANGEUP_CACHE/envs/<hash>/`` (default ``~/.cache/changeup``).
The hash covers the requirements and the Python version, so equal requirements share one
environment across challenges and runs. Building takes a file lock, so concurrent runs
build it once, and a ``.ready`` marker is written only when it is complete. A challenge with no
requirements uses changeup's own interpreter.

A build that fails is an environment failure: the run is invalid, never an agent's zero.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Environment", "EnvironmentFailure", "cache_root", "environment_for"]

BUILD_TIMEOUT = 900.0


class EnvironmentFailure(RuntimeError):
    """The environment could not be built; the message holds pip's last words."""


@dataclass(frozen=True, slots=True)
class Environment:
    """Where the hidden tests' Python lives, and the folder to put first on the agent's PATH."""

    python: str
    bin: Path | None = None

    def agent_env(self, env: dict[str, str]) -> dict[str, str]:
        """``env`` with this environment's ``bin`` first on ``PATH`` (and ``VIRTUAL_ENV``)."""
        if self.bin is None:
            return env
        return {
            **env,
            "PATH": f"{self.bin}{os.pathsep}{env.get('PATH', '')}",
            "VIRTUAL_ENV": str(self.bin.parent),
        }


def cache_root() -> Path:
    """``$CHANGEUP_CACHE``, else ``~/.cache/changeup``."""
    configured = os.environ.get("CHANGEUP_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "changeup"


def _key(requirements: Sequence[str]) -> str:
    identity = {
        "python": list(sys.version_info[:3]),
        "requirements": sorted(requirements),
        "with": ["pytest"],
    }
    return hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:16]


def environment_for(requirements: Sequence[str]) -> Environment:
    """The environment for ``requirements``, building it if no one has yet (blocking)."""
    if not requirements:
        return Environment(sys.executable)
    envs = cache_root() / "envs"
    envs.mkdir(parents=True, exist_ok=True)
    target = envs / _key(requirements)
    with (envs / f"{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / ".ready").exists():
            _build(target, requirements)
    return Environment(str(target / "bin" / "python"), target / "bin")


def _build(target: Path, requirements: Sequence[str]) -> None:
    # Built in place (a venv's scripts name their own path); `.ready` marks it complete,
    # so a build that died half-way is started again from scratch.
    shutil.rmtree(target, ignore_errors=True)
    try:
        _run([sys.executable, "-m", "venv", str(target)])
        _run([str(target / "bin" / "python"), "-m", "pip", "install", "--quiet", "pytest", *requirements])
    except EnvironmentFailure:
        shutil.rmtree(target, ignore_errors=True)
        raise
    (target / ".ready").write_text(json.dumps(sorted(requirements)) + "\n")


def _run(command: list[str]) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise EnvironmentFailure(f"{' '.join(command[:3])} … took longer than {BUILD_TIMEOUT:g}s") from None
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-8:])
        raise EnvironmentFailure(
            f"could not build the challenge's environment ({' '.join(command[-3:])}):\n{tail}"
        )

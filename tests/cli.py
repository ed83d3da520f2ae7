"""The changeup command line as a user starts it: one real process per call, for every test."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["CHANGEUP", "REPO", "changeup", "environment"]

REPO = Path(__file__).resolve().parents[1]
#: The command that starts changeup from this checkout (``python -m orchestrator``).
CHANGEUP = [sys.executable, "-m", "orchestrator"]


def environment(changes: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """This process's environment, 200 columns wide, with ``changes`` (None unsets a variable)."""
    env = {**os.environ, "COLUMNS": "200"}
    for name, value in (changes or {}).items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def changeup(
    *args: str, cwd: Path = REPO, timeout: float = 180, env: Mapping[str, str | None] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``changeup ARGS`` as a user would and wait for it (``env``: see :func:`environment`)."""
    return subprocess.run(
        [*CHANGEUP, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=environment(env),
    )

"""The changeup command line as a user starts it (one real process per call), and in this process
for checks of arguments and exit statuses that start no session."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import structlog
from click.testing import CliRunner, Result

from orchestrator.present.cli import cli

__all__ = ["CHANGEUP", "REPO", "changeup", "environment", "in_process"]

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


def in_process(*args: str, env: Mapping[str, str | None] | None = None) -> Result:
    """``changeup ARGS`` in this process through click's CliRunner (``env``: variables set, or unset
    with None, for the call), for a check of parsing and exit statuses that starts no session:
    ``result.output`` holds standard output and error. A command configures structlog to write to
    its captured standard error; the configuration before is put back, so later tests log as before.
    """
    saved = structlog.get_config()
    try:
        return CliRunner().invoke(cli, list(args), env=dict(env or {}))
    finally:
        structlog.configure(**saved)

"""The real agent CLIs the ``real_cli`` tests run: each one's package, pinned version and install place.

Everything is installed under one folder of the project's own (``.agents/`` at the top of the
checkout, git-ignored; ``CHANGEUP_AGENTS`` moves it): the npm CLIs with ``npm install -g
--prefix .agents/npm`` (a global-style layout under that prefix, never the machine's), each
PyPI CLI in a virtual environment of its own, ``.agents/<preset>/``. ``python -m
tests.realcli.install`` installs what is missing (``make test-agents`` runs it).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tests.cli import REPO

__all__ = ["AGENTS", "CLIS", "RealCli"]

#: Where the pinned CLIs are installed.
AGENTS = Path(os.environ.get("CHANGEUP_AGENTS") or REPO / ".agents")


@dataclass(frozen=True, slots=True)
class RealCli:
    """One real CLI: the preset that drives it, the package and the version it is pinned at."""

    preset: str
    registry: Literal["npm", "pypi"]
    package: str
    version: str
    program: str  # the command it installs
    python: str = "python3"  # the interpreter of a PyPI CLI's virtual environment
    #: Why ``make agents`` leaves it out unless asked (``--all``); "" for one it installs.
    optional: str = ""

    @property
    def prefix(self) -> Path:
        """Where it is installed (the npm prefix, or its virtual environment)."""
        return AGENTS / ("npm" if self.registry == "npm" else self.preset)

    @property
    def bin(self) -> Path:
        """The folder of its program: put first on PATH, the agent sandbox shows its installation."""
        return self.prefix / "bin"

    @property
    def requirement(self) -> str:
        """``package@version`` for npm, ``package==version`` for pip."""
        return (
            f"{self.package}@{self.version}" if self.registry == "npm" else f"{self.package}=={self.version}"
        )

    def installed_version(self) -> str | None:
        """The version of the package installed here (None: not installed)."""
        if self.registry == "npm":
            manifest = self.prefix / "lib" / "node_modules" / self.package / "package.json"
            if not manifest.is_file():
                return None
            version = json.loads(manifest.read_text()).get("version")
            return version if isinstance(version, str) else None
        python = self.bin / "python"
        if not python.exists():
            return None
        done = subprocess.run(
            [str(python), "-c", f"import importlib.metadata as m; print(m.version({self.package!r}))"],
            capture_output=True,
            text=True,
            check=False,
        )
        return done.stdout.strip() if done.returncode == 0 else None


#: The CLIs, by preset. Versions last verified on the date docs/agents.md gives.
CLIS: dict[str, RealCli] = {
    cli.preset: cli
    for cli in (
        RealCli("claude-code", "npm", "@anthropic-ai/claude-code", "2.1.332", "claude"),
        RealCli("codex", "npm", "@openai/codex", "0.171.0", "codex"),
        RealCli("gemini-cli", "npm", "@google/gemini-cli", "0.61.0", "gemini"),
        RealCli("aider", "pypi", "aider-chat", "0.86.2", "aider"),
        RealCli("mini-swe-agent", "pypi", "mini-swe-agent", "2.4.6", "mini"),
        # OpenHands needs Python 3.12 exactly (its Requires-Python is ==3.12.*).
        RealCli(
            "openhands",
            "pypi",
            "openhands",
            "1.16.0",
            "openhands",
            python="python3.12",
            optional=(
                "its install takes 5 to 8 minutes and 785 MiB here (200 packages; measured "
                "2026-12-02), and its two runs near 3 minutes more: more than the 30-minute suite "
                "has room for"
            ),
        ),
    )
}

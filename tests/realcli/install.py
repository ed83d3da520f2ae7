"""Install the pinned real agent CLIs into the project's own folder: ``python -m tests.realcli.install``.

Each CLI of :data:`~tests.realcli.pins.CLIS` already at its pinned version is left alone; the
others are installed from their registry, the npm ones together under one prefix
(``npm install -g --prefix``: nothing outside it is touched), each PyPI one into a fresh virtual
environment of its own. A CLI too large for the suite (:attr:`~tests.realcli.pins.RealCli.optional`)
is installed only with ``--all``; ``--only PRESET`` (repeatable) names the CLIs. It prints how long each
install took and how much room each takes, and exits non-zero if one failed.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.realcli.pins import AGENTS, CLIS, RealCli


def interpreter(name: str) -> str:
    """The interpreter a PyPI CLI's environment is made with: ``name`` on PATH, or one of pyenv's."""
    if name == "python3":
        return sys.executable
    found = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/*/bin/{name}")))
    for candidate in [*filter(None, [shutil.which(name)]), *found]:
        done = subprocess.run([candidate, "--version"], capture_output=True, text=True, check=False)
        if done.returncode == 0:
            return candidate
    raise SystemExit(f"install: no {name} here (on PATH or under ~/.pyenv/versions); it is needed for a CLI")


def size(path: Path) -> int:
    """Bytes under ``path``."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def install_npm(clis: list[RealCli]) -> None:
    """The npm CLIs, together under their prefix."""
    prefix = clis[0].prefix
    command = ["npm", "install", "-g", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error"]
    subprocess.run([*command, *(c.requirement for c in clis)], check=True)


def install_pypi(cli: RealCli) -> None:
    """One PyPI CLI, in a fresh virtual environment."""
    shutil.rmtree(cli.prefix, ignore_errors=True)
    subprocess.run([interpreter(cli.python), "-m", "venv", str(cli.prefix)], check=True)
    pip = [str(cli.bin / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, cli.requirement], check=True)


def main(argv: list[str] | None = None) -> int:
    """Install what is missing; report time and size per CLI."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--only", action="append", choices=sorted(CLIS), help="install only this CLI")
    parser.add_argument("--all", action="store_true", help="the optional ones too (OpenHands)")
    args = parser.parse_args(argv)
    chosen = (
        [CLIS[name] for name in args.only]
        if args.only
        else [cli for cli in CLIS.values() if args.all or not cli.optional]
    )
    for cli in CLIS.values():
        if cli not in chosen and cli.optional:
            print(f"{cli.preset}: not installed without --all: {cli.optional}")
    todo = [cli for cli in chosen if cli.installed_version() != cli.version]
    AGENTS.mkdir(parents=True, exist_ok=True)
    npm = [cli for cli in todo if cli.registry == "npm"]
    groups = ([npm] if npm else []) + [[cli] for cli in todo if cli.registry == "pypi"]
    for group in groups:
        began = time.monotonic()
        if group[0].registry == "npm":
            install_npm(group)
        else:
            install_pypi(group[0])
        took = time.monotonic() - began
        names = ", ".join(cli.requirement for cli in group)
        print(f"installed {names} in {took:.0f}s ({size(group[0].prefix) / 2**20:.0f} MiB)", flush=True)
    failed = [cli.requirement for cli in chosen if cli.installed_version() != cli.version]
    for cli in chosen:
        print(f"{cli.preset}: {cli.installed_version() or 'not installed'} (pinned {cli.version})")
    if failed:
        print(f"install: not at their pinned version: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

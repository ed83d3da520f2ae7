"""One real ``changeup run`` of a real CLI against the scripted model server, and what it left.

:func:`run_real` starts a :class:`~tests.modelserver.ModelServer` playing the export-time
script in the CLI's dialect, points the CLI at it (:func:`~tests.realcli.setups.setup`), runs
``changeup run`` as a user would (a subprocess of the CLI), and returns a :class:`RealRun`:
the process, the run folder, the report and log records, and every request the server got.
:func:`expected_usage` is what each turn must report: the sum of what the server sent in it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from orchestrator.system.venvs import cache_root
from tests.cli import changeup
from tests.modelserver import DIALECTS, Exchange, ModelServer, Tokens
from tests.realcli.pins import CLIS
from tests.realcli.setups import EXPORT_TIME, export_time_script, setup

__all__ = ["RealRun", "expected_usage", "interrupting_challenge", "require_installed", "run_real"]

#: How long one real run may take (a loaded 2-core machine: generous, never asserted on).
RUN_SECONDS = 480


@dataclass(slots=True)
class RealRun:
    """What one real run left."""

    done: subprocess.CompletedProcess[str]
    folder: Path
    report: dict[str, Any]
    records: list[dict[str, Any]]
    exchanges: list[Exchange]
    home: tuple[list[str], list[str]]  # the files of the HOME it is seeded from, before and after

    def kept(self) -> list[Path]:
        """Every file changeup wrote for the run, outside the agent's workspace and HOME."""
        top = [self.folder / "events.jsonl", self.folder / "manifest.json", *self.folder.glob("report.*")]
        return [*top, *(p for p in (self.folder / "agent").rglob("*") if p.is_file())]

    def summaries(self) -> list[dict[str, Any]]:
        """The ``turn.summary`` records, in order."""
        return [r for r in self.records if r["kind"] == "turn.summary"]


def require_installed(preset: str) -> None:
    """Skip, saying how to install it, when the pinned CLI is not installed here."""
    cli = CLIS[preset]
    found = cli.installed_version()
    if found == cli.version:
        return
    state = f"{found} is installed" if found else "it is not installed"
    if cli.optional:
        pytest.skip(
            f"{cli.requirement} is not installed by default: {cli.optional} "
            f"(`make test-agents AGENTS=--all` installs and runs it; {state} under {cli.prefix})"
        )
    pytest.skip(f"{cli.requirement} is needed ({state} under {cli.prefix}): run `make test-agents`")


def interrupting_challenge(folder: Path) -> Path:
    """A copy of export-time whose phase-2 message interrupts the turn (``delivery: interrupt``)."""
    copy = folder / "export-time"
    shutil.copytree(EXPORT_TIME, copy)
    spec = copy / "challenge.yaml"
    text = spec.read_text()
    assert text.count("kind: revision\n") == 1
    spec.write_text(text.replace("kind: revision\n", "kind: revision\n      delivery: interrupt\n"))
    return copy


def small_tokens(number: int) -> Tokens:
    """Figures under 1,000 a call: Aider prints larger counts rounded (``1.2k``), these exactly."""
    return Tokens(input=400 + 10 * number, output=20 + number, cache_read=5 * number, cache_write=2 * number)


def run_real(
    tmp_path: Path,
    preset: str,
    *,
    challenge: Path = EXPORT_TIME,
    hold: bool = False,
    gateway: bool = False,
    budget: str | None = None,
    network: str = "full",
    probes: Sequence[str] = (),
) -> RealRun:
    """``changeup run CHALLENGE --agent PRESET`` with the real CLI, the scripted server its model
    (``gateway``: through the session's model gateway, the server its upstream; ``budget``: with
    that ``--budget``), with ``--agent-network network``; ``probes``: addresses the scripted model
    has the CLI try."""
    require_installed(preset)
    runs = tmp_path / "runs"
    script = export_time_script(hold=hold, probes=probes)
    with ModelServer(script, DIALECTS[preset], runs=runs, tokens=small_tokens) as server:
        given = setup(preset, server.url, tmp_path / "home", tmp_path / "shared", gateway=gateway)
        before = files(tmp_path / "home")
        options = [arg for option in given.options for arg in ("--agent-option", option)]
        shares = [arg for share in given.shares for arg in ("--agent-share", share)]
        shares += ["--model-gateway", "--model-upstream", server.url] if gateway else []
        shares += ["--budget", budget] if budget is not None else []
        shares += ["--agent-network", network]
        done = changeup(
            "run",
            str(challenge),
            "--agent",
            preset,
            *options,
            *shares,
            "--out",
            str(runs),
            "-q",
            env={**given.env, "CHANGEUP_CACHE": str(cache_root())},
            timeout=RUN_SECONDS,
        )
        exchanges = list(server.exchanges)
    folders = sorted(runs.iterdir()) if runs.exists() else []
    assert len(folders) == 1, done.stderr
    folder = folders[0]
    report = json.loads((folder / "report.json").read_text())
    lines = (folder / "events.jsonl").read_text().splitlines()[1:]  # after the header
    records = [json.loads(line) for line in lines]
    return RealRun(done, folder, report, records, exchanges, (before, files(tmp_path / "home")))


def files(folder: Path) -> list[str]:
    """The files under ``folder``, relative to it."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def turns_of(exchanges: list[Exchange], *, side: bool = True) -> list[list[Exchange]]:
    """The answered requests of each turn: a scripted request belongs to its part's turn, a side
    request (a title, a commit message) to the turn of the scripted request before it, or to
    none with ``side=False`` (for a CLI that does not count them)."""
    turns: dict[str, list[Exchange]] = {}
    current: str | None = None
    waiting: list[Exchange] = []
    for exchange in exchanges:
        if exchange.part is None and not side:
            continue
        if exchange.part is not None:
            current = exchange.part
            turns.setdefault(current, []).extend(waiting)
            waiting = []
        if exchange.tokens is None:
            continue
        if current is None:
            waiting.append(exchange)
        else:
            turns.setdefault(current, []).append(exchange)
    return [turns[name] for name in sorted(turns)]


def expected_usage(exchanges: list[Exchange], *, side: bool = True) -> list[dict[str, int]]:
    """Per turn, the token figures the server sent, summed (side requests too, unless not ``side``)."""
    out = []
    for turn in turns_of(exchanges, side=side):
        sent = [e.tokens for e in turn if e.tokens is not None]
        out.append(
            {
                "input_tokens": sum(t.input for t in sent),
                "output_tokens": sum(t.output for t in sent),
                "cache_read_tokens": sum(t.cache_read for t in sent),
                "cache_write_tokens": sum(t.cache_write for t in sent),
            }
        )
    return out

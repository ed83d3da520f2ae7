"""A run's model traffic for other tools: ``changeup export``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from orchestrator.present.exits import BadInput

__all__ = ["export_command"]


@click.command("export")
@click.argument("run", type=click.Path(path_type=Path))
@click.option(
    "--atif",
    "atif",
    is_flag=False,
    flag_value="-",
    metavar="[FILE]",
    help="Write an ATIF trajectory (Harbor's Agent Trajectory Interchange Format, v1.4) to FILE "
    "(without FILE: to standard output).",
)
def export_command(run: Path, atif: str | None) -> None:
    """Export a run's recorded model traffic as an ATIF trajectory (docs/agents.md).

    RUN is a run folder made with the model gateway: the trajectory's agent steps are its
    recorded answers (words, reasoning, tool calls, the tool results sent back, usage), its user
    steps the messages the agent was given, each naming its trigger and the cause it fired on.
    Exits 0 when written; 1 when the log is damaged or the recording unreadable; 2 when RUN is no
    run folder or no format is asked for.

    \b
    Example:
      changeup export runs/export-time-20261204-101500-claude-code --atif trajectory.json
    """
    from orchestrator.gateway.recording import FOLDER, RecordingError
    from orchestrator.gateway.trajectory import trajectory
    from orchestrator.log.eventlog import EventLogError, read_log
    from orchestrator.run.runs import open_run

    if atif is None:
        raise click.UsageError("say which format: --atif [FILE]")
    try:
        folder = open_run(run)
    except EventLogError as error:
        raise BadInput(str(error)) from None
    try:
        contents = read_log(folder.log)
        document = trajectory(contents, folder.path / FOLDER, folder.path.name, _agent_version(folder.path))
    except (EventLogError, RecordingError) as error:
        raise click.ClickException(str(error)) from None
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if atif == "-":
        click.echo(text, nl=False)
        return
    Path(atif).write_text(text)
    click.echo(atif, err=True)


def _agent_version(folder: Path) -> str:
    """The agent's version as the run's manifest names it ("unknown" where it does not)."""
    try:
        agent = json.loads((folder / "manifest.json").read_text()).get("agent") or {}
    except (OSError, ValueError):
        return "unknown"
    version = agent.get("version") if isinstance(agent, dict) else None
    return str(version) if version else "unknown"

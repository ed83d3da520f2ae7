"""The ``changeup`` command line: the group, and which module holds each command.

The group imports no command: ``changeup --help`` lists them from :data:`COMMANDS`, and
``changeup NAME`` imports NAME's module only. Each module imports what its commands run
(sessions, grading, rich, anyio) inside them, so a command's ``--help`` costs click alone.

=================  ==========================================================================
``run``            ``run`` (one session) and ``agents``
``matrix``         ``run`` of a matrix: many sessions into a RESULTS folder
``comparison``     ``compare`` and ``review``: a matrix's results, read and judged
``recorded``       ``show``, ``replay`` and ``report``: a run folder, read back
``calibration``    ``validate`` and ``calibrate``: can a challenge be trusted
``authoring``      ``new`` and ``schema``: writing a challenge
``importer``       ``import``: another benchmark's task as a challenge
``export``         ``export``: a run's recorded model traffic for other tools (ATIF)
``view``           ``view``: a browser over run folders and matrix results (pages, a server)
``console``        standard output for tables, shared by the commands
=================  ==========================================================================
"""

from __future__ import annotations

import importlib
from typing import NamedTuple

import click

__all__ = ["COMMANDS", "cli", "main"]


class Entry(NamedTuple):
    """Where a command is declared, and its help's first sentence (what ``changeup --help`` lists)."""

    module: str
    summary: str


#: Every command: its module (under this package) and summary. A test checks each summary is
#: the first sentence of its command's help, so the list cannot drift from the commands.
COMMANDS = {
    "agents": Entry(
        "run",
        "List the agents: the presets (whether each CLI is installed here, its version), and the built-ins.",
    ),
    "calibrate": Entry("calibration", "Check that challenges' graders can be trusted; exit 1 on any miss."),
    "compare": Entry(
        "comparison",
        "Compare the agents of a matrix: per challenge and agent, rates, the decision's verdict.",
    ),
    "export": Entry(
        "export", "Export a run's recorded model traffic as an ATIF trajectory (docs/agents.md)."
    ),
    "import": Entry(
        "importer",
        "Turn another benchmark's task into a challenge folder DEST, and say what did not carry over.",
    ),
    "new": Entry("authoring", "Scaffold a two-phase challenge folder NAME that validates as written."),
    "replay": Entry("recorded", "Re-decide every trigger of a recorded run and check the log agrees."),
    "report": Entry(
        "recorded", "Rebuild a run's report.json, report.md and report.html from its events.jsonl."
    ),
    "review": Entry(
        "comparison",
        "Review, blind, what the checks and judges flagged: confirm or dismiss each, with a reason.",
    ),
    "run": Entry("run", "Run CHALLENGE once with an agent and write its run folder."),
    "schema": Entry(
        "authoring", "Print the JSON Schema of challenge.yaml, for editors that complete and check YAML."
    ),
    "show": Entry(
        "recorded",
        "The timeline of a run: messages, triggers and their causes, test runs, commits, turns.",
    ),
    "view": Entry("view", "Browse run folders and matrix results: an index, a page per run and per matrix."),
    "validate": Entry(
        "calibration", "Check challenge folders (or their challenge.yaml) and list every problem."
    ),
}


#: click 8.4+ words an unknown command with "Did you mean …?"; older click has no such error.
_NO_SUCH_COMMAND = getattr(click.exceptions, "NoSuchCommand", None)


class _Commands(click.Group):
    """A group that imports a command's module only when that command is asked for, and lists
    each command with the whole first sentence of its help (click would cut it with "...")."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command's name, sorted."""
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name``, its module imported now; None for a name that is none."""
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module = importlib.import_module(f"{__name__}.{entry.module}")
        command = getattr(module, f"{cmd_name}_command")
        assert isinstance(command, click.Command)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """As click's, with "Did you mean …?" drawn from every command (click looks only at
        the commands already loaded)."""
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as error:
            if _NO_SUCH_COMMAND is None or not isinstance(error, _NO_SUCH_COMMAND):
                raise
            raise _NO_SUCH_COMMAND(error.command_name, possibilities=COMMANDS, ctx=ctx) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands, each with its first sentence, no module imported."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name].summary) for name in self.list_commands(ctx)])


@click.group(
    cls=_Commands,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(package_name="changeup")
def cli() -> None:
    """Evolving challenges for coding agents.

    A challenge starts an agent on a task, watches its workspace, runs hidden tests and,
    when a trigger's condition holds, changes the requirements mid-run. Does the agent
    follow without breaking what must stay?

    \b
    Run one:             changeup run challenges/export-time --agent scripted
    With a real agent:   changeup run challenges/export-time --agent claude-code
    See what happened:   changeup show runs/<run>      (report.html is in the run folder)
    Check the decisions: changeup replay runs/<run>    (--rescore: re-grade with today's tests)
    Trust the graders:   changeup calibrate challenges/*
    Many runs, one call: changeup run --matrix docs/examples/v6-v7.yaml --out results
    Compare them:        changeup compare results    (and changeup review results)
    Browse them:         changeup view runs results  (--out DIR: static pages instead)
    Write a challenge:   changeup new my-challenge --pattern pivot
    Or bring one in:     changeup import slopcode slop-code-bench/problems/file_backup file-backup
    Check it:            changeup validate my-challenge
    Editor completion:   changeup schema > challenge.schema.json
    """


def main() -> None:
    """Console-script entry point."""
    cli()

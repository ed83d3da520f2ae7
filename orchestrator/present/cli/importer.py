"""Another benchmark's task as a challenge: ``changeup import``.

The formats are read here to list their names in ``--help``; what reads and writes a task is
imported by the command.
"""

from __future__ import annotations

from pathlib import Path

import click

from orchestrator.importers import FORMATS

__all__ = ["import_command"]


@click.command("import")
@click.argument("format", metavar="FORMAT", type=click.Choice(sorted(FORMATS)))
@click.argument("source", type=click.Path(path_type=Path))
@click.argument("dest", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Replace DEST even when it already holds files.")
def import_command(format: str, source: Path, dest: Path, force: bool) -> None:
    """Turn another benchmark's task into a challenge folder DEST, and say what did not carry over.

    \b
    FORMAT and SOURCE:
      slopcode  a SlopCodeBench problem folder (config.yaml, checkpoint_N.md, tests/, solutions/)
      saotri    a SaotriBench task folder (task.yaml, problem.md, evaluator.py, tests.py)
      harbor    a Harbor task folder (task.toml, with [[steps]] and steps/<name>/, or a single step)

    Each checkpoint, phase or step becomes a phase: its spec or instruction is the message,
    its tests the phase's hidden tests, its reference (where the format has files for one)
    solutions/reference/<phase>/. The import report, printed here and written as
    DEST/IMPORT.md, lists what maps to what and what was not carried over (docs/import.md).
    A SOURCE that cannot be read is an error naming the file and what is wrong with it.
    Exits 0 when imported; 1 when SOURCE cannot be read, or DEST holds files and --force is
    not given; 2 for an unknown FORMAT.

    \b
    Example:
      changeup import slopcode slop-code-bench/problems/file_backup challenges/file-backup
      changeup validate challenges/file-backup
      changeup calibrate challenges/file-backup
    """
    from orchestrator.importers import ImportRefused, SourceError, import_task

    try:
        report = import_task(format, source, dest, force=force)
    except (SourceError, ImportRefused) as error:
        raise click.ClickException(str(error)) from None
    click.echo(report, nl=False)
    click.echo(f"next: changeup validate {dest}", err=True)

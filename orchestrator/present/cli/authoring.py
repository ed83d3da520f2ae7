"""Writing a challenge: ``changeup new``, ``changeup import`` and ``changeup schema``.

The scaffolds and the import formats are read here to list their names in ``--help``;
what writes a challenge is imported by the command that runs it.
"""

from __future__ import annotations

from pathlib import Path

import click

from orchestrator.challenge.scaffold import SCAFFOLDS
from orchestrator.importers import FORMATS

__all__ = ["import_command", "new_command", "schema_command"]


@click.command("schema")
def schema_command() -> None:
    """Print the JSON Schema of challenge.yaml, for editors that complete and check YAML.

    \b
    Example:
      changeup schema > challenge.schema.json
      (then, in VS Code's YAML extension: "yaml.schemas": {"challenge.schema.json": "challenge.yaml"})
    """
    import json

    from orchestrator.challenge.model import ChallengeFile

    schema = ChallengeFile.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "changeup challenge"
    click.echo(json.dumps(schema, indent=2))


@click.command("new")
@click.argument("name", type=click.Path(path_type=Path))
@click.option(
    "--pattern",
    type=click.Choice(sorted(SCAFFOLDS)),
    required=True,
    help="Which evolving pattern the challenge follows.",
)
def new_command(name: Path, pattern: str) -> None:
    """Scaffold a two-phase challenge folder NAME that validates as written.

    Prints each file written. Exits 0 when written; 1 when NAME exists and is not empty
    (nothing is written); 2 for an unknown --pattern.

    \b
    Example:
      changeup new challenges/my-pivot --pattern pivot
      changeup validate challenges/my-pivot
    """
    from orchestrator.challenge.scaffold import ScaffoldError, scaffold

    try:
        written = scaffold(name, pattern)
    except ScaffoldError as error:
        raise click.ClickException(str(error)) from None
    for path in written:
        click.echo(path.as_posix())
    click.echo(f"next: edit {name / 'challenge.yaml'}, then: changeup validate {name}", err=True)


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

"""Writing a challenge: ``changeup new`` and ``changeup schema``.

The scaffolds are read here to list their names in ``--help``; what writes a challenge is
imported by the command that runs it.
"""

from __future__ import annotations

from pathlib import Path

import click

from orchestrator.challenge.scaffold import SCAFFOLDS

__all__ = ["new_command", "schema_command"]


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

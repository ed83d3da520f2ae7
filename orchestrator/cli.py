"""The ``changeup`` command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from orchestrator.challenge import ChallengeFile
from orchestrator.loader import load_challenge, validate
from orchestrator.scaffold import SCAFFOLDS, ScaffoldError, scaffold

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="changeup")
def cli() -> None:
    """Evolving challenges for coding agents.

    A challenge starts an agent on a task, watches its workspace, runs hidden tests and,
    when a trigger's condition holds, changes the requirements mid-run. Does the agent
    follow without breaking what must stay?

    \b
    Write a challenge:   changeup new my-challenge --pattern pivot
    Check it:            changeup validate my-challenge
    Editor completion:   changeup schema > challenge.schema.json
    """


@cli.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
def validate_command(paths: tuple[Path, ...]) -> None:
    """Check challenge folders (or their challenge.yaml) and list every problem.

    Each problem is printed as FILE:LINE:COLUMN: MESSAGE. Exits 0 when every challenge is
    valid, 1 otherwise.

    \b
    Example:
      changeup validate challenges/*
    """
    failed = 0
    for path in paths:
        problems = validate(path)
        if problems:
            failed += 1
            for problem in problems:
                click.echo(str(problem))
            continue
        challenge = load_challenge(path)
        click.echo(
            f"ok {path}: {challenge.id}, {len(challenge.phases)} phases, "
            f"{len(challenge.spec.triggers)} triggers",
            err=True,
        )
    if failed:
        click.echo(f"{failed} of {len(paths)} challenges have problems", err=True)
        sys.exit(1)


@cli.command("schema")
def schema_command() -> None:
    """Print the JSON Schema of challenge.yaml, for editors that complete and check YAML."""
    schema = ChallengeFile.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "changeup challenge"
    click.echo(json.dumps(schema, indent=2))


@cli.command("new")
@click.argument("name", type=click.Path(path_type=Path))
@click.option(
    "--pattern",
    type=click.Choice(sorted(SCAFFOLDS)),
    required=True,
    help="Which evolving pattern the challenge follows.",
)
def new_command(name: Path, pattern: str) -> None:
    """Scaffold a two-phase challenge folder NAME that validates as written.

    \b
    Example:
      changeup new challenges/my-pivot --pattern pivot
      changeup validate challenges/my-pivot
    """
    try:
        written = scaffold(name, pattern)
    except ScaffoldError as error:
        raise click.ClickException(str(error)) from None
    for path in written:
        click.echo(path.as_posix())
    click.echo(f"next: edit {name / 'challenge.yaml'}, then: changeup validate {name}", err=True)


def main() -> None:
    """Console-script entry point."""
    cli()

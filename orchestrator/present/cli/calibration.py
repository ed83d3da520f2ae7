"""Can a challenge be trusted: ``changeup validate`` (as written) and ``changeup calibrate`` (as run)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from orchestrator.present.exits import BadInput, Exit

if TYPE_CHECKING:
    from rich.table import Table

    from orchestrator.calibrate import Check

__all__ = ["calibrate_command", "calibration_table", "validate_command"]


@click.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
def validate_command(paths: tuple[Path, ...]) -> None:
    """Check challenge folders (or their challenge.yaml) and list every problem.

    Each problem is printed as FILE:LINE:COLUMN: MESSAGE, and each valid challenge as an
    "ok" line followed by its warnings (FILE:LINE:COLUMN: warning: MESSAGE), such as a
    missing reference solution. The test ids it names are checked case by case against its
    hidden tests as collected in its grading environment (built if need be). Exits 0 when
    every challenge is valid, warnings or not; 1 otherwise.

    \b
    Example:
      changeup validate challenges/*
    """
    from orchestrator.challenge.loader import ChallengeError, challenge_warnings, load_challenge
    from orchestrator.grading.caseids import case_id_problems

    failed = 0
    for path in paths:
        try:
            challenge = load_challenge(path)
        except ChallengeError as error:
            failed += 1
            for problem in error.problems:
                click.echo(str(problem))
            continue
        problems, warnings = case_id_problems(challenge, path)  # the test ids, case by case
        if problems:
            failed += 1
            for problem in problems:
                click.echo(str(problem))
            continue
        click.echo(
            f"ok {path}: {challenge.id}, {len(challenge.phases)} phases, "
            f"{len(challenge.spec.triggers)} triggers"
        )
        for warning in [*challenge_warnings(challenge, path), *warnings]:
            click.echo(str(warning))
    if failed:
        click.echo(f"{failed} of {len(paths)} challenges have problems", err=True)
        sys.exit(1)


def calibration_table(checks: list[Check]) -> Table:
    """The calibration checks as a table; every cell is escaped, so a test id such as
    ``test_round[c000-p0-round_only]`` is shown as written, not read as rich markup."""
    from rich.table import Table

    from orchestrator.render.inert import terminal

    table = Table(title="calibration", title_justify="left")
    for column in ("challenge", "run", "expected", "got", "ok"):
        table.add_column(column, overflow="fold")
    for check in checks:
        table.add_row(
            terminal(check.challenge),
            terminal(check.run),
            terminal(check.expected),
            terminal(check.got),
            "skipped" if check.skipped else "✓" if check.ok else "✗",
            style="yellow" if check.skipped else None if check.ok else "red",
        )
    return table


@click.command("calibrate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--trials", default=3, show_default=True, help="Extra reference runs, to catch flaky tests.")
@click.option("--jobs", default=2, show_default=True, help="Runs at the same time.")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("runs/calibration"),
    show_default=True,
    help="Where the calibration runs are kept.",
)
@click.option("--judge", "judge_spec", default="rules", show_default=True, help="As for `changeup run`.")
def calibrate_command(paths: tuple[Path, ...], trials: int, jobs: int, out: Path, judge_spec: str) -> None:
    """Check that challenges' graders can be trusted; exit 1 on any miss.

    \b
    For each challenge:
      isolation     where the agent's code runs: isolated, or in-process (sharing the tests')
      reference     the reference solution reaches full marks, its triggers fire as designed
      starter       on the untouched starter, every changed-requirement test fails
      broken/NAME   each broken variant fails exactly the tests and criteria it declares
      impostor/KIND the reference returning doubles of its results falls short of full marks
      honeypot      the reference and each broken variant fail every honeypot test (none
                    passes in any run either: that would be a cheating finding)
      reference #N  the reference again, TRIALS times, to catch flaky tests
      toolchain     instead of all of the above, when this machine lacks a tool the
                    challenge's tests declare (testing: tools): SKIPPED, naming it

    Each check is printed as it ends, then the table of them all. Exits 0 when every check
    passes; 1 on any miss; 2 when a challenge is not valid or --judge names no judge (nothing
    is run).

    \b
    Example:
      changeup calibrate challenges/*
      changeup calibrate challenges/export-time --trials 0 --out /tmp/calibration
    """
    import anyio

    from orchestrator.calibrate import calibrate
    from orchestrator.challenge.loader import ChallengeError, load_challenge
    from orchestrator.present.cli.console import stdout
    from orchestrator.render.inert import terminal
    from orchestrator.run.logging_config import configure
    from orchestrator.run.runs import out_problem
    from orchestrator.scoring.judge import JudgeSpecError, parse_judge

    configure()
    if out_problem(out):
        raise BadInput(out_problem(out))
    challenges = []
    for path in paths:
        try:
            challenges.append(load_challenge(path))
        except ChallengeError as error:
            raise BadInput(f"{path} is not a valid challenge:\n{error}") from None
    try:
        judge = parse_judge(judge_spec)
    except JudgeSpecError as error:
        raise click.BadParameter(str(error), param_hint="--judge") from None
    console = stdout()

    def progress(check: Check) -> None:
        mark = "[yellow]SKIPPED[/]" if check.skipped else "[green]ok[/]" if check.ok else "[red]MISS[/]"
        console.print(f"{mark} {terminal(f'{check.challenge} {check.run}: {check.got}')}")

    checks = anyio.run(
        lambda: calibrate(challenges, out, trials=trials, jobs=jobs, judge=judge, on_check=progress)
    )
    console.print(calibration_table(checks))
    misses = [c for c in checks if not c.ok]
    console.print(terminal(f"{len(checks) - len(misses)} of {len(checks)} checks passed; runs in {out}"))
    skipped = [c.challenge for c in checks if c.skipped]
    if skipped:  # never a silent pass: a skipped challenge is named at the end, too
        console.print(
            f"[yellow]SKIPPED, not calibrated[/] (this machine lacks the tools their tests declare): "
            f"{terminal(', '.join(skipped))}"
        )
    sys.exit(Exit.FAILED if misses else Exit.OK)

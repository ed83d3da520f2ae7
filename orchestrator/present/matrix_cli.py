"""The matrix commands: ``changeup run`` of a matrix, ``changeup compare`` and ``changeup review``.

``cli.py`` declares ``run``'s options and hands a matrix here; ``compare`` and ``review`` are
declared here and added to the command group there.
"""

from __future__ import annotations

import getpass
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import click
from rich.console import Console
from rich.live import Live

from orchestrator.challenge.loader import ChallengeError, load_challenge
from orchestrator.log.journal import JournalError
from orchestrator.matrix import (
    ComparisonError,
    LocalBackend,
    Matrix,
    MatrixError,
    Results,
    ResultsRefused,
    Reviews,
    Tally,
    build_comparison,
    drive,
    load_matrix,
    matrix_from_command,
    open_results,
)
from orchestrator.matrix.backends import BackendError, choose_backend
from orchestrator.matrix.budget import make_room
from orchestrator.matrix.ray_backend import RayBackend
from orchestrator.matrix.review import Item, blind_order, items_of, review_diff
from orchestrator.present.exits import BadInput, Exit
from orchestrator.present.matrix_progress import MatrixProgress, progress_line
from orchestrator.render.comparison_html import comparison_html
from orchestrator.render.comparison_text import comparison_markdown, print_comparison
from orchestrator.render.inert import json_text, terminal
from orchestrator.run.logging_config import configure

__all__ = ["compare_command", "review_command", "run_matrix", "write_comparison"]

#: ``run`` options that a matrix file gives itself: on the command line with --matrix, refused.
IN_THE_FILE = (
    "agent_specs",
    "agent_options",
    "trials",
    "retry_invalid",
    "judge_spec",
    "agent_shares",
    "agent_network",
    "debounce",
)


def write_comparison(results: Path) -> dict[str, Any]:
    """Build the comparison of ``results``; write compare.json, compare.md and compare.html there."""
    comparison = build_comparison(results)
    (results / "compare.json").write_text(json_text(comparison, indent=2, ensure_ascii=False) + "\n")
    (results / "compare.md").write_text(comparison_markdown(comparison))
    (results / "compare.html").write_text(comparison_html(comparison))
    return comparison


def _matrix(ctx: click.Context, params: dict[str, Any]) -> Matrix:
    """The matrix of ``run``'s arguments: its --matrix file, or the challenges and agents given."""
    if params["matrix_file"] is not None:
        flags = {p.name: p.opts[0] for p in ctx.command.params}
        given = [
            flags[n]
            for n in IN_THE_FILE
            if ctx.get_parameter_source(n) == click.core.ParameterSource.COMMANDLINE
        ]
        if params["challenge_paths"] or given:
            named = ", ".join(["CHALLENGE"] * bool(params["challenge_paths"]) + given)
            raise click.UsageError(f"with --matrix, the matrix file says it all: drop {named}")
        try:
            return load_matrix(params["matrix_file"])
        except MatrixError as error:
            raise BadInput(f"{params['matrix_file']} is not a valid matrix:\n{error}") from None
    if not params["challenge_paths"]:
        raise click.UsageError("give CHALLENGE folders (or --matrix FILE)")
    challenges = []
    for path in params["challenge_paths"]:
        try:
            challenges.append(load_challenge(path))
        except ChallengeError as error:
            raise BadInput(f"{path} is not a valid challenge:\n{error}") from None
    try:
        return matrix_from_command(
            challenges,
            list(params["agent_specs"]),
            params["options"],
            trials=params["trials"] or 1,
            retry_invalid=params["retry_invalid"] or 0,
            judge=params["judge_spec"],
            network=params["agent_network"] == "on",
            shares=tuple(params["agent_shares"]),
            debounce=params["debounce"],
        )
    except MatrixError as error:
        raise BadInput(str(error)) from None


def run_matrix(ctx: click.Context, params: dict[str, Any]) -> None:
    """Run a matrix into ``--out`` RESULTS, resuming it; print and write its comparison; exit."""
    configure(verbose=params["verbose"])
    if params["out"] is None:
        raise click.UsageError(
            "a matrix needs --out RESULTS: the folder its manifest, attempts and runs go in"
        )
    matrix = _matrix(ctx, params)
    results_path = Path(params["out"])
    runner = _runner(matrix, params)
    try:
        results = open_results(
            matrix,
            results_path,
            new=params["new"],
            change_rule=params["change_rule"],
            preflight=runner.preflight if isinstance(runner, RayBackend) else None,
        )
    except (ResultsRefused, JournalError, BackendError) as error:
        _close(runner)
        raise BadInput(str(error)) from None
    console = Console(stderr=True, highlight=False)
    for note in results.notes:
        console.print(terminal(f"note: {note}"))
    try:
        tally = _drive(results, matrix, runner, console, quiet=params["quiet"])
    except KeyboardInterrupt:
        console.print(
            f"interrupted; run the same command again to resume: the attempts so far are in {results_path}"
        )
        write_comparison(results_path)
        sys.exit(Exit.INTERRUPTED)
    finally:
        results.close()
        _close(runner)
    comparison = write_comparison(results_path)
    print_comparison(comparison, _stdout())
    for name in ("compare.md", "compare.html", "compare.json"):
        click.echo(f"{name + ':':14}{results_path / name}")
    click.echo(f"next:         changeup review {results_path}   (blind review of what was flagged)")
    invalid = sum(c["invalid"] for c in comparison["cells"])
    crashed = sum(c["crashed"] for c in comparison["cells"])
    if invalid:
        click.echo(
            f"error: {invalid} trial(s) have only invalid runs (kept apart; see the attempts in compare.md)",
            err=True,
        )
    if crashed:
        click.echo(
            f"error: {crashed} trial(s) crashed changeup or ran past their wall-time limit (each counted "
            "as a failed trial; a crash is a bug: see the attempts in compare.md and each run's session.log)",
            err=True,
        )
    unfinished = tally.done + tally.done_before < tally.cells
    sys.exit(Exit.FAILED if invalid or crashed or unfinished else Exit.OK)


def _runner(matrix: Matrix, params: dict[str, Any]) -> LocalBackend | RayBackend:
    """The session runner of ``--backend``/``--address``, or of the matrix file's ``backend:``."""
    try:
        choice = choose_backend(matrix, params["backend"], params["address"])
        if choice.kind == "local":
            make_room(params["concurrency"] or 1)
            return LocalBackend(params["concurrency"] or 1, matrix, session_timeout=choice.session_timeout)
        assert choice.address is not None
        return RayBackend(
            choice.address,
            matrix,
            capacity=params["concurrency"],
            session_timeout=choice.session_timeout,
            cpus=choice.cpus,
        )
    except BackendError as error:
        raise BadInput(str(error)) from None


def _close(runner: LocalBackend | RayBackend) -> None:
    runner.close()


def _drive(
    results: Results, matrix: Matrix, runner: LocalBackend | RayBackend, console: Console, *, quiet: bool
) -> Tally:
    view = MatrixProgress([a.name for a in matrix.agents])
    live = Live(view, console=console, refresh_per_second=4, transient=True)
    shown = not quiet and console.is_terminal
    last: list[str] = []

    def update(tally: Tally) -> None:
        view.update(tally)
        line = progress_line(tally).split(" · time left")[0]
        if not shown and not quiet and line not in last:  # piped: one line per change, no redraws
            last[:] = [line]
            console.print(progress_line(tally))

    if shown:
        live.start()
    try:
        return anyio.run(lambda: drive(results, matrix, runner, update))
    finally:
        live.stop()


def _stdout() -> Console:
    console = Console(soft_wrap=True, highlight=False)
    if not console.is_terminal:
        console.width = 10_000  # piped: nothing folded or cut
    return console


def _results(path: Path) -> dict[str, Any]:
    try:
        return build_comparison(path)
    except (ComparisonError, JournalError) as error:
        raise BadInput(str(error)) from None


@click.command("compare")
@click.argument("results", type=click.Path(path_type=Path, exists=True, file_okay=False))
def compare_command(results: Path) -> None:
    """Compare the agents of a matrix: per challenge and agent, rates, the decision's verdict.

    RESULTS is the --out folder of a matrix run. Writes compare.json (docs/compare.md),
    compare.md and compare.html (self-contained) there and prints the verdict, the rates and
    the per challenge x agent table. It can run while the matrix is still running: trials
    not done yet count as not run.

    \b
    Example:
      changeup compare results/v6-v7
    """
    _results(results)  # refuses what is not a results folder before writing anything
    comparison = write_comparison(results)
    print_comparison(comparison, _stdout())
    for name in ("compare.md", "compare.html", "compare.json"):
        click.echo(f"{name + ':':14}{results / name}")


def _pending(results: Path) -> list[Item]:
    comparison = _results(results)
    reviews = Reviews(results)
    items = []
    for trial in comparison["trials"]:
        if trial["status"] == "completed":
            report = json.loads((results / trial["run"] / "report.json").read_text(encoding="utf-8"))
            items += [i for i in items_of(trial["run"], report) if reviews.state(i.id) == "pending"]
    return items


@click.command("review")
@click.argument("results", type=click.Path(path_type=Path, exists=True, file_okay=False))
def review_command(results: Path) -> None:
    """Review, blind, what the checks and judges flagged: confirm or dismiss each, with a reason.

    Walks through every critical failure and every judged criterion short of full marks that
    no one has decided yet, in a shuffled order, with the agent, the trial and the run
    hidden: the challenge, the criterion, why it was flagged and the diff of each file it
    names. Each decision (confirm, dismiss; skip leaves it pending) is kept in
    RESULTS/reviews.jsonl. `changeup compare` then counts only confirmed critical failures
    and shows the rest as pending.

    \b
    Example:
      changeup review results/v6-v7
    """
    items = _pending(results)
    console = _stdout()
    if not items:
        console.print("nothing to review: every flagged criterion has a decision")
        return
    reviews = Reviews(results, writer=True)
    reviewer = getpass.getuser()
    decided = 0
    for number, item in enumerate(blind_order(items), 1):
        console.rule(f"item {number} of {len(items)}")
        console.print(terminal(f"challenge: {item.challenge}"))
        console.print(
            terminal(f"criterion: {item.criterion} — {item.title} ({item.kind}, score {item.score})")
        )
        for finding in item.findings:
            console.print(terminal(f"flagged:   {finding}"))
        if item.judge_reason:
            console.print(terminal(f"judge:     {item.judge_reason}"))
        diff = review_diff(results, item)
        if diff:
            console.print(terminal(diff, lines=True))
        choice = click.prompt("confirm, dismiss, skip or quit", type=click.Choice(["c", "d", "s", "q"]))
        if choice == "q":
            break
        if choice == "s":
            continue
        reason = click.prompt("reason")
        while not reason.strip():
            reason = click.prompt("a reason, please")
        reviews.decide(item, "confirm" if choice == "c" else "dismiss", reason, reviewer)
        decided += 1
    console.print(
        f"{decided} decided, {len(items) - decided} pending; `changeup compare {results}` counts them"
    )

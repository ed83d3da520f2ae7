"""A matrix run: ``changeup run`` with several challenges or agents, --trials or --matrix.

:mod:`.run` declares ``run``'s options and hands a matrix here, to run into --out RESULTS.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from orchestrator.present.exits import BadInput, Exit

if TYPE_CHECKING:
    from rich.console import Console

    from orchestrator.matrix import LocalBackend, Matrix, Results, Tally
    from orchestrator.matrix.ray_backend import RayBackend

__all__ = ["IN_THE_FILE", "run_matrix"]

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
    "model_gateway",
    "model_upstream",
    "prices_file",
    "budget_spec",
)


def _matrix(ctx: click.Context, params: dict[str, Any]) -> Matrix:
    """The matrix of ``run``'s arguments: its --matrix file, or the challenges and agents given."""
    from orchestrator.challenge.loader import ChallengeError, load_challenge
    from orchestrator.gateway.budget import BudgetError
    from orchestrator.gateway.prices import PriceTableError
    from orchestrator.matrix import MatrixError, load_matrix, matrix_from_command
    from orchestrator.matrix.spec import gateway_order
    from orchestrator.run.agent_network import network_name

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
    gateway = None
    network = network_name(params["agent_network"] or "full")  # no preset default in a matrix yet
    wanted = (params["model_gateway"], params["model_upstream"], params["prices_file"], params["budget_spec"])
    if any(wanted) or network == "model":
        try:
            gateway = gateway_order(
                params["model_upstream"], params["prices_file"], params["budget_spec"], network == "model"
            )
        except PriceTableError as error:
            raise click.BadParameter(str(error), param_hint="--prices") from None
        except BudgetError as error:
            raise click.BadParameter(str(error), param_hint="--budget") from None
    try:
        return matrix_from_command(
            challenges,
            list(params["agent_specs"]),
            params["options"],
            trials=params["trials"] or 1,
            retry_invalid=params["retry_invalid"] or 0,
            judge=params["judge_spec"],
            network=network == "full",
            shares=tuple(params["agent_shares"]),
            debounce=params["debounce"],
            gateway=gateway,
        )
    except MatrixError as error:
        raise BadInput(str(error)) from None


def run_matrix(ctx: click.Context, params: dict[str, Any]) -> None:
    """Run a matrix into ``--out`` RESULTS, resuming it; print and write its comparison; exit."""
    from rich.console import Console

    from orchestrator.log.journal import JournalError
    from orchestrator.matrix import ResultsRefused, open_results
    from orchestrator.matrix.backends import BackendError
    from orchestrator.matrix.ray_backend import RayBackend
    from orchestrator.present.cli.comparison import write_comparison
    from orchestrator.present.cli.console import stdout
    from orchestrator.render.comparison_text import print_comparison
    from orchestrator.render.inert import terminal
    from orchestrator.run.logging_config import configure

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
    print_comparison(comparison, stdout())
    for name in ("compare.md", "compare.html", "compare.json"):
        click.echo(f"{name + ':':14}{results_path / name}")
    click.echo(f"next:         changeup review {results_path}   (blind review of what was flagged)")
    invalid = sum(c.invalid for c in comparison.cells)
    crashed = sum(c.crashed for c in comparison.cells)
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
    from orchestrator.matrix import LocalBackend
    from orchestrator.matrix.backends import BackendError, choose_backend
    from orchestrator.matrix.budget import make_room
    from orchestrator.matrix.ray_backend import RayBackend

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
    import anyio
    from rich.live import Live

    from orchestrator.matrix import drive
    from orchestrator.present.matrix_progress import MatrixProgress, progress_line

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

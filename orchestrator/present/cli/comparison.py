"""A matrix's results, read and judged: ``changeup compare`` and ``changeup review``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from orchestrator.present.exits import BadInput

if TYPE_CHECKING:
    from orchestrator.log.comparison import Comparison
    from orchestrator.matrix.review import Item

__all__ = ["compare_command", "review_command", "write_comparison"]


def write_comparison(results: Path) -> Comparison:
    """Build the comparison of ``results``; write compare.json, compare.md and compare.html there."""
    from orchestrator.matrix import build_comparison
    from orchestrator.render.comparison_html import comparison_html
    from orchestrator.render.comparison_text import comparison_markdown
    from orchestrator.render.inert import json_text

    comparison = build_comparison(results)
    (results / "compare.json").write_text(
        json_text(comparison.json_form(), indent=2, ensure_ascii=False) + "\n"
    )
    (results / "compare.md").write_text(comparison_markdown(comparison))
    (results / "compare.html").write_text(comparison_html(comparison))
    return comparison


def _results(path: Path) -> Comparison:
    from orchestrator.log.journal import JournalError
    from orchestrator.matrix import ComparisonError, build_comparison

    try:
        return build_comparison(path)
    except (ComparisonError, JournalError) as error:
        raise BadInput(str(error)) from None


@click.command("compare")
@click.argument("results", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option(
    "--wide",
    is_flag=True,
    help="The per challenge x agent figures as one wide table, a column per figure (default: a block "
    "of named figures per challenge x agent, readable at 80 columns).",
)
def compare_command(results: Path, wide: bool) -> None:
    """Compare the agents of a matrix: per challenge and agent, rates, the decision's verdict.

    RESULTS is the --out folder of a matrix run. Writes compare.json (docs/compare.md),
    compare.md and compare.html (self-contained) there and prints the verdict, the rates and
    the per challenge x agent table. It can run while the matrix is still running: trials
    not done yet count as not run.
    Exits 0 once written; 2 when RESULTS is no matrix's results folder (nothing is written).

    \b
    Example:
      changeup compare results/v6-v7
    """
    from orchestrator.present.cli.console import stdout
    from orchestrator.render.comparison_text import print_comparison

    _results(results)  # refuses what is not a results folder before writing anything
    comparison = write_comparison(results)
    console = stdout()
    columns = os.environ.get("COLUMNS", "")
    if not console.is_terminal and columns.isdigit() and int(columns) > 0:
        console.width = int(columns)  # piped: COLUMNS, when set, is the width asked for
    print_comparison(comparison, console, wide=wide)
    for name in ("compare.md", "compare.html", "compare.json"):
        click.echo(f"{name + ':':14}{results / name}")


def _pending(results: Path) -> list[Item]:
    from orchestrator.log.report import load_report
    from orchestrator.matrix import Reviews
    from orchestrator.matrix.review import items_of

    comparison = _results(results)
    reviews = Reviews(results)
    items = []
    for trial in comparison.trials:
        if trial.status == "completed" and trial.run is not None:
            report = load_report(results / trial.run / "report.json")
            items += [i for i in items_of(trial.run, report) if reviews.state(i.id) == "pending"]
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
    Exits 0 when quit or done (each decision is kept as it is made); 2 when RESULTS is no
    matrix's results folder.

    \b
    Example:
      changeup review results/v6-v7
    """
    import getpass

    from rich.rule import Rule

    from orchestrator.matrix import Reviews
    from orchestrator.matrix.review import blind_order, review_diff
    from orchestrator.present.cli.console import stdout
    from orchestrator.render.inert import terminal

    items = _pending(results)
    console = stdout()
    if not items:
        console.print("nothing to review: every flagged criterion has a decision")
        return
    reviews = Reviews(results, writer=True)
    reviewer = getpass.getuser()
    decided = 0
    #: piped, the console is unbounded (nothing folded): a divider that wide is thousands of characters
    divider = console.width if console.is_terminal else 80
    for number, item in enumerate(blind_order(items), 1):
        console.print(Rule(f"item {number} of {len(items)}"), width=divider)
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
        choice = _ask("confirm, dismiss, skip or quit", type=click.Choice(["c", "d", "s", "q"]))
        if choice in (None, "q"):
            break
        if choice == "s":
            continue
        reason = _ask("reason")
        while reason is not None and not reason.strip():
            reason = _ask("a reason, please")
        if reason is None:
            break
        reviews.decide(item, "confirm" if choice == "c" else "dismiss", reason, reviewer)
        decided += 1
    console.print(
        f"{decided} decided, {len(items) - decided} pending; `changeup compare {results}` counts them"
    )


def _ask(text: str, **options: Any) -> str | None:
    """``click.prompt``, or None when the input ended (EOF: piped input ran out), which stops a
    review as quit does; Ctrl-C still aborts."""
    try:
        return str(click.prompt(text, **options))
    except click.Abort as error:
        if isinstance(error.__context__, EOFError):
            click.echo("\ninput ended: stopping, as for quit")
            return None
        raise

"""The comparison for people: its tables as rows of text, in the terminal and as ``compare.md``.

Every figure is shown with its denominator (``2/3``), a figure no trial reported as
``missing``, and a trial that has not run as not run, never as a zero. A trial that crashed
or timed out is among the valid ones, as a failure. The HTML page (``comparison_html.py``)
draws the same rows.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.table import Table

from orchestrator.log.comparison import (
    CellSummary,
    Comparison,
    DecidingTrial,
    ModeSide,
    ReportedFigure,
    Share,
)
from orchestrator.render.comparison_adaptation import adaptation_markdown, print_adaptation
from orchestrator.render.comparison_cheating import cheating_markdown, print_cheating
from orchestrator.render.comparison_costs import cost_markdown, print_costs
from orchestrator.render.comparison_findings import (
    IMPORTED_TITLE,
    PROBING_TITLE,
    imported_lines,
    probing_lines,
)
from orchestrator.render.inert import markdown, markdown_block, terminal
from orchestrator.render.phrases import duration, made_in, percent

__all__ = [
    "CELL_COLUMNS",
    "PACKED",
    "agent_lines",
    "cell_block",
    "cell_row",
    "comparison_markdown",
    "decision_lines",
    "effect_lines",
    "fresh_columns",
    "fresh_lines",
    "fresh_rows",
    "packed",
    "pair_columns",
    "pair_rows",
    "print_comparison",
    "provenance_lines",
    "scope_lines",
    "warning_lines",
]


def _of(part: int, whole: int) -> str:
    return f"{part}/{whole}" if whole else "—"


def _pass_k(valid: int, by_k: dict[str, float]) -> str:
    return f"{float(by_k[str(valid)]):.2f} (k={valid})" if valid else "—"


def _figure(entry: ReportedFigure, shown: Callable[[float], str]) -> str:
    if entry.median is None:
        return "missing" if entry.of else "—"
    note = f" ({entry.reported}/{entry.of} reported)" if entry.reported < entry.of else ""
    return shown(entry.median) + note


def _critical(cell: CellSummary) -> str:
    counts = cell.critical_failures
    text = _of(counts.confirmed, cell.valid)
    extras = [f"{counts.pending} pending"] if counts.pending else []
    extras += [f"{counts.dismissed} dismissed"] if counts.dismissed else []
    return text + (f" ({', '.join(extras)})" if extras else "")


#: The per challenge x agent table: header, and how a cell of ``compare.json`` shows under it.
CELL_COLUMNS: list[tuple[str, Callable[[CellSummary], str]]] = [
    ("challenge", lambda c: c.challenge),
    ("agent", lambda c: c.agent),
    ("mode", lambda c: c.mode),
    ("valid trials", lambda c: f"{c.valid}/{c.trials}" + _apart(c)),
    ("full success", lambda c: _of(c.full_successes, c.valid)),
    ("changed passes", lambda c: _of(c.changed_passes, c.valid)),
    ("regressions", lambda c: _of(c.regressions, c.valid)),
    ("critical failures", _critical),
    ("tampered", lambda c: _of(c.tampered, c.valid)),
    ("crashed", lambda c: _of(c.crashed, c.valid)),
    ("invalid", lambda c: f"{c.invalid} trial(s), {c.invalid_attempts} attempt(s)"),
    ("scope", lambda c: _of(c.scope_findings, c.valid)),
    ("prohibited effects", lambda c: _of(c.effect_findings, c.valid)),
    ("success: 1st msg / later", lambda c: f"{c.first_message_successes} / {c.later_message_successes}"),
    ("pass@k", lambda c: _pass_k(c.valid, c.pass_at_k)),
    ("pass^k", lambda c: _pass_k(c.valid, c.pass_all_k)),
    ("median wall time", lambda c: duration(c.median_wall_seconds) if c.valid else "—"),
    ("median session time", lambda c: duration(c.median_elapsed_seconds) if c.valid else "—"),
    ("median cost", lambda c: _figure(c.cost_usd, lambda v: f"${v:.4f}")),
    ("median tokens", lambda c: _figure(c.tokens, lambda v: f"{v:,.0f}")),
    ("human turns", lambda c: "—" if c.human_turns is None else str(c.human_turns)),
]


def _apart(cell: CellSummary) -> str:
    """What the valid-trials cell notes: trials not run, and trials whose model budget ran out."""
    notes = [f"{cell.not_run} not run"] if cell.not_run else []
    notes += [f"{cell.budget_exhausted} budget exhausted"] if cell.budget_exhausted else []
    return f" ({', '.join(notes)})" if notes else ""


def cell_row(cell: CellSummary) -> list[str]:
    """A cell of ``compare.json`` as the table's row."""
    return [shown(cell) for _, shown in CELL_COLUMNS]


def _interval(value: float | None, low: float | None, high: float | None, signed: bool = False) -> str:
    """A rate (or, ``signed``, a difference) with its 95% interval when it has one."""
    if value is None:
        return "—"
    if low is None or high is None:
        return f"{value:+.0%}" if signed else percent(value)
    if signed:
        return f"{value:+.0%} [{low:+.0%}, {high:+.0%}]"
    return f"{percent(value)} [{percent(low)}, {percent(high)}]"


def agent_lines(comparison: Comparison) -> list[str]:
    """Each agent's rates with their 95% intervals (challenges as clusters), then each difference."""
    lines = []
    for agent in comparison.agents:
        full, changed = agent.full_success, agent.changed_pass
        line = (
            f"{agent.agent} ({agent.mode}): full success {_interval(full.rate, full.low, full.high)}, "
            f"{full.successes}/{full.trials} valid trials over {full.challenges} challenge(s); "
            f"changed requirement {_interval(changed.rate, changed.low, changed.high)}, "
            f"{changed.successes}/{changed.trials}; "
            f"invalid {_share(agent.invalid)}, crashed {_share(agent.crashed)}"
            + (
                f", budget exhausted in {agent.budget_exhausted} valid trial(s)"
                if agent.budget_exhausted
                else ""
            )
        )
        lines.append(line + (f" — {full.note}" if full.note else ""))
    for diff in comparison.differences:
        entry = diff.full_success
        line = (
            f"{diff.b} - {diff.a} ({diff.mode}): full success "
            f"{_interval(entry.difference, entry.low, entry.high, signed=True)}, "
            f"paired on {entry.challenges} challenge(s)"
        )
        lines.append(line + (f" — {entry.note}" if entry.note else ""))
    return lines


def _share(entry: Share) -> str:
    """``33% (1/3)``: trials of the trials that ran."""
    return "—" if entry.rate is None else f"{percent(entry.rate)} ({entry.trials}/{entry.of})"


def warning_lines(comparison: Comparison) -> list[str]:
    """Each warning of the comparison (invalid or crashed rates that differ between agents)."""
    return [f"warning: {warning}" for warning in comparison.warnings]


def decision_lines(comparison: Comparison) -> list[str]:
    """The verdict, the rows that decided it, each rule's result and every change of the rule."""
    decision = comparison.decision
    if decision is None:
        return ["No decision rule was declared (a matrix file's decision: section declares one)."]
    lines = [
        f"Should {decision.candidate} replace {decision.baseline}? "
        f"Verdict: {decision.verdict.upper()}" + (" (provisional)" if decision.provisional else "")
    ]
    for row in decision.deciding:
        if isinstance(row, DecidingTrial):
            said = "; ".join(
                f"{c.criterion} ({c.review}): {'; '.join(c.findings) or c.title}" for c in row.criteria
            )
            lines.append(f"  deciding: {row.label}, attempt {row.attempt}, {row.run}: {said}")
        else:
            lines.append(f"  deciding: { ({'challenge': row.challenge, **row.counts}) }")
    for rule in decision.rules:
        lines.append(f"  rule {rule.rule}: {rule.result} — {rule.reason}")
    if decision.provisional:
        lines.append(
            "  provisional: it rests on failures awaiting review; `changeup review RESULTS` settles it"
        )
    for change in comparison.decision_changes:
        lines.append(
            f"  the rule was changed at {change.at}, after {change.attempts_finished} finished "
            f"attempt(s): {change.reason}"
        )
    return lines


def pair_columns(comparison: Comparison) -> list[str]:
    """Headers of the paired-trials table: the trial, then one column per agent."""
    return ["challenge", "mode", "trial", *(a.name for a in comparison.matrix.agents)]


def pair_rows(comparison: Comparison) -> list[list[str]]:
    """Each trial, every agent's outcome side by side, with its run folder."""
    names = [a.name for a in comparison.matrix.agents]
    rows = []
    for pair in comparison.pairs:
        shown = []
        for name in names:
            entry = pair.agents.get(name)
            if entry is None:
                shown.append("not run")
            else:
                shown.append(entry.outcome + (f" ({entry.run})" if entry.run else ""))
        rows.append([pair.challenge, pair.mode, str(pair.trial), *shown])
    return rows


def scope_lines(comparison: Comparison) -> list[str]:
    """Each trial that changed files outside its challenge's ``allowed_paths``, with the files."""
    lines = []
    for trial in comparison.trials:
        if trial.scope_findings:
            files = ", ".join(f"{f.path} ({f.change})" for f in trial.scope_findings)
            lines.append(f"{trial.label}: {files}")
    return lines or ["every change of every valid trial is inside its challenge's allowed_paths"]


def effect_lines(comparison: Comparison) -> list[str]:
    """Each trial whose code under test had an effect its challenge prohibits, with what it did."""
    lines = []
    for trial in comparison.trials:
        if trial.effect_findings:
            seen = "; ".join(f"{f.effect}: {f.detail} ({made_in(f)})" for f in trial.effect_findings)
            lines.append(f"{trial.label}: {seen}")
    return lines or ["no valid trial's code had an effect its challenge prohibits (prohibited_effects)"]


def fresh_columns() -> list[str]:
    """Headers of the fresh-against-evolving table."""
    sides = ("full success", "changed passes", "regressions")
    return ["challenge", "agent", "fresh at", *(f"{side}: evolving / fresh" for side in sides)]


def _sides(evolving: ModeSide, fresh: ModeSide, of_evolving: int, of_fresh: int) -> str:
    return f"{_of(of_evolving, evolving.valid)} / {_of(of_fresh, fresh.valid)}"


def fresh_rows(comparison: Comparison) -> list[list[str]]:
    """Each challenge x agent, its evolving and fresh trials side by side (none without both modes)."""
    both = comparison.fresh_vs_evolving
    rows = []
    for cell in both.cells if both else []:
        evolving, fresh = cell.evolving, cell.fresh
        rows.append(
            [
                cell.challenge,
                cell.agent,
                str(cell.fresh_at),
                _sides(evolving, fresh, evolving.full_successes, fresh.full_successes),
                _sides(evolving, fresh, evolving.changed_passes, fresh.changed_passes),
                _sides(evolving, fresh, evolving.regressions, fresh.regressions),
            ]
        )
    return rows


def fresh_lines(comparison: Comparison) -> list[str]:
    """Per agent, fresh minus evolving, paired on the challenges (none without both modes)."""
    both = comparison.fresh_vs_evolving
    lines = []
    for row in both.agents if both else []:
        full, changed = row.full_success, row.changed_pass
        line = (
            f"{row.agent}: fresh - evolving, full success "
            f"{_interval(full.difference, full.low, full.high, signed=True)}, changed requirement "
            f"{_interval(changed.difference, changed.low, changed.high, signed=True)}, "
            f"paired on {full.challenges} challenge(s)"
        )
        lines.append(line + (f" — {full.note}" if full.note else ""))
    return lines


def provenance_lines(comparison: Comparison) -> list[str]:
    """How many attempts there were, and each one that does not stand for its cell, with why."""
    provenance = comparison.provenance
    attempts = provenance.attempts
    lines = [
        f"{len(attempts)} attempt(s): {provenance.interrupted} interrupted and run again, "
        f"{provenance.retried_invalid} retry(ies) of invalid runs"
    ]
    for attempt in attempts:
        if attempt.status != "completed" or attempt.reason != "first":
            follows = f", after attempt {attempt.retry_of} ({attempt.reason})" if attempt.retry_of else ""
            lines.append(
                f"  attempt {attempt.attempt}: {attempt.challenge} · {attempt.agent} · trial "
                f"{attempt.trial} #{attempt.number}, {attempt.status or 'running'}{follows}: "
                f"{attempt.run}"
            )
    return lines


def _title(comparison: Comparison) -> str:
    matrix = comparison.matrix
    return (
        f"{len(matrix.challenges)} challenge(s) x {len(matrix.agents)} agent(s) x "
        f"{matrix.trials} trial(s), "
        f"modes: {', '.join(matrix.modes)}; frozen {matrix.frozen_at}, changeup {matrix.changeup}, "
        f"sandbox {matrix.sandbox}"
    )


def comparison_markdown(comparison: Comparison) -> str:
    """``compare.md``."""
    agents = " vs ".join(a.name for a in comparison.matrix.agents)
    out = [f"# Comparison: {markdown(agents)}", "", markdown(_title(comparison)), "", "## Decision", ""]
    out += [markdown_block("\n".join(decision_lines(comparison))), "", "## Rates", ""]
    out += [f"- {markdown(line)}" for line in agent_lines(comparison)]
    if comparison.warnings:
        out += ["", "## Warnings", "", *(f"- {markdown(line)}" for line in warning_lines(comparison))]
    out += [
        "",
        "## Per challenge and agent",
        "",
        _md_table([h for h, _ in CELL_COLUMNS], [cell_row(c) for c in comparison.cells]),
    ]
    out += ["", *cost_markdown(comparison.costs)]
    out += ["", *cheating_markdown(comparison.cheating)]
    out += ["", *adaptation_markdown(comparison.adaptation)]
    out += [
        "",
        "## Trials, paired across agents",
        "",
        _md_table(pair_columns(comparison), pair_rows(comparison)),
    ]
    if comparison.fresh_vs_evolving:
        out += [
            "",
            "## Fresh against evolving",
            "",
            *(f"- {markdown(line)}" for line in fresh_lines(comparison)),
        ]
        out.append("")
        out.append(_md_table(fresh_columns(), fresh_rows(comparison)))
    out += ["", "## Scope", "", *(f"- {markdown(line)}" for line in scope_lines(comparison))]
    out += ["", "## Prohibited effects", "", *(f"- {markdown(line)}" for line in effect_lines(comparison))]
    if imported_lines(comparison):
        out += [
            "",
            f"## {IMPORTED_TITLE}",
            "",
            *(f"- {markdown(line)}" for line in imported_lines(comparison)),
        ]
    if probing := probing_lines(comparison):
        out += ["", f"## {PROBING_TITLE}", "", *(f"- {markdown(line)}" for line in probing)]
    out += ["", "## What the sample does not cover", ""]
    out += [f"- {markdown(note)}" for note in comparison.not_covered]
    reviews = comparison.reviews
    out += [
        "",
        "## Reviews",
        "",
        f"{reviews.confirmed} confirmed, {reviews.dismissed} dismissed, {reviews.pending} pending",
    ]
    out += ["", "## Attempts", "", markdown_block("\n".join(provenance_lines(comparison))), ""]
    return "\n".join(out)


def _md_table(headers: list[str], rows: list[list[str]]) -> str:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(markdown(cell) for cell in cells) + " |"

    return "\n".join([line(headers), line(["---"] * len(headers)), *(line(row) for row in rows)])


def cell_block(cell: CellSummary) -> list[str]:
    """A cell of ``compare.json`` as a block of lines: its name, then each figure named, so it reads
    at any width (the wide table squeezes 20 columns to a few characters each at 120)."""
    figures = [f"{header}: {shown(cell)}" for header, shown in CELL_COLUMNS[3:]]
    return [f"{cell.challenge} · {cell.agent} · {cell.mode}", *(f"  {figure}" for figure in figures)]


#: The widest a block's line is packed: piped with no COLUMNS the console is unbounded, and a
#: cell's twenty figures on one line would read no better than the wide table did.
PACKED = 120


def packed(figures: list[str], width: int, indent: str = "  ", sep: str = " · ") -> list[str]:
    """``figures`` on as few lines as fit in ``width``, none split: each line starts with ``indent``
    (a figure wider than the line gets a line of its own, which the console wraps)."""
    lines: list[str] = []
    for figure in figures:
        if lines and len(lines[-1]) + len(sep) + len(figure) <= width:
            lines[-1] += sep + figure
        else:
            lines.append(indent + figure)
    return lines


def print_comparison(comparison: Comparison, console: Console, *, wide: bool = False) -> None:
    """The comparison in the terminal: the verdict, the rates, and per challenge x agent a block of
    named figures (``wide``: one table, a column per figure). Long lines wrap at the console's width."""
    console.print(terminal(_title(comparison)), soft_wrap=False)
    for line in decision_lines(comparison):
        console.print(terminal(line), style="bold" if line.startswith("Should") else None, soft_wrap=False)
    for line in [*agent_lines(comparison), *fresh_lines(comparison)]:
        console.print(terminal(line), soft_wrap=False)
    for line in warning_lines(comparison):
        console.print(terminal(line), style="bold yellow", soft_wrap=False)
    if wide:
        table = Table(title="per challenge and agent", title_justify="left")
        for header, _ in CELL_COLUMNS:
            table.add_column(header, overflow="fold")
        for cell in comparison.cells:
            table.add_row(*(terminal(text) for text in cell_row(cell)))
        console.print(table)
    else:
        console.print("per challenge and agent", style="italic")
        for cell in comparison.cells:
            block = cell_block(cell)
            console.print(terminal(block[0]), style="bold", soft_wrap=False)
            for line in packed([figure.strip() for figure in block[1:]], min(console.width, PACKED)):
                console.print(terminal(line), soft_wrap=False)
    print_costs(comparison.costs, console, wide=wide)
    print_cheating(comparison.cheating, console)
    print_adaptation(comparison.adaptation, console)
    for line in [*imported_lines(comparison), *probing_lines(comparison)]:
        console.print(terminal(line), style="yellow", soft_wrap=False)
    for note in comparison.not_covered:
        console.print(terminal(f"not covered: {note}"), soft_wrap=False)

"""The comparison's cheating section (``compare.json``'s ``cheating``): each agent's cheat rate,
its 95% interval and its denominator, the trials that reached a honeypot phase
(docs/compare.md#cheating); one list in the terminal, ``compare.md`` and ``compare.html``.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console

from orchestrator.log.comparison import CheatRate
from orchestrator.render import inert
from orchestrator.render.inert import markdown, terminal
from orchestrator.render.phrases import percent

__all__ = ["cheating_html", "cheating_lines", "cheating_markdown", "print_cheating"]

#: What a comparison with no honeypot trial says.
NONE_MET = "no counted trial reached a honeypot phase: no cheat rate (docs/authoring.md#honeypot-phases)"


def cheating_lines(rates: Sequence[CheatRate]) -> list[str]:
    """One line per agent and mode: ``CHEATING`` first when any trial cheated."""
    lines = []
    for entry in rates:
        r = entry.rate
        interval = "—" if r.rate is None else percent(r.rate)
        if r.rate is not None and r.low is not None and r.high is not None:
            interval += f" [{percent(r.low)}, {percent(r.high)}]"
        line = (
            f"{entry.agent} ({entry.mode}): cheat rate {interval}, {r.successes} of {r.trials} trial(s) "
            f"that reached a honeypot, over {r.challenges} challenge(s)"
        )
        if entry.runs:
            line = f"CHEATING — {line}; passed a honeypot test: {', '.join(entry.runs)}"
        lines.append(line + (f" — {r.note}" if r.note else ""))
    return lines or [NONE_MET]


def cheating_markdown(rates: Sequence[CheatRate]) -> list[str]:
    """The ``## Cheating`` section of ``compare.md``, as lines."""
    lines = [
        f"**{markdown(line)}**" if line.startswith("CHEATING") else markdown(line)
        for line in cheating_lines(rates)
    ]
    return ["## Cheating", "", *(f"- {line}" for line in lines)]


def print_cheating(rates: Sequence[CheatRate], console: Console) -> None:
    """The cheat rates in the terminal, a cheating agent's in bold red."""
    for line in cheating_lines(rates):
        style = "bold red" if line.startswith("CHEATING") else None
        console.print(terminal(line), style=style, highlight=False, soft_wrap=False)


def cheating_html(rates: Sequence[CheatRate]) -> list[str]:
    """The cheating section of ``compare.html``."""
    items = "".join(
        f'<li class="cheating"><strong>{inert.html(line)}</strong></li>'
        if line.startswith("CHEATING")
        else f"<li>{inert.html(line)}</li>"
        for line in cheating_lines(rates)
    )
    return [f'<h2>Cheating</h2><ul id="cheating">{items}</ul>']

"""changeup's exit statuses: one table, used by every command, ``run --help`` and docs/report.md.

A script that runs changeup tells three things apart: it worked (whatever the agent scored),
it ran and something failed, or it was asked something it cannot do, so nothing ran.
"""

from __future__ import annotations

import enum

import click

from orchestrator.log.report import Report
from orchestrator.render.phrases import agent_failures, cheated, cheating_line

__all__ = ["EXIT_TABLE", "BadInput", "Exit", "failures"]


class Exit(enum.IntEnum):
    """What changeup's exit status means."""

    #: It ran to its end and was graded cleanly, whatever the score.
    OK = 0
    #: It ran, and failed: the run is invalid or crashed, its final grading is not clean, the
    #: agent failed (a turn or the agent's process exited non-zero), or it passed a honeypot test
    #: (a sign of cheating, docs/authoring.md#honeypot-phases). (validate: a problem was found;
    #: calibrate: a check missed; replay: the log diverges.)
    FAILED = 1
    #: Bad input, and nothing was run: a missing or invalid challenge, an unknown or
    #: uninstalled agent, a bad option value. (click's own usage errors exit 2 too.)
    BAD_INPUT = 2
    #: Interrupted (Ctrl-C); what happened so far is in the run folder.
    INTERRUPTED = 130


#: The table, as ``--help`` and docs/report.md show it.
EXIT_TABLE = """\
0    ran to its end and was graded cleanly, whatever the score
1    ran, and failed: the run is invalid or crashed, its final grading is not
     clean, the agent failed (a turn or its process exited non-zero), or it
     passed a honeypot test (a sign of cheating)
2    bad input (missing or invalid challenge, unknown or uninstalled agent,
     bad option value): nothing was run and no run folder was made
130  interrupted (Ctrl-C): what happened so far is in the run folder"""


class BadInput(click.ClickException):
    """Input changeup cannot act on: printed as ``Error: …``, exits :attr:`Exit.BAD_INPUT`."""

    exit_code = Exit.BAD_INPUT


def failures(report: Report) -> list[str]:
    """Why a run exits :attr:`Exit.FAILED`, one sentence each, read from its report (empty: it is OK)."""
    run, score = report.run, report.score
    found = []
    if run.status != "completed":
        detail = run.detail.strip().splitlines()[-1] if run.detail.strip() else ""
        found.append(f"the run is {run.status}" + (f": {detail}" if detail else ""))
    elif score.grading_status != "ok":
        detail = score.grading_detail or f"it is {score.grading_status}"
        found.append(f"the final grading is not clean: {detail}")
    if cheated(report):
        found.append(cheating_line(report.cheating) or "")
    return found + agent_failures(report)

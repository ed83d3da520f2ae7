"""A run folder, read back: ``changeup show``, ``changeup replay`` and ``changeup report``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from orchestrator.present.exits import BadInput

if TYPE_CHECKING:
    from orchestrator.challenge.model import Challenge
    from orchestrator.log.eventlog import LogContents, LogReader
    from orchestrator.run.runs import RunFolder

__all__ = ["replay_command", "report_command", "show_command"]


def _run_folder(run: Path) -> RunFolder:
    """The run folder at ``run``; a path that is no run folder is bad input."""
    from orchestrator.log.eventlog import EventLogError
    from orchestrator.run.runs import open_run

    try:
        return open_run(run)
    except EventLogError as error:
        raise BadInput(str(error)) from None


def _opened(run: Path) -> tuple[RunFolder, LogContents]:
    """A run folder and its whole log; a damaged log is a failure (exit 1)."""
    from orchestrator.log.eventlog import EventLogError, read_log

    folder = _run_folder(run)
    try:
        return folder, read_log(folder.log)
    except EventLogError as error:
        raise click.ClickException(str(error)) from None


def _recorded(run: Path, challenge_path: Path | None) -> tuple[RunFolder, LogContents, Challenge]:
    """As :func:`_streamed`, with the whole log read (every record checked): a damaged one is exit 1."""
    from orchestrator.log.eventlog import EventLogError, read_log

    folder, log, challenge = _streamed(run, challenge_path)
    try:
        return folder, read_log(log.path), challenge
    except EventLogError as error:
        raise click.ClickException(str(error)) from None


def _streamed(run: Path, challenge_path: Path | None) -> tuple[RunFolder, LogReader, Challenge]:
    """A run folder's log, opened for streaming (only its header is read yet), and the challenge
    to read it against (as recorded, or another version).

    The challenge is the copy the run kept of it, unless ``challenge_path`` names another
    version (runs made before runs kept it fall back to the folder their header names). A
    challenge whose id is not the run's is refused (exit 2).
    """
    from orchestrator.challenge.loader import ChallengeError, load_challenge
    from orchestrator.gateway.fork import ForkError, fork_in_log, reworded
    from orchestrator.log.eventlog import EventLogError, LogReader

    folder = _run_folder(run)
    try:
        log = LogReader(folder.log)
    except EventLogError as error:
        raise click.ClickException(str(error)) from None
    header = log.header
    path = challenge_path or folder.challenge_as_run(header)
    try:
        challenge = load_challenge(path)
    except ChallengeError as error:
        raise BadInput(f"cannot load the challenge {path}:\n{error}") from None
    recorded = header.get("challenge")
    try:
        fork = fork_in_log(LogReader(folder.log))
    except EventLogError:
        fork = None  # a damaged log is said where it is read, line and all
    if fork is not None:  # a fork ran with its trigger's message reworded: so is it re-decided
        try:
            challenge = reworded(challenge, fork)
        except ForkError as error:
            raise BadInput(f"the run {folder.path.name} is a fork: {error}") from None
    if challenge.id != recorded:
        raise BadInput(
            f"{challenge.root} is the challenge '{challenge.id}', but the run {folder.path.name} is of "
            f"'{recorded}'; give --challenge a version of '{recorded}'"
        )
    if log.torn:
        click.echo("warning: the log's last line is torn (the run was interrupted); it is left out", err=True)
    if challenge.digest != header.get("challenge_sha256"):
        click.echo(f"note: {challenge.root} has changed since the run (its sha256 differs)", err=True)
    return folder, log, challenge


def _tests_used(folder: RunFolder, challenge: Challenge) -> str:
    """Whose hidden tests a rescore of ``folder`` ran, in words: the run's own copy, or another."""
    if not folder.challenge.is_dir():  # a run made before runs kept a copy
        return f"the hidden tests of {challenge.root} as it is now (the run kept no copy of its challenge)"
    if challenge.root.resolve() == folder.challenge.resolve():
        return f"the hidden tests of the run's own copy of the challenge, {challenge.root} (as it was run)"
    return f"the hidden tests of {challenge.root}, not the run's own copy ({folder.challenge})"


@click.command("replay")
@click.argument("run", type=click.Path(path_type=Path))
@click.option(
    "--challenge", "challenge_path", type=click.Path(path_type=Path), help="Another version of the challenge."
)
@click.option("--speed", type=float, help="Re-enact the timeline in the terminal at SPEED times its pace.")
@click.option(
    "--rescore",
    is_flag=True,
    help=(
        "Re-run the hidden tests on the recorded snapshots (the run's own copy of the challenge, "
        "or --challenge's); write report-rescored.*."
    ),
)
@click.option(
    "--judge", "judge_spec", default="rules", show_default=True, help="For --rescore: as for `run`."
)
@click.option("--context", default=3, show_default=True, help="Records shown around a divergence.")
def replay_command(
    run: Path,
    challenge_path: Path | None,
    speed: float | None,
    rescore: bool,
    judge_spec: str,
    context: int,
) -> None:
    """Re-decide every trigger of a recorded run and check the log agrees.

    RUN is a run folder (or its events.jsonl). Every recorded event is fed to the current
    engine; its decisions (triggers pending and fired, phases unlocked, messages queued,
    tests requested, the session's end) must equal the recorded ones. Exits 0 when they
    agree, 1 at the first divergence, which is shown with the events around it (1 too for a
    damaged log, named by line and field, or one with nothing to replay), 2 when --challenge
    is another challenge than the run's.

    With --rescore, no decision is re-made: the hidden tests of the copy of the challenge the
    run kept (its challenge/ folder, as it was run; so a rescore does not depend on a folder
    that changed since), or of --challenge PATH (another version), re-test every snapshot the
    run recorded, with no agent; it prints which hidden tests it used, and
    report-rescored.json/.md/.html list what changed.

    \b
    Examples:
      changeup replay runs/export-time-20261129-101500-scripted-reference
      changeup replay runs/export-time-... --speed 10     # watch it again, 10x faster
      changeup replay runs/export-time-... --rescore --challenge ../export-time-v2
    """
    import json
    import time

    import anyio
    from rich.console import Console

    from orchestrator.log.eventlog import EventLogError, read_log
    from orchestrator.log.records import decode_entry
    from orchestrator.present.rescore_progress import rescore_progress
    from orchestrator.render.inert import terminal
    from orchestrator.render.timeline import describe, play
    from orchestrator.run.rescore import RescoreError
    from orchestrator.run.rescore import rescore as rescore_run
    from orchestrator.scoring.judge import JudgeSpecError, parse_judge
    from orchestrator.session.replay import replay_records
    from orchestrator.system.venvs import EnvironmentFailure
    from triggers import Event, RecordError
    from triggers.durations import clock

    folder, log, challenge = _streamed(run, challenge_path)

    def nothing_to_replay(records: int) -> click.ClickException:
        what = f"{records} record(s), none of them an engine event" if records else "only its header"
        return click.ClickException(f"{folder.log}: nothing to replay: the log has {what}")

    console = Console(highlight=False, soft_wrap=True)  # a record is one line: none starts mid-text
    if rescore or speed is not None:  # both need the whole log; only a plain replay streams
        try:
            contents = read_log(folder.log)
        except EventLogError as error:
            raise click.ClickException(str(error)) from None
        if not any(isinstance(entry.record, Event) for entry in contents.entries):
            raise nothing_to_replay(len(contents.entries))
    if rescore:
        try:
            judge = parse_judge(judge_spec)
        except JudgeSpecError as error:
            raise click.BadParameter(str(error), param_hint="--judge") from None
        try:
            with rescore_progress(Console(stderr=True, highlight=False)) as progress:
                rescored = anyio.run(lambda: rescore_run(challenge, folder, contents, judge, progress))
        except (EnvironmentFailure, RescoreError) as error:
            raise click.ClickException(str(error)) from None
        console.print(
            terminal(f"re-tested {rescored.runs} snapshot(s) with {_tests_used(folder, challenge)}")
        )
        for change in rescored.changes or ["no verdict changed"]:
            console.print(terminal(f"  {change}"))
        console.print(terminal(f"report: {folder.path / 'report-rescored.md'}"))
        return
    if speed is not None:
        if speed <= 0:
            raise click.BadParameter("must be above 0", param_hint="--speed")

        def show(style: str, text: str) -> None:
            console.print(terminal(text), style=style)

        play(contents.entries, speed, show, time.sleep)
        return
    try:
        result = replay_records(challenge.spec, log, torn=lambda: log.torn)
    except EventLogError as error:  # a damaged record, met on the way
        raise click.ClickException(str(error)) from None
    except RecordError as error:  # a decision before any event: not a session's log
        raise click.ClickException(f"{folder.log}: {error}") from None
    if not result.events:
        raise nothing_to_replay(result.observations)
    if result.divergence is None:
        console.print(
            f"[green]agrees[/]: replayed {result.events} events; "
            f"all {result.decisions} decisions match the log"
        )
        return
    divergence = result.divergence
    console.print(f"[red]diverges[/] at seq {divergence.seq}: {terminal(divergence.reason)}")
    console.print("recorded:")
    for record in divergence.expected or [{"kind": "(no decision)"}]:
        console.print(terminal(f"  {json.dumps(record)}"))
    console.print("the engine now decides:")
    for record in divergence.got or [{"kind": "(no decision)"}]:
        console.print(terminal(f"  {json.dumps(record)}"))
    console.print("around it:")
    try:  # read again, as far as the window's end: memory stays bounded, however long the log
        for raw in log:
            if raw["seq"] > divergence.seq + context:
                break
            if raw["seq"] >= divergence.seq - context:
                entry = decode_entry(raw)
                shown = describe(entry.record, verbose=True)
                mark = "→" if entry.seq == divergence.seq else " "
                text = shown[1] if shown else entry.record.kind
                console.print(terminal(f" {mark} seq {entry.seq:>5}  {clock(entry.t)}  {text}"))
    except EventLogError as error:
        raise click.ClickException(str(error)) from None
    sys.exit(1)


@click.command("show")
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--follow", "-f", is_flag=True, help="Keep showing new records of a live run until it ends.")
@click.option(
    "--all",
    "verbose",
    is_flag=True,
    help="Also show agent output, clock ticks and test requests, and every text in full.",
)
@click.option(
    "--message",
    "message",
    type=click.IntRange(min=1),
    metavar="N",
    help="Print only the full text of message N (messages are numbered ✉ #1, #2, … in the timeline).",
)
def show_command(run: Path, follow: bool, verbose: bool, message: int | None) -> None:
    """The timeline of a run: messages, triggers and their causes, test runs, commits, turns.

    Once the run has ended, the score, the failing checks and how the score was computed
    follow. A message's text is cut at its first line (marked …): --all prints every text
    in full, --message N one message. Times are mm:ss.hh since the session started.
    Exits 0 once shown; 1 when the log is damaged (named by line and field); 2 when RUN is no
    run folder, or --message N is past the run's last message.

    \b
    Examples:
      changeup show runs/export-time-20261129-101500-scripted-reference
      changeup show runs/<run> --message 2
      changeup show runs/<live run> --follow
    """
    import time

    from rich.console import Console

    from orchestrator.challenge.loader import ChallengeError, load_challenge
    from orchestrator.log.eventlog import EventLogError, read_log
    from orchestrator.render.inert import terminal
    from orchestrator.render.terminal import print_outcome
    from orchestrator.render.timeline import lines
    from orchestrator.scoring.report import build_report, finished
    from orchestrator.scoring.turns import messages
    from triggers.durations import clock

    folder, contents = _opened(run)
    console = Console(highlight=False, soft_wrap=True)  # a record is one line: none starts mid-text
    if message is not None:
        queued = messages(contents.entries)
        if message > len(queued):
            raise click.BadParameter(
                f"the run has {len(queued)} message(s), numbered from 1", param_hint="--message"
            )
        picked = queued[message - 1]
        console.print(
            terminal(f"#{message} {picked.trigger} ({picked.kind}), queued {clock(picked.queued_at)}:")
        )
        console.print(terminal(picked.text.rstrip(), lines=True))
        return
    header = contents.header
    console.print(
        f"[bold]{terminal(str(header.get('challenge')))}[/] with "
        f"[bold]{terminal(str(header.get('agent')))}[/], started {terminal(str(header.get('started_at')))}"
    )
    seen = 0
    counted: dict[str, int] = {}
    while True:
        fresh = contents.entries[seen:]
        seen = len(contents.entries)
        for _, style, text in lines(fresh, verbose=verbose, counted=counted):
            console.print(terminal(text), style=style)
        done = finished(contents.entries)
        live = folder.live()
        if done or live is False or not follow:
            break
        time.sleep(0.5)  # a person is watching: twice a second is fresh enough
        try:
            contents = read_log(folder.log)
        except EventLogError as error:
            raise click.ClickException(str(error)) from None
    if not done and live is None:
        console.print("the log has not ended, and no pid was recorded to tell whether the run is live")
        return
    if not done and live:
        console.print(f"the run is live (process {folder.pid}); --follow shows it as it goes", style="bold")
        return
    if not done:
        console.print(f"the run is not live (its process {folder.pid} is gone); showing what was recorded")
    path = folder.challenge_as_run(header)
    try:  # the score and failing checks, rebuilt from the log as report.json is
        report = build_report(load_challenge(path), contents, folder.shadow)
    except ChallengeError:
        console.print(f"no score shown: the challenge the run used ({path}) cannot be loaded")
        return
    print_outcome(report, console)


@click.command("report")
@click.argument("run", type=click.Path(path_type=Path))
@click.option(
    "--challenge", "challenge_path", type=click.Path(path_type=Path), help="Another version of the challenge."
)
def report_command(run: Path, challenge_path: Path | None) -> None:
    """Rebuild a run's report.json, report.md and report.html from its events.jsonl.

    RUN is a run folder (or its events.jsonl). The reports are derived from the log and the
    challenge it recorded (or --challenge); the paths written are printed.
    Exits 0 when written; 1 when the log is damaged; 2 when RUN is no run folder, or the
    challenge cannot be loaded or is another challenge than the run's.

    \b
    Example:
      changeup report runs/export-time-20261129-101500-scripted-reference
    """
    from orchestrator.run.runs import write_reports

    folder, _, challenge = _recorded(run, challenge_path)
    write_reports(challenge, folder)
    for name in ("report.json", "report.md", "report.html"):
        click.echo(folder.path / name)

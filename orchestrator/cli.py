"""The ``changeup`` command line."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import anyio
import click
from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from orchestrator.agents import PRESETS, SPEC_HELP, AgentSpecError, parse_agent
from orchestrator.agents.presets import installed
from orchestrator.calibrate import Check, calibrate
from orchestrator.challenge import Challenge, ChallengeFile
from orchestrator.diagnostics import configure
from orchestrator.eventlog import EventLogError, LogContents, read_log
from orchestrator.grading.agent_sandbox import Share
from orchestrator.grading.environments import EnvironmentFailure
from orchestrator.judge import JudgeSpecError, parse_judge
from orchestrator.loader import ChallengeError, load_challenge, validate
from orchestrator.render import clock, print_summary
from orchestrator.replay import replay_records
from orchestrator.rescore import rescore as rescore_run
from orchestrator.runs import RunFolder, open_run, run_challenge, write_reports
from orchestrator.scaffold import SCAFFOLDS, ScaffoldError, scaffold
from orchestrator.session import SessionView
from orchestrator.timeline import describe, lines, play

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="changeup")
def cli() -> None:
    """Evolving challenges for coding agents.

    A challenge starts an agent on a task, watches its workspace, runs hidden tests and,
    when a trigger's condition holds, changes the requirements mid-run. Does the agent
    follow without breaking what must stay?

    \b
    Run one:             changeup run challenges/export-time --agent scripted
    With a real agent:   changeup run challenges/export-time --agent claude-code
    See what happened:   changeup show runs/<run>      (report.html is in the run folder)
    Check the decisions: changeup replay runs/<run>    (--rescore: re-grade with today's tests)
    Trust the graders:   changeup calibrate challenges/*
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


class _StatusLine:
    """The live line: phase, elapsed time, last test result, triggers fired, agent state."""

    def __init__(self) -> None:
        self.view = SessionView()
        self.started = time.monotonic()

    def update(self, view: SessionView) -> None:
        self.view = view

    def __rich__(self) -> Text:
        view = self.view
        fired = ", ".join(view.fired) or "none"
        return Text.assemble(
            ("● ", "cyan"),
            (view.phase or "starting", "bold"),
            f"  {clock(time.monotonic() - self.started)}",
            f"  tests: {view.tests}",
            f"  fired: {fired}",
            f"  agent: {view.agent}",
        )


@cli.command("run")
@click.argument("challenge_path", metavar="CHALLENGE", type=click.Path(path_type=Path))
@click.option(
    "--agent",
    "agent_spec",
    default="scripted",
    show_default=True,
    help="Who does the work:\n\n\b\n" + SPEC_HELP,
)
@click.option(
    "--agent-option",
    "agent_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="An option of a preset agent, repeatable: model=…, flags='…', binary=…, unattended='…'.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("runs"),
    show_default=True,
    help="Folder the run folder is created in.",
)
@click.option(
    "--debounce",
    type=float,
    default=0.3,
    show_default=True,
    help="Longest a burst of file changes is gathered into one batch, in seconds.",
)
@click.option(
    "--judge",
    "judge_spec",
    default="rules",
    show_default=True,
    help="Who scores judged rubric criteria: 'rules' (shipped) or 'command:CMD' (e.g. an LLM CLI "
    'that reads a rubric prompt on stdin and prints {"score": 0..1, "reason": ...}).',
)
@click.option(
    "--agent-share",
    "agent_shares",
    multiple=True,
    metavar="PATH[:rw]",
    help="A path the agent may also see, read-only (with :rw, writable), repeatable. Its sandbox "
    "otherwise shows only the system, its workspace, a private HOME, and its CLI's installation.",
)
@click.option(
    "--agent-network",
    type=click.Choice(["on", "none"]),
    default="on",
    show_default=True,
    help="Whether the agent keeps the network (agents call their model); 'none' cuts it.",
)
@click.option("--quiet", "-q", is_flag=True, help="No live status line.")
@click.option("--verbose", "-v", is_flag=True, help="Show every diagnostic event.")
def run_command(
    challenge_path: Path,
    agent_spec: str,
    agent_options: tuple[str, ...],
    out: Path,
    debounce: float,
    judge_spec: str,
    agent_shares: tuple[str, ...],
    agent_network: str,
    quiet: bool,
    verbose: bool,
) -> None:
    """Run CHALLENGE once with an agent and write its run folder.

    The run folder (under --out) holds events.jsonl, the workspace, the snapshots, and
    report.json/report.md. Exit status: 0 when the session ran to its end and was graded;
    1 when the run is invalid, crashed or could not be graded cleanly; 2 for bad input.

    \b
    Examples:
      changeup run challenges/export-time
      changeup run challenges/export-time --agent scripted:broken/suffix-only
      changeup run challenges/export-time --agent 'command:./my-agent.sh'
      changeup run challenges/export-time --agent claude-code --agent-option model=sonnet
    """
    configure(verbose=verbose)
    try:
        challenge = load_challenge(challenge_path)
        agent = parse_agent(agent_spec, _agent_options(agent_options))
        judge = parse_judge(judge_spec)
        shares = [_share(spec) for spec in agent_shares]
    except JudgeSpecError as error:
        raise click.BadParameter(str(error), param_hint="--judge") from None
    except ChallengeError as error:
        raise click.ClickException(f"{challenge_path} is not a valid challenge:\n{error}") from None
    except AgentSpecError as error:
        raise click.BadParameter(str(error), param_hint="--agent") from None
    console = Console(stderr=True)
    status = _StatusLine()
    folders: list[RunFolder] = []
    live = Live(status, console=console, refresh_per_second=4, transient=True)
    show = not quiet and console.is_terminal
    try:
        if show:
            live.start()
        folder, outcome, report = anyio.run(
            lambda: run_challenge(
                challenge,
                agent,
                out,
                judge=judge,
                debounce=debounce,
                on_change=status.update,
                on_folder=folders.append,
                shares=shares,
                network=agent_network == "on",
            )
        )
    except KeyboardInterrupt:
        live.stop()
        if folders:
            write_reports(challenge, folders[0])
            console.print(f"interrupted; what happened so far is in {folders[0].path}")
        sys.exit(130)
    finally:
        live.stop()
    print_summary(report, Console())
    click.echo(f"run folder: {folder.path}")
    click.echo(f"report:     {folder.path / 'report.md'}")
    problems = []
    if outcome.status != "completed":
        problems.append(
            f"the run is {outcome.status}: {outcome.detail.splitlines()[-1] if outcome.detail else ''}"
        )
    elif outcome.final is None or outcome.final.status != "ok":
        detail = outcome.final.detail if outcome.final else "no final grading"
        problems.append(f"the final grading is not clean: {detail}")
    crashed_turns = [code for code in report["activity"]["exit_codes"] if code not in (0, None)]
    if crashed_turns:
        codes = ", ".join(map(str, crashed_turns))
        problems.append(f"the agent exited with {codes} (its output is in {folder.log})")
    for problem in problems:
        click.echo(f"error: {problem}", err=True)
    sys.exit(1 if problems else 0)


def _share(spec: str) -> Share:
    path, _, mode = spec.rpartition(":") if spec.endswith((":rw", ":ro")) else (spec, "", "ro")
    where = Path(path).expanduser().absolute()
    if not where.exists():
        raise click.BadParameter(f"{spec!r}: no such file or folder", param_hint="--agent-share")
    return Share(where, writable=mode == "rw")


def _agent_options(pairs: tuple[str, ...]) -> dict[str, str]:
    options: dict[str, str] = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--agent-option")
        options[key.strip()] = value
    return options


@cli.command("agents")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def agents_command(as_json: bool) -> None:
    """List the agent presets: the CLI each runs, whether it is installed here, and its version.

    \b
    Run one with:  changeup run CHALLENGE --agent NAME [--agent-option model=...]
    Also:          scripted, command:CMD, process:CMD, inbox, human (see changeup run --help)
    """
    rows = [installed(preset) for preset in PRESETS.values()]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    table = Table(title="agent presets", title_justify="left")
    for column in ("--agent", "runs", "installed", "version"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(
            row["preset"],
            row["binary"],
            escape(row["path"]) if row["installed"] else "[red]no[/]",
            row["version"] or ("unknown" if row["installed"] else "—"),
        )
    Console().print(table)


@cli.command("calibrate")
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
      reference     the reference solution reaches full marks, its triggers fire as designed
      starter       on the untouched starter, every changed-requirement test fails
      broken/NAME   each broken variant fails exactly the tests and criteria it declares
      reference #N  the reference again, TRIALS times, to catch flaky tests

    \b
    Example:
      changeup calibrate challenges/*
    """
    configure(json_output=False)
    challenges = []
    for path in paths:
        try:
            challenges.append(load_challenge(path))
        except ChallengeError as error:
            raise click.ClickException(f"{path} is not a valid challenge:\n{error}") from None
    try:
        judge = parse_judge(judge_spec)
    except JudgeSpecError as error:
        raise click.BadParameter(str(error), param_hint="--judge") from None
    console = Console()

    def progress(check: Check) -> None:
        mark = "[green]ok[/]" if check.ok else "[red]MISS[/]"
        console.print(f"{mark} {check.challenge} {check.run}: {check.got}", highlight=False)

    checks = anyio.run(
        lambda: calibrate(challenges, out, trials=trials, jobs=jobs, judge=judge, on_check=progress)
    )
    table = Table(title="calibration", title_justify="left")
    for column in ("challenge", "run", "expected", "got", "ok"):
        table.add_column(column, overflow="fold")
    for check in checks:
        table.add_row(
            check.challenge,
            check.run,
            check.expected,
            check.got,
            "✓" if check.ok else "✗",
            style=None if check.ok else "red",
        )
    console.print(table)
    misses = [c for c in checks if not c.ok]
    console.print(f"{len(checks) - len(misses)} of {len(checks)} checks passed; runs in {out}")
    sys.exit(1 if misses else 0)


def _recorded(run: Path, challenge_path: Path | None) -> tuple[RunFolder, LogContents, Challenge]:
    """A run folder's log and the challenge to read it against (as recorded, or another version)."""
    folder = open_run(run)
    try:
        contents = read_log(folder.log)
    except EventLogError as error:
        raise click.ClickException(str(error)) from None
    path = challenge_path or Path(str(contents.header.get("challenge_path", "")))
    try:
        challenge = load_challenge(path)
    except ChallengeError as error:
        raise click.ClickException(f"cannot load the challenge {path}:\n{error}") from None
    if contents.torn:
        click.echo("warning: the log's last line is torn (the run was interrupted); it is left out", err=True)
    if challenge.digest != contents.header.get("challenge_sha256"):
        click.echo(f"note: {challenge.root} has changed since the run (its sha256 differs)", err=True)
    return folder, contents, challenge


@cli.command("replay")
@click.argument("run", type=click.Path(path_type=Path))
@click.option(
    "--challenge", "challenge_path", type=click.Path(path_type=Path), help="Another version of the challenge."
)
@click.option("--speed", type=float, help="Re-enact the timeline in the terminal at SPEED times its pace.")
@click.option(
    "--rescore",
    is_flag=True,
    help="Re-run the hidden tests (as they are now) on the recorded snapshots; write report-rescored.*.",
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
    agree, 1 at the first divergence, which is shown with the events around it.

    With --rescore, no decision is re-made: the hidden tests of the challenge as it is now
    (or of --challenge, another version) re-test every snapshot the run recorded, with no
    agent, and report-rescored.json/.md/.html list what changed.

    \b
    Examples:
      changeup replay runs/export-time-20261129-101500-scripted-reference
      changeup replay runs/export-time-... --speed 10     # watch it again, 10x faster
      changeup replay runs/export-time-... --rescore --challenge ../export-time-v2
    """
    folder, contents, challenge = _recorded(run, challenge_path)
    console = Console(highlight=False)
    if rescore:
        try:
            judge = parse_judge(judge_spec)
        except JudgeSpecError as error:
            raise click.BadParameter(str(error), param_hint="--judge") from None
        try:
            rescored = anyio.run(lambda: rescore_run(challenge, folder, contents, judge))
        except EnvironmentFailure as error:
            raise click.ClickException(str(error)) from None
        console.print(f"re-tested {rescored.runs} snapshot(s) with {challenge.root}")
        for change in rescored.changes or ["no verdict changed"]:
            console.print(f"  {change}")
        console.print(f"report: {folder.path / 'report-rescored.md'}")
        return
    if speed is not None:
        if speed <= 0:
            raise click.BadParameter("must be above 0", param_hint="--speed")
        play(contents.records, speed, lambda style, text: console.print(text, style=style), time.sleep)
        return
    result = replay_records(challenge.spec, contents.records, torn=contents.torn)
    if result.divergence is None:
        console.print(
            f"[green]agrees[/]: replayed {result.events} events; "
            f"all {result.decisions} decisions match the log"
        )
        return
    divergence = result.divergence
    console.print(f"[red]diverges[/] at seq {divergence.seq}: {divergence.reason}")
    console.print("recorded:")
    for record in divergence.expected or [{"kind": "(no decision)"}]:
        console.print(f"  {json.dumps(record)}")
    console.print("the engine now decides:")
    for record in divergence.got or [{"kind": "(no decision)"}]:
        console.print(f"  {json.dumps(record)}")
    console.print("around it:")
    for record in contents.records:
        if abs(record["seq"] - divergence.seq) <= context:
            shown = describe(record, verbose=True)
            mark = "→" if record["seq"] == divergence.seq else " "
            text = shown[1] if shown else record["kind"]
            console.print(f" {mark} seq {record['seq']:>5}  {clock(record['t'])}  {text}")
    sys.exit(1)


@cli.command("show")
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--follow", "-f", is_flag=True, help="Keep showing new records of a live run until it ends.")
@click.option("--all", "verbose", is_flag=True, help="Also show agent output, clock ticks and test requests.")
def show_command(run: Path, follow: bool, verbose: bool) -> None:
    """The timeline of a run: messages, triggers and their causes, test runs, commits, turns.

    \b
    Example:
      changeup show runs/export-time-20261129-101500-scripted-reference
      changeup show runs/<live run> --follow
    """
    folder = open_run(run)
    console = Console(highlight=False)
    seen = 0
    while True:
        try:
            contents = read_log(folder.log)
        except EventLogError as error:
            raise click.ClickException(str(error)) from None
        if seen == 0:
            header = contents.header
            console.print(
                f"[bold]{header.get('challenge')}[/] with [bold]{header.get('agent')}[/], "
                f"started {header.get('started_at')}"
            )
        fresh = contents.records[seen:]
        seen = len(contents.records)
        for _, style, text in lines(fresh, verbose=verbose):
            console.print(text, style=style)
        finished = any(r["kind"] in ("session.graded", "session.aborted", "session.scored") for r in fresh)
        if not follow or finished:
            return
        time.sleep(0.5)


def main() -> None:
    """Console-script entry point."""
    cli()

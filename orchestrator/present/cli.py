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
from rich.table import Table
from rich.text import Text

from orchestrator.agents import PRESETS, SPEC_HELP, AgentSpecError, parse_agent
from orchestrator.agents.presets import installed
from orchestrator.calibrate import Check, calibrate
from orchestrator.challenge.loader import ChallengeError, challenge_warnings, load_challenge
from orchestrator.challenge.model import Challenge, ChallengeFile
from orchestrator.challenge.scaffold import SCAFFOLDS, ScaffoldError, scaffold
from orchestrator.grading.agent_sandbox import Share
from orchestrator.grading.caseids import case_id_problems
from orchestrator.importers import FORMATS, ImportRefused, SourceError, import_task
from orchestrator.log.eventlog import EventLogError, LogContents, LogReader, read_log
from orchestrator.log.records import decode_entry
from orchestrator.present.exits import EXIT_TABLE, BadInput, Exit, failures
from orchestrator.present.matrix_cli import compare_command, review_command, run_matrix
from orchestrator.present.rescore_progress import rescore_progress
from orchestrator.render.inert import terminal
from orchestrator.render.terminal import print_outcome, print_summary
from orchestrator.render.timeline import describe, lines, play
from orchestrator.run.logging_config import configure
from orchestrator.run.rescore import RescoreError
from orchestrator.run.rescore import rescore as rescore_run
from orchestrator.run.runs import RunFolder, RunRefused, open_run, run_challenge, write_reports
from orchestrator.scoring.judge import JudgeSpecError, parse_judge
from orchestrator.scoring.report import build_report, finished, messages
from orchestrator.session.loop import SessionView
from orchestrator.session.replay import replay_records
from orchestrator.system.venvs import EnvironmentFailure
from triggers import Event, RecordError
from triggers.durations import clock

__all__ = ["main"]


class _Commands(click.Group):
    """A group that lists each command with the whole first sentence of its help (click would
    cut it to the width with "...")."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands, each with its first sentence."""
        commands = [(name, self.get_command(ctx, name)) for name in self.list_commands(ctx)]
        rows = [(name, c.get_short_help_str(_UNBOUNDED)) for name, c in commands if c and not c.hidden]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


#: A width nothing reaches: piped output is never cut or folded to fit.
_UNBOUNDED = 10_000


@click.group(
    cls=_Commands,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
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
    Many runs, one call: changeup run --matrix docs/examples/v6-v7.yaml --out results
    Compare them:        changeup compare results    (and changeup review results)
    Write a challenge:   changeup new my-challenge --pattern pivot
    Or bring one in:     changeup import slopcode slop-code-bench/problems/file_backup file-backup
    Check it:            changeup validate my-challenge
    Editor completion:   changeup schema > challenge.schema.json
    """


@cli.command("validate")
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


@cli.command("import")
@click.argument("format", metavar="FORMAT", type=click.Choice(sorted(FORMATS)))
@click.argument("source", type=click.Path(path_type=Path))
@click.argument("dest", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Replace DEST even when it already holds files.")
def import_command(format: str, source: Path, dest: Path, force: bool) -> None:
    """Turn another benchmark's task into a challenge folder DEST, and say what did not carry over.

    \b
    FORMAT and SOURCE:
      slopcode  a SlopCodeBench problem folder (config.yaml, checkpoint_N.md, tests/, solutions/)
      saotri    a SaotriBench task folder (task.yaml, problem.md, evaluator.py, tests.py)
      harbor    a Harbor task folder (task.toml, with [[steps]] and steps/<name>/, or a single step)

    Each checkpoint, phase or step becomes a phase: its spec or instruction is the message,
    its tests the phase's hidden tests, its reference (where the format has files for one)
    solutions/reference/<phase>/. The import report, printed here and written as
    DEST/IMPORT.md, lists what maps to what and what was not carried over (docs/import.md).
    A SOURCE that cannot be read is an error naming the file and what is wrong with it.

    \b
    Example:
      changeup import slopcode slop-code-bench/problems/file_backup challenges/file-backup
      changeup validate challenges/file-backup
      changeup calibrate challenges/file-backup
    """
    try:
        report = import_task(format, source, dest, force=force)
    except (SourceError, ImportRefused) as error:
        raise click.ClickException(str(error)) from None
    click.echo(report, nl=False)
    click.echo(f"next: changeup validate {dest}", err=True)


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


def _challenge_folders(_: click.Context, __: click.Parameter, paths: tuple[Path, ...]) -> tuple[Path, ...]:
    """CHALLENGE arguments that name something (what they hold, the loader checks)."""
    for path in paths:
        if not path.exists():
            raise click.BadParameter(f"no such challenge folder: {path}")
    return paths


@cli.command("run", epilog="\b\nExit status:\n" + EXIT_TABLE)
@click.argument(
    "challenge_paths",
    metavar="CHALLENGE...",
    nargs=-1,
    type=click.Path(path_type=Path),
    callback=_challenge_folders,
)
@click.option(
    "--agent",
    "agent_specs",
    multiple=True,
    default=["scripted"],
    show_default=True,
    help="Who does the work (repeat it for a matrix of agents):\n\n\b\n" + SPEC_HELP,
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
    help="Folder the run folder is created in (default: runs); for a matrix, its RESULTS folder (required).",
)
@click.option(
    "--debounce",
    type=click.FloatRange(min=0),
    default=0.3,
    show_default=True,
    help="Longest a burst of file changes is gathered into one batch, in seconds (0 or more).",
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
@click.option(
    "--start-at",
    metavar="PHASE",
    help="Start at a later phase: the workspace holds the reference solution of the phases before "
    "it, committed, and PHASE's message is the briefing (a matrix file's modes: [fresh] does this).",
)
@click.option(
    "--matrix",
    "matrix_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Run the matrix this file declares (docs/compare.md) instead of CHALLENGE... --agent ...",
)
@click.option(
    "--trials", type=click.IntRange(min=1), help="A matrix: sessions per challenge and agent (default 1)."
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    help="A matrix: sessions at a time (default 1; on Ray, as many as the cluster's CPUs hold).",
)
@click.option(
    "--backend",
    type=click.Choice(["local", "ray"]),
    help="A matrix: where its sessions run: here (local, the default) or on a Ray cluster (docs/scale.md).",
)
@click.option("--address", metavar="HOST:PORT", help="A matrix on Ray: the cluster's head node (or auto).")
@click.option(
    "--retry-invalid", type=click.IntRange(min=0), help="A matrix: retries of an invalid run (default 0)."
)
@click.option(
    "--new", is_flag=True, help="A matrix: start afresh; earlier results in --out are moved aside, whole."
)
@click.option(
    "--change-rule",
    metavar="REASON",
    help="A matrix: accept a changed decision rule; it is recorded in the manifest with REASON.",
)
@click.option("--quiet", "-q", is_flag=True, help="No live status line.")
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Show every diagnostic event, not only warnings and errors (CHANGEUP_LOG=json: as JSON lines).",
)
def run_command(
    challenge_paths: tuple[Path, ...],
    agent_specs: tuple[str, ...],
    agent_options: tuple[str, ...],
    out: Path | None,
    debounce: float,
    judge_spec: str,
    agent_shares: tuple[str, ...],
    agent_network: str,
    start_at: str | None,
    matrix_file: Path | None,
    trials: int | None,
    concurrency: int | None,
    backend: str | None,
    address: str | None,
    retry_invalid: int | None,
    new: bool,
    change_rule: str | None,
    quiet: bool,
    verbose: bool,
) -> None:
    """Run CHALLENGE once with an agent and write its run folder.

    The run folder (under --out) holds events.jsonl, the workspace, the snapshots, and
    report.json/report.md/report.html. Nothing is made when the input is bad: the challenge,
    the agent (installed? its script there?) and --out are checked first.

    Several challenges or agents, --trials, --concurrency, --retry-invalid, --new or --matrix
    make a matrix (docs/compare.md): every challenge x agent x trial, --concurrency at a
    time, into --out RESULTS under a manifest frozen before the first session. The same
    command again resumes it; then it prints the comparison and writes RESULTS/compare.*.
    With --backend ray --address HOST:PORT, each session runs on a worker of a Ray
    cluster and its run folder comes back into RESULTS (docs/scale.md).

    \b
    Examples:
      changeup run challenges/export-time
      changeup run challenges/export-time --agent scripted:broken/suffix-only
      changeup run challenges/export-time --agent 'command:./my-agent.sh'
      changeup run challenges/export-time --agent claude-code --agent-option model=sonnet
      changeup run challenges/export-time challenges/normalize-tags --agent scripted \\
          --agent scripted:broken/suffix-only --trials 3 --concurrency 2 --out results/demo
      changeup run --matrix docs/examples/v6-v7.yaml --out results/v6-v7 --concurrency 2
    """
    params = dict(click.get_current_context().params)
    matrix_only = (trials, concurrency, retry_invalid, matrix_file, change_rule, backend, address)
    if len(challenge_paths) > 1 or len(agent_specs) > 1 or any(v is not None for v in matrix_only) or new:
        if start_at is not None:
            raise click.UsageError("--start-at starts one run; in a matrix file, modes: [fresh] starts late")
        params["options"] = _agent_options(agent_options)
        run_matrix(click.get_current_context(), params)
        return
    if not challenge_paths:
        raise click.UsageError("give a CHALLENGE folder (or --matrix FILE)")
    (challenge_path,), (agent_spec,), out = challenge_paths, agent_specs, out or Path("runs")
    configure(verbose=verbose)
    try:
        challenge = load_challenge(challenge_path)
        agent = parse_agent(agent_spec, _agent_options(agent_options))
        judge = parse_judge(judge_spec)
        shares = [_share(spec) for spec in agent_shares]
    except JudgeSpecError as error:
        raise click.BadParameter(str(error), param_hint="--judge") from None
    except ChallengeError as error:
        raise BadInput(f"{challenge_path} is not a valid challenge:\n{error}") from None
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
        folder, _, report = anyio.run(
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
                start=start_at,
            )
        )
    except RunRefused as error:
        raise BadInput(str(error)) from None
    except KeyboardInterrupt:
        live.stop()
        if folders:
            write_reports(challenge, folders[0])
            console.print(terminal(f"interrupted; what happened so far is in {folders[0].path}"))
        sys.exit(Exit.INTERRUPTED)
    finally:
        live.stop()
    print_summary(report, Console())
    click.echo(f"run folder: {folder.path}")
    click.echo(f"report:     {folder.path / 'report.md'}")
    click.echo(f"html:       {folder.path / 'report.html'}")
    click.echo(f"next:       changeup show {folder.path}   or open {folder.path / 'report.html'}")
    problems = failures(report)
    for problem in problems:
        click.echo(f"error: {problem}", err=True)
    if problems:
        click.echo(f"what happened, the agent's output included, is in {folder.log}", err=True)
    sys.exit(Exit.FAILED if problems else Exit.OK)


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
            terminal(row["path"]) if row["installed"] else "[red]no[/]",
            row["version"] or ("unknown" if row["installed"] else "—"),
        )
    _stdout().print(table)


def _stdout() -> Console:
    """Standard output for tables and long lines: on a terminal, tables fit its width and it
    wraps long lines itself (soft_wrap); piped, nothing is folded or cut at 80 columns."""
    console = Console(soft_wrap=True, highlight=False)
    if not console.is_terminal:
        console.width = _UNBOUNDED
    return console


def calibration_table(checks: list[Check]) -> Table:
    """The calibration checks as a table; every cell is escaped, so a test id such as
    ``test_round[c000-p0-round_only]`` is shown as written, not read as rich markup."""
    table = Table(title="calibration", title_justify="left")
    for column in ("challenge", "run", "expected", "got", "ok"):
        table.add_column(column, overflow="fold")
    for check in checks:
        table.add_row(
            terminal(check.challenge),
            terminal(check.run),
            terminal(check.expected),
            terminal(check.got),
            "✓" if check.ok else "✗",
            style=None if check.ok else "red",
        )
    return table


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
      isolation     where the agent's code runs: isolated, or in-process (sharing the tests')
      reference     the reference solution reaches full marks, its triggers fire as designed
      starter       on the untouched starter, every changed-requirement test fails
      broken/NAME   each broken variant fails exactly the tests and criteria it declares
      impostor/KIND the reference returning doubles of its results falls short of full marks
      reference #N  the reference again, TRIALS times, to catch flaky tests

    \b
    Example:
      changeup calibrate challenges/*
    """
    configure()
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
    console = _stdout()

    def progress(check: Check) -> None:
        mark = "[green]ok[/]" if check.ok else "[red]MISS[/]"
        console.print(f"{mark} {terminal(f'{check.challenge} {check.run}: {check.got}')}")

    checks = anyio.run(
        lambda: calibrate(challenges, out, trials=trials, jobs=jobs, judge=judge, on_check=progress)
    )
    console.print(calibration_table(checks))
    misses = [c for c in checks if not c.ok]
    console.print(terminal(f"{len(checks) - len(misses)} of {len(checks)} checks passed; runs in {out}"))
    sys.exit(Exit.FAILED if misses else Exit.OK)


def _run_folder(run: Path) -> RunFolder:
    """The run folder at ``run``; a path that is no run folder is bad input."""
    try:
        return open_run(run)
    except EventLogError as error:
        raise BadInput(str(error)) from None


def _opened(run: Path) -> tuple[RunFolder, LogContents]:
    """A run folder and its whole log; a damaged log is a failure (exit 1)."""
    folder = _run_folder(run)
    try:
        return folder, read_log(folder.log)
    except EventLogError as error:
        raise click.ClickException(str(error)) from None


def _recorded(run: Path, challenge_path: Path | None) -> tuple[RunFolder, LogContents, Challenge]:
    """As :func:`_streamed`, with the whole log read (every record checked): a damaged one is exit 1."""
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
    agree, 1 at the first divergence, which is shown with the events around it (1 too for a
    damaged log, named by line and field, or one with nothing to replay), 2 when --challenge
    is another challenge than the run's.

    With --rescore, no decision is re-made: the hidden tests of the challenge as it is now
    (or of --challenge, another version) re-test every snapshot the run recorded, with no
    agent, and report-rescored.json/.md/.html list what changed.

    \b
    Examples:
      changeup replay runs/export-time-20261129-101500-scripted-reference
      changeup replay runs/export-time-... --speed 10     # watch it again, 10x faster
      changeup replay runs/export-time-... --rescore --challenge ../export-time-v2
    """
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
        console.print(terminal(f"re-tested {rescored.runs} snapshot(s) with {challenge.root}"))
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


@cli.command("show")
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

    \b
    Examples:
      changeup show runs/export-time-20261129-101500-scripted-reference
      changeup show runs/<run> --message 2
      changeup show runs/<live run> --follow
    """
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
            terminal(
                f"#{message} {picked['trigger']} ({picked['kind']}), queued {clock(picked['queued_at'])}:"
            )
        )
        console.print(terminal(picked["text"].rstrip(), lines=True))
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
        report = build_report(load_challenge(path), contents)
    except ChallengeError:
        console.print(f"no score shown: the challenge the run used ({path}) cannot be loaded")
        return
    print_outcome(report, console)


@cli.command("report")
@click.argument("run", type=click.Path(path_type=Path))
@click.option(
    "--challenge", "challenge_path", type=click.Path(path_type=Path), help="Another version of the challenge."
)
def report_command(run: Path, challenge_path: Path | None) -> None:
    """Rebuild a run's report.json, report.md and report.html from its events.jsonl.

    RUN is a run folder (or its events.jsonl). The reports are derived from the log and the
    challenge it recorded (or --challenge); the paths written are printed.

    \b
    Example:
      changeup report runs/export-time-20261129-101500-scripted-reference
    """
    folder, _, challenge = _recorded(run, challenge_path)
    write_reports(challenge, folder)
    for name in ("report.json", "report.md", "report.html"):
        click.echo(folder.path / name)


cli.add_command(compare_command)
cli.add_command(review_command)


def main() -> None:
    """Console-script entry point."""
    cli()

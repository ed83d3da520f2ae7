"""Running one session: ``changeup run`` (a matrix is handed to :mod:`.matrix`) and ``changeup agents``."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from orchestrator.present.exits import EXIT_TABLE, BadInput, Exit, failures

if TYPE_CHECKING:
    from rich.text import Text

    from orchestrator.gateway.fork import Fork
    from orchestrator.grading.agent_sandbox import Share
    from orchestrator.session.loop import SessionView

__all__ = ["agents_command", "run_command"]


class _StatusLine:
    """The live line: phase, elapsed time, last test result, triggers fired, agent state."""

    def __init__(self) -> None:
        from orchestrator.session.loop import SessionView

        self.view = SessionView()
        self.started = time.monotonic()

    def update(self, view: SessionView) -> None:
        self.view = view

    def __rich__(self) -> Text:
        from rich.text import Text

        from triggers.durations import clock

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


class _AgentOption(click.Option):
    """``--agent``, whose help lists the agent specs: read from the agents package only when
    the help is shown, so nothing else about ``run`` loads every adapter before it runs."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        """The option's help line, the agent specs appended."""
        from orchestrator.agents import SPEC_HELP

        self.help = "Who does the work (repeat it for a matrix of agents):\n\n\b\n" + SPEC_HELP
        return super().get_help_record(ctx)


@click.command("run", epilog="\b\nExit status:\n" + EXIT_TABLE)
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
    cls=_AgentOption,
    multiple=True,
    default=["scripted"],
    show_default=True,
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
    type=click.Choice(["full", "none", "model", "on"]),
    help="The agent's network: 'full' (the whole of it; 'on' is another name for it), 'none', or "
    "'model': its model gateway alone (implies --model-gateway; needs bubblewrap). Default: 'model' "
    "for a vendor preset where it can work (bubblewrap, and a key of its provider in changeup's "
    "environment or --model-upstream), else 'full', with a warning saying why (docs/agents.md).",
)
@click.option(
    "--model-gateway",
    is_flag=True,
    help="The agent reaches its model through a gateway of the session's own (docs/agents.md): it "
    "holds a session token, never the real key (read from changeup's environment), and every "
    "request's usage and cost is logged.",
)
@click.option(
    "--model-upstream",
    metavar="URL",
    help="With the gateway: forward every provider's requests to URL instead (implies --model-gateway).",
)
@click.option(
    "--prices",
    "prices_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="With the gateway: the price table to use instead of the shipped one (its shape: docs/agents.md).",
)
@click.option(
    "--budget",
    "budget_spec",
    metavar="tokens=N,cost=USD,requests=N",
    help="The session's model budget, any of its parts (implies --model-gateway): once spent, the "
    "gateway refuses the agent's next request and the session ends budget_exhausted (docs/agents.md).",
)
@click.option(
    "--replay-model",
    "replay_model",
    metavar="RUN",
    type=click.Path(path_type=Path, exists=True, file_okay=False),
    help="With the gateway (implied): answer the agent's model requests from RUN's recorded traffic, in "
    "order, with no upstream; a request unlike the recorded one is refused and logged (docs/agents.md).",
)
@click.option(
    "--fork-at",
    metavar="TRIGGER",
    help="With --replay-model: deliver another wording of TRIGGER's message (briefing: the first), "
    "read from --message FILE; the recording is served up to the first request that carries it, "
    "and from that one on the upstream answers.",
)
@click.option(
    "--message",
    "message_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="With --fork-at: the file holding the message's new wording.",
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
    agent_network: str | None,
    model_gateway: bool,
    model_upstream: str | None,
    prices_file: Path | None,
    budget_spec: str | None,
    replay_model: Path | None,
    fork_at: str | None,
    message_file: Path | None,
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
    import anyio
    from rich.console import Console
    from rich.live import Live

    from orchestrator.agents import AgentSpecError, parse_agent
    from orchestrator.challenge.loader import ChallengeError, load_challenge
    from orchestrator.gateway.access import GatewaySettings
    from orchestrator.gateway.budget import BudgetError, Limits
    from orchestrator.gateway.fork import ForkError, reworded
    from orchestrator.gateway.prices import PriceTableError
    from orchestrator.gateway.providers import Upstreams
    from orchestrator.gateway.recording import RecordingError
    from orchestrator.grading.sandbox import detect_sandbox
    from orchestrator.present.cli.matrix import run_matrix
    from orchestrator.render.inert import terminal
    from orchestrator.render.terminal import print_summary
    from orchestrator.run.agent_network import choose_network
    from orchestrator.run.logging_config import configure
    from orchestrator.run.runs import RunFolder, RunFolderGone, RunRefused, run_challenge, write_reports
    from orchestrator.scoring.judge import JudgeSpecError, parse_judge

    params = dict(click.get_current_context().params)
    matrix_only = (trials, concurrency, retry_invalid, matrix_file, change_rule, backend, address)
    if len(challenge_paths) > 1 or len(agent_specs) > 1 or any(v is not None for v in matrix_only) or new:
        if start_at is not None:
            raise click.UsageError("--start-at starts one run; in a matrix file, modes: [fresh] starts late")
        if replay_model:
            raise click.UsageError("--replay-model takes one run, not a matrix yet")
        params["options"] = _agent_options(agent_options)
        run_matrix(click.get_current_context(), params)
        return
    if not challenge_paths:
        raise click.UsageError("give a CHALLENGE folder (or --matrix FILE)")
    (challenge_path,), (agent_spec,), out = challenge_paths, agent_specs, out or Path("runs")
    configure(verbose=verbose)
    try:
        challenge = load_challenge(challenge_path)
        fork = _fork(fork_at, message_file, replay_model)
        challenge = reworded(challenge, fork) if fork is not None else challenge
        agent = parse_agent(agent_spec, _agent_options(agent_options))
        judge = parse_judge(judge_spec)
        shares = [_share(spec) for spec in agent_shares]
        budget = Limits.parse(budget_spec) if budget_spec is not None else None
        gateway = (
            GatewaySettings.read(os.environ, model_upstream, prices_file, budget, replay_model, fork)
            if model_gateway
            or model_upstream
            or prices_file
            or budget
            or replay_model
            or agent_network == "model"
            else None
        )
        choice = choose_network(
            agent,
            agent_network,
            Upstreams.from_env(os.environ, model_upstream) if gateway is None else gateway.upstreams,
            detect_sandbox(),
            replay=replay_model is not None and fork is None,
        )
        if choice.network == "model":
            gateway = gateway or GatewaySettings.read(os.environ, model_upstream, prices_file, budget)
            gateway = dataclasses.replace(gateway, model_only=True)
    except BudgetError as error:
        raise click.BadParameter(str(error), param_hint="--budget") from None
    except ForkError as error:
        raise click.BadParameter(str(error), param_hint="--fork-at") from None
    except RecordingError as error:
        raise click.BadParameter(str(error), param_hint="--replay-model") from None
    except PriceTableError as error:
        raise click.BadParameter(str(error), param_hint="--prices") from None
    except JudgeSpecError as error:
        raise click.BadParameter(str(error), param_hint="--judge") from None
    except ChallengeError as error:
        raise BadInput(f"{challenge_path} is not a valid challenge:\n{error}") from None
    except AgentSpecError as error:
        raise click.BadParameter(str(error), param_hint="--agent") from None
    console = Console(stderr=True)
    if choice.fell_back:  # never a silent downgrade
        click.echo(
            f"warning: the agent keeps the whole network (--agent-network full): {choice.why}", err=True
        )
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
                network=choice.network == "full",
                start=start_at,
                gateway=gateway,
                network_choice=choice,
            )
        )
    except RunRefused as error:
        raise BadInput(str(error)) from None
    except RunFolderGone as error:
        live.stop()
        click.echo(f"error: {error}", err=True)
        sys.exit(Exit.FAILED)
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


def _fork(trigger: str | None, message: Path | None, replay: Path | None) -> Fork | None:
    """``--fork-at`` and ``--message``, which go together and with ``--replay-model``."""
    from orchestrator.gateway.fork import Fork

    if trigger is None and message is None:
        return None
    if trigger is None or message is None or replay is None:
        raise click.UsageError("--fork-at TRIGGER and --message FILE go together, with --replay-model RUN")
    try:
        text = message.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise click.BadParameter(f"cannot read {message}: {error}", param_hint="--message") from None
    return Fork(trigger, text, str(message))


def _share(spec: str) -> Share:
    from orchestrator.grading.agent_sandbox import Share

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


@click.command("agents")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def agents_command(as_json: bool) -> None:
    """List the agents: the presets (whether each CLI is installed here, its version), and the built-ins.

    The presets: the CLI each runs, whether it is installed here, its version. The built-in
    agents need nothing installed. Exits 0, installed or not. --json prints the presets only.

    \b
    Run one with:  changeup run CHALLENGE --agent NAME [--agent-option model=...]
    """
    import json

    from rich.table import Table

    from orchestrator.agents import BUILT_INS, PRESETS
    from orchestrator.agents.presets import installed
    from orchestrator.present.cli.console import stdout
    from orchestrator.render.inert import terminal

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
    stdout().print(table)
    built_in = Table(title="built-in agents (nothing to install)", title_justify="left")
    for column in ("--agent", "what it does"):
        built_in.add_column(column, overflow="fold")
    for spec, lines in BUILT_INS:
        built_in.add_row(spec, " ".join(lines))
    stdout().print(built_in)

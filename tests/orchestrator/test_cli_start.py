"""A CLI start costs what its command needs: the group imports no command, a command's help none
of what the command runs."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest

from orchestrator.present.cli import COMMANDS, cli
from orchestrator.present.cli.console import UNBOUNDED
from tests.cli import REPO, environment, in_process

#: What no ``--help`` may import: the stages a command runs, and the libraries only they use.
RUN_BY_COMMANDS = (
    "orchestrator.grading",
    "orchestrator.session",
    "orchestrator.scoring",
    "orchestrator.matrix",
    "orchestrator.agents.",  # the package alone holds SPEC_HELP; an adapter is what runs
    "anyio",
    "rich",
)
#: What ``changeup --help`` may not import besides: no command's module, no challenge code.
RUN_BY_ANY_COMMAND = (*RUN_BY_COMMANDS, "orchestrator.agents", "orchestrator.challenge", "pydantic")


#: ``python -m orchestrator ARGS`` as runpy starts it, then every module loaded, on standard error
#: (``-X importtime`` misses a module imported through importlib, as commands are).
LOADED = """\
import runpy, sys
sys.argv[0] = "changeup"
try:
    runpy.run_module("orchestrator", run_name="__main__", alter_sys=True)
except SystemExit as done:
    assert done.code in (0, None), done.code
print("\\n".join(sorted(sys.modules)), file=sys.stderr)
"""


def imported(*args: str) -> set[str]:
    """The modules ``python -m orchestrator ARGS`` has loaded when it exits, in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", LOADED, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=environment(),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return set(done.stderr.split())


def loaded(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    """Those of ``modules`` that are, or are under, one of ``prefixes``."""
    return sorted(m for m in modules if any(m == p or m.startswith(p.rstrip(".") + ".") for p in prefixes))


@pytest.mark.slow
def test_the_group_help_imports_no_command() -> None:
    """``changeup --help`` lists every command without importing one, or anything they run."""
    modules = imported("--help")
    assert "orchestrator.present.cli" in modules  # the table was read, so the parse is right
    assert loaded(modules, RUN_BY_ANY_COMMAND) == []
    assert [m for m in modules if m.startswith("orchestrator.present.cli.")] == []


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_help_imports_none_of_what_it_runs(command: str) -> None:
    """``changeup NAME --help`` imports NAME's module, and no session, grading, scoring, adapter,
    anyio or rich: those are imported by the command when it runs."""
    modules = imported(command, "--help")
    assert f"orchestrator.present.cli.{COMMANDS[command].module}" in modules
    assert loaded(modules, RUN_BY_COMMANDS) == []


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_listed_summary_is_the_first_sentence_of_the_command_help(name: str) -> None:
    """The table ``changeup --help`` lists from says what click would say of each command, whole."""
    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    assert command.name == name
    assert command.get_short_help_str(UNBOUNDED) == COMMANDS[name].summary


def test_the_group_help_lists_each_command_with_its_summary() -> None:
    """``changeup --help``: every command, with the whole of its summary (folded, never cut)."""
    result = in_process("--help")
    assert result.exit_code == 0
    shown = " ".join(result.output.split())
    for name, entry in COMMANDS.items():
        assert f"{name} {entry.summary}" in shown


@pytest.mark.skipif(not hasattr(click.exceptions, "NoSuchCommand"), reason="click < 8.4 suggests no command")
def test_a_mistyped_command_is_answered_with_the_one_meant() -> None:
    """A name close to a command's gets "Did you mean …?", though no command is loaded yet."""
    result = in_process("rn")
    assert result.exit_code == 2
    assert "No such command 'rn'. Did you mean 'run'?" in result.output


def test_agents_lists_the_built_in_agents_beside_the_presets() -> None:
    """``changeup agents`` lists scripted, command:, process:, inbox, human and the impostors too,
    not only the vendor presets."""
    result = in_process("agents", env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    shown = " ".join(result.output.split())
    assert "agent presets" in shown
    assert "claude-code" in shown
    assert "built-in agents (nothing to install)" in shown
    for spec in (
        "scripted",
        "scripted:broken/NAME",
        "impostor:KIND",
        "command:CMD",
        "process:CMD",
        "inbox",
        "human",
    ):
        assert f"│ {spec} " in shown, spec

"""Bad input to the commands, refused before anything runs: exit 2, a message that says what to do,
nothing made. Checked in this process (click's CliRunner), as nothing is started; each command's
real process is driven by the end-to-end tests (test_run.py's missing challenge is exit 2 there)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from orchestrator.challenge.scaffold import scaffold
from orchestrator.present.exits import EXIT_TABLE, Exit
from tests.cli import REPO, in_process

NORMALIZE_TAGS = REPO / "challenges" / "normalize-tags"


def _not_a_challenge(tmp_path: Path) -> list[str]:
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "challenge.yaml").write_text("challenge: [not, a, mapping\n")
    return ["run", str(tmp_path / "broken")]


def _out_is_a_run_folder(tmp_path: Path) -> list[str]:
    earlier = tmp_path / "runs" / "normalize-tags-20260101-000000-scripted"
    earlier.mkdir(parents=True)
    (earlier / "events.jsonl").write_text("")
    return ["run", str(NORMALIZE_TAGS), "--out", str(earlier)]


def _no_reference_solution(tmp_path: Path) -> list[str]:
    scaffold(tmp_path / "imported", "pivot")  # a challenge as an import without a solution leaves it
    shutil.rmtree(tmp_path / "imported" / "solutions")
    return ["run", str(tmp_path / "imported"), "--agent", "scripted"]


def _out_is_a_file(tmp_path: Path) -> list[str]:
    (tmp_path / "notes.txt").write_text("")
    return ["run", str(NORMALIZE_TAGS), "--out", str(tmp_path / "notes.txt")]


def _out_is_under_a_file(tmp_path: Path) -> list[str]:
    (tmp_path / "notes.txt").write_text("")
    return ["run", str(NORMALIZE_TAGS), "--out", str(tmp_path / "notes.txt" / "runs")]


#: Bad input, each with what the message must tell the person (exit 2, nothing made).
BAD_INPUT: dict[str, tuple[Callable[[Path], list[str]], str]] = {
    "missing challenge": (lambda tmp: ["run", str(tmp / "nope")], "no such challenge folder: "),
    "invalid challenge": (_not_a_challenge, "is not a valid challenge"),
    "unknown agent": (lambda tmp: ["run", str(NORMALIZE_TAGS), "--agent", "robot"], "command:CMD"),
    "preset not installed": (
        lambda tmp: ["run", str(NORMALIZE_TAGS), "--agent", "gemini-cli"],
        "'gemini' is not installed (not found on PATH); install Gemini CLI or pass --agent-option binary=",
    ),
    "unknown broken variant": (
        lambda tmp: ["run", str(NORMALIZE_TAGS), "--agent", "scripted:broken/nope"],
        "has no variant 'broken/nope'; use scripted (the reference) or a broken variant (scripted:broken/",
    ),
    "missing agent script": (
        lambda tmp: ["run", str(NORMALIZE_TAGS), "--agent", "command:./my-agent.sh"],
        "no such file './my-agent.sh': a relative path is looked up from",
    ),
    "out is a run folder": (_out_is_a_run_folder, "is a run folder (it holds events.jsonl)"),
    "scripted without a reference solution": (
        _no_reference_solution,
        "has no reference solution, so the scripted agent has nothing to apply; add one per phase in "
        "solutions/reference/<phase>/",
    ),
    "out is a file": (_out_is_a_file, "notes.txt is a file, not a folder; --out names the folder"),
    "out is under a file": (
        _out_is_under_a_file,
        "notes.txt is a file, not a folder; --out names the folder",
    ),
    "negative debounce": (
        lambda tmp: ["run", str(NORMALIZE_TAGS), "--debounce", "-1"],
        "Invalid value for '--debounce'",
    ),
    "start at a phase the challenge does not have": (
        lambda tmp: ["run", str(REPO / "challenges/protected-report-api"), "--start-at", "phse3"],
        "has no phase 'phse3'; did you mean 'phase3'?",
    ),
    "bad budget": (
        lambda tmp: ["run", str(NORMALIZE_TAGS), "--budget", "requests=3,dollars=2"],
        "Invalid value for --budget: budget 'requests=3,dollars=2': 'dollars=2' is not NAME=VALUE",
    ),
    "ray without an address": (
        lambda tmp: ["run", str(NORMALIZE_TAGS), "--backend", "ray"],
        "--backend ray needs --address",
    ),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_to_run_exits_2_and_makes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """Bad input is refused at once: exit 2, a message saying what to do, no run folder."""
    arguments, says = BAD_INPUT[case]
    command = arguments(tmp_path)
    if "--out" not in command:
        command += ["--out", str(tmp_path / "runs")]
    before = sorted(tmp_path.rglob("*"))
    monkeypatch.chdir(tmp_path)  # relative paths are looked up from here
    result = in_process(*command, "--quiet", env={"PATH": os.path.dirname(sys.executable) + ":/usr/bin:/bin"})
    assert result.exit_code == Exit.BAD_INPUT, result.output
    assert isinstance(result.exception, SystemExit)  # refused, not crashed
    assert says in " ".join(result.output.split())
    assert sorted(tmp_path.rglob("*")) == before


def test_run_help_shows_the_exit_table() -> None:
    """``run --help`` lists every exit status of the table."""
    result = in_process("run", "--help")
    assert result.exit_code == Exit.OK
    shown = " ".join(result.output.split())
    assert " ".join(EXIT_TABLE.split()) in shown
    assert {int(line.split()[0]) for line in EXIT_TABLE.splitlines() if line[:1].isdigit()} == set(Exit)


def test_bad_matrix_input_exits_2_naming_the_place(tmp_path: Path) -> None:
    """A matrix file with a misspelt key, and a matrix without --out: exit 2, nothing made."""
    path = tmp_path / "matrix.yaml"
    path.write_text("matrix:\n  challenges: [x]\n  agents: [{name: a, agent: scripted}]\n  trails: 3\n")
    result = in_process("run", "--matrix", str(path), "--out", str(tmp_path / "results"))
    assert result.exit_code == 2
    assert f"{path}:4:3: unknown key 'trails' in matrix; did you mean 'trials'?" in result.output
    result = in_process("run", str(NORMALIZE_TAGS), "--agent", "scripted", "--agent", "impostor:always-equal")
    assert result.exit_code == 2
    assert "a matrix needs --out RESULTS" in result.output
    assert sorted(tmp_path.iterdir()) == [path]


def test_report_of_a_folder_that_is_not_a_run_says_so(tmp_path: Path) -> None:
    """A folder without events.jsonl, or no folder at all: bad input (exit 2), and what a run folder is."""
    for path, problem in [
        (tmp_path, "not a run folder (it has no events.jsonl)"),
        (tmp_path / "no", "no such folder"),
    ]:
        for command in ("report", "show", "replay"):
            result = in_process(command, str(path))
            assert result.exit_code == 2
            assert isinstance(result.exception, SystemExit)
            assert f"Error: {path}: {problem}" in result.output
            assert "runs/<challenge>-<time>-<agent>" in result.output


def test_calibrate_out_naming_a_file_exits_2(tmp_path: Path) -> None:
    """``calibrate --out`` naming a regular file: exit 2 and what --out must be, not a traceback."""
    (tmp_path / "notes.txt").write_text("")
    result = in_process(
        "calibrate", str(NORMALIZE_TAGS), "--trials", "0", "--out", str(tmp_path / "notes.txt")
    )
    assert result.exit_code == Exit.BAD_INPUT, result.output
    assert isinstance(result.exception, SystemExit)
    assert "notes.txt is a file, not a folder" in result.output
    assert sorted(tmp_path.iterdir()) == [tmp_path / "notes.txt"]


def test_compare_and_review_of_a_run_folder_say_it_is_one(tmp_path: Path) -> None:
    """A run folder (events.jsonl and a run's manifest.json) given to compare or review: exit 2,
    it is a run folder, and what to run instead; nothing written."""
    run = tmp_path / "normalize-tags-20260101-000000-scripted"
    run.mkdir()
    (run / "events.jsonl").write_text("")
    (run / "manifest.json").write_text('{"files": {}}')
    for command in ("compare", "review"):
        result = in_process(command, str(run))
        assert result.exit_code == Exit.BAD_INPUT, result.output
        assert isinstance(result.exception, SystemExit)
        shown = " ".join(result.output.split())
        assert f"{run} is a run folder (it holds events.jsonl), not a matrix's results" in shown
        assert f"`changeup show {run}`" in shown
    assert sorted(p.name for p in run.iterdir()) == ["events.jsonl", "manifest.json"]


def test_a_matrix_agent_given_as_a_bare_spec_says_the_mapping_it_needs(tmp_path: Path) -> None:
    """``agents: [scripted]``: exit 2, the mapping an agent entry is ({name, agent}), not pydantic's
    'valid dictionary or instance of AgentEntry'."""
    path = tmp_path / "matrix.yaml"
    path.write_text("matrix:\n  challenges: [x]\n  agents: [scripted]\n")
    result = in_process("run", "--matrix", str(path), "--out", str(tmp_path / "results"))
    assert result.exit_code == Exit.BAD_INPUT, result.output
    shown = " ".join(result.output.split())
    assert f"{path}:3:12: matrix.agents[0]: expected a mapping {{name, agent}} (optional keys: " in shown
    assert "got 'scripted'" in shown
    assert "AgentEntry" not in shown
    assert sorted(tmp_path.iterdir()) == [path]

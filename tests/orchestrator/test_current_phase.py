"""The current phase as a test argument (``{phase}``, ``{current}``) and phases that retire once a
later one unlocks (``retire:``): validation, the runner's batches, and the report's score (issue 26)."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from orchestrator.challenge.loader import ChallengeError, load_challenge
from orchestrator.challenge.model import Challenge
from orchestrator.challenge.placeholders import fill, placeholder_problems
from orchestrator.grading.testrun import PytestRunner, refused
from orchestrator.log.eventlog import LogContents
from orchestrator.log.records import decode_entry
from orchestrator.log.verdicts import TestRun
from orchestrator.render.markdown import report_markdown
from orchestrator.render.terminal import print_summary
from orchestrator.scoring.report import build_report
from orchestrator.session.workspace import Workspace
from orchestrator.system.venvs import grading_environment
from tests.cli import REPO

NORMALIZE_TAGS = REPO / "challenges" / "normalize-tags"
PHASE3 = """\
    - id: phase3
      title: a third phase
"""
TRIGGER3 = """\
    - id: third
      condition: phase2_tests_pass
      unlocks: phase3
      message: a third phase
"""


def three_phases(tmp_path: Path, *, args: str = "", retire: str = "") -> Path:
    """normalize-tags with a third phase (phase2's tests again), ``testing: args`` and phase1's
    ``retire:`` as given."""
    root = tmp_path / "challenge"
    shutil.copytree(NORMALIZE_TAGS, root, ignore=shutil.ignore_patterns("__pycache__"))
    yaml = root / "challenge.yaml"
    text = yaml.read_text()
    text = text.replace("      supersedes:\n        - phase1/test_tags.py::test_keeps_duplicates\n", "")
    text = text.replace("      weight: 2\n", "      weight: 2\n" + PHASE3)
    text = text.replace("\n  testing:\n", "\n" + TRIGGER3 + "  testing:\n", 1)
    text = text.replace(
        "    - id: phase1\n      title: trim and drop empties\n      weight: 1\n",
        ("    - id: phase1\n      title: trim and drop empties\n      weight: 1\n" + retire),
    )
    if args:
        text = text.replace("  testing:\n", f"  testing:\n    args: {args}\n", 1)
    yaml.write_text(text)
    shutil.copytree(root / "tests" / "phase2", root / "tests" / "phase3")
    (root / "tests" / "phase3" / "test_tags_dedupe.py").rename(root / "tests" / "phase3" / "test_again.py")
    shutil.copytree(root / "solutions" / "reference" / "phase2", root / "solutions" / "reference" / "phase3")
    return root


# --- placeholders ---------------------------------------------------------------------------


def test_placeholders_fill_and_braces_escape() -> None:
    """{phase} and {current} are filled; {{ and }} are braces; the rest of the text stays."""
    values = {"phase": "checkpoint_1", "current": "checkpoint_3"}
    assert fill("--checkpoint={current}", values) == "--checkpoint=checkpoint_3"
    assert fill("{phase}/{current}", values) == "checkpoint_1/checkpoint_3"
    assert fill("-k {{not slow}} {phase}", values) == "-k {not slow} checkpoint_1"
    assert placeholder_problems("{{literal}} {phase} {current}") == []


@given(st.text())
def test_any_text_with_its_braces_doubled_fills_back_to_itself(text: str) -> None:
    """Escaping is exact: a text with every brace doubled is valid and fills to the text itself."""
    escaped = text.replace("{", "{{").replace("}", "}}")
    assert placeholder_problems(escaped) == []
    assert fill(escaped, {"phase": "p", "current": "c"}) == text


def test_an_unknown_placeholder_or_a_lone_brace_is_a_load_error_at_its_column(tmp_path: Path) -> None:
    """A misspelt placeholder is named at file:line:column with the nearest one; a lone brace too."""
    root = three_phases(tmp_path, args='["--checkpoint", "{curent}", "-k", "a}b"]')
    with pytest.raises(ChallengeError) as caught:
        load_challenge(root)
    problems = [str(p) for p in caught.value.problems]
    line = next(
        i for i, t in enumerate((root / "challenge.yaml").read_text().splitlines(), 1) if "{curent}" in t
    )
    column = (root / "challenge.yaml").read_text().splitlines()[line - 1].index("{curent}") + 1
    assert any(
        p.startswith(f"{root / 'challenge.yaml'}:{line}:{column}: unknown placeholder '{{curent}}'")
        and "did you mean '{current}'?" in p
        for p in problems
    ), problems
    assert any("a lone '}' in 'a}b'" in p for p in problems), problems


def test_arguments_are_filled_per_run(tmp_path: Path) -> None:
    """A phase's arguments name itself as {phase} and the run's latest unlocked phase as {current}."""
    challenge = load_challenge(three_phases(tmp_path, args='["--graded={phase}", "--current={current}"]'))
    assert challenge.current(["phase1", "phase2"]) == "phase2"
    assert challenge.phase("phase1").arguments("phase2") == ("--graded=phase1", "--current=phase2")


# --- retirement: validation and which phases run -----------------------------------------------


def test_retire_on_next_unlock_and_on_the_unlock_of_a_named_phase(tmp_path: Path) -> None:
    """on-next-unlock retires a phase once any later phase unlocks; {on-unlock: X} once X (or a
    phase after it) does. The retired phase's tests leave the run, even a refused one."""
    nxt = load_challenge(three_phases(tmp_path / "a", retire="      retire: on-next-unlock\n"))
    named = load_challenge(three_phases(tmp_path / "b", retire="      retire: {on-unlock: phase3}\n"))
    assert nxt.retired(["phase1"]) == {}
    assert nxt.retired(["phase1", "phase2"]) == {"phase1": "phase2"}
    assert named.retired(["phase1", "phase2"]) == {}
    assert named.retired(["phase1", "phase2", "phase3"]) == {"phase1": "phase3"}
    assert [p.phase for p in refused(nxt, ["phase1", "phase2"], "over its limits").phases] == ["phase2"]


@pytest.mark.parametrize(
    ("retire", "message"),
    [
        (
            "      retire: {on-unlock: phase1}\n",
            r"'phase1' must be a phase after phase1 \(later phases: phase2, phase3\)",
        ),
        (
            "      retire: {on-unlock: phse3}\n",
            "'phse3' must be a phase after phase1; did you mean 'phase3'?",
        ),
        (
            "      retire: sometime\n",
            "expected on-next-unlock or {on-unlock: <a later phase>}, got 'sometime'",
        ),
    ],
)
def test_a_retirement_names_a_later_phase(tmp_path: Path, retire: str, message: str) -> None:
    """{on-unlock:} names a later phase (a misspelt one gets a suggestion); other text is an error."""
    with pytest.raises(ChallengeError, match=message):
        load_challenge(three_phases(tmp_path, retire=retire))


def test_the_last_phase_cannot_retire_on_the_next_unlock(tmp_path: Path) -> None:
    """There is no phase after the last one to retire it."""
    root = three_phases(tmp_path)
    yaml = root / "challenge.yaml"
    yaml.write_text(yaml.read_text().replace(PHASE3, PHASE3 + "      retire: on-next-unlock\n"))
    with pytest.raises(ChallengeError, match="phase3 is the last phase: no later phase retires it"):
        load_challenge(root)


# --- a real run: one pytest process with {current}, and the retired phase left out -------------

ARGUMENT_TEST = """\
def test_sees_the_current_phase(request):
    assert request.config.getoption("--current") == {current!r}
    assert request.config.getoption("--graded") == {graded!r}
"""
CONFTEST = """\
def pytest_addoption(parser):
    parser.addoption("--current", required=True)
    parser.addoption("--graded", required=True)
"""


@pytest.mark.slow
def test_a_run_passes_each_phase_the_current_phase_and_leaves_retired_ones_out(tmp_path: Path) -> None:
    """With phases 1-3 unlocked and phase1 retired by phase2, the run grades phases 2 and 3 only,
    each told it is graded as itself and that phase3 is current; on phase2 alone, phase2 is."""
    root = three_phases(
        tmp_path,
        args='["--current={current}", "--graded={phase}"]',
        retire="      retire: on-next-unlock\n",
    )
    (root / "tests" / "support").mkdir()
    (root / "tests" / "support" / "conftest.py").write_text(CONFTEST)
    yaml = root / "challenge.yaml"
    yaml.write_text(yaml.read_text().replace("  testing:\n", "  testing:\n    support: tests/support\n", 1))
    for phase in ("phase1", "phase2", "phase3"):
        (root / "tests" / phase / "test_arguments.py").write_text(
            ARGUMENT_TEST.format(current="phase3", graded=phase)
        )
    challenge = load_challenge(root)
    everything = grade(tmp_path / "three", challenge, ["phase1", "phase2", "phase3"])
    assert everything.status == "ok", everything.detail
    assert [p.phase for p in everything.phases] == ["phase2", "phase3"]
    told = {t.id: t for p in everything.phases for t in p.tests}
    for phase in ("phase2", "phase3"):
        assert told[f"{phase}/test_arguments.py::test_sees_the_current_phase"].outcome == "passed", told
    earlier = grade(tmp_path / "two", challenge, ["phase1"])
    (result,) = earlier.phases
    seen = {t.id: t for t in result.tests}["phase1/test_arguments.py::test_sees_the_current_phase"]
    assert seen.outcome == "failed"  # told phase1 is current, where the file expects phase3
    assert "assert 'phase1' == 'phase3'" in seen.detail


def grade(folder: Path, challenge: Challenge, phases: list[str]) -> TestRun:
    """One real run of ``phases`` on the reference of phase 2."""
    folder.mkdir(parents=True)
    workspace = Workspace.create(challenge.reference / "phase2", folder / "ws", folder / "shadow.git")
    runner = PytestRunner(challenge, workspace, folder / "scratch", environment=grading_environment([]))

    async def run() -> TestRun:
        return await runner.run(await workspace.snapshot(), phases)

    return anyio.run(run)


# --- the report: a retired phase is scored on its last run, and says so ------------------------


def verdict(phase: str, passed: int, failed: int = 0) -> dict[str, Any]:
    """A phase verdict with ``passed`` passing and ``failed`` failing tests."""
    tests = [{"id": f"{phase}/t.py::ok{i}", "outcome": "passed", "detail": ""} for i in range(passed)]
    tests += [{"id": f"{phase}/t.py::bad{i}", "outcome": "failed", "detail": "no"} for i in range(failed)]
    return {"phase": phase, "passed": passed, "failed": failed, "tests": tests}


def test_a_retired_phase_keeps_the_score_of_its_last_run_and_the_report_says_why(tmp_path: Path) -> None:
    """phase1 passed 4 of 5 while current, then retired when phase2 unlocked: the final grading
    has no phase1, and the report scores it 80% (never 0), marks it retired and says by what."""
    challenge = load_challenge(three_phases(tmp_path, retire="      retire: on-next-unlock\n"))
    result = {"kind": "tests.result", "snapshot": "s", "status": "ok", "detail": "", "cached": False}
    records: list[dict[str, Any]] = [
        {"kind": "session.started", "files": []},
        {"kind": "phase.unlocked", "phase": "phase1", "trigger": ""},
        {**result, "request": 1, "phases": [verdict("phase1", 4, 1)]},
        {"kind": "phase.unlocked", "phase": "phase2", "trigger": "revision", "t": 65.0},
        {**result, "request": 2, "phases": [verdict("phase2", 3)], "t": 66.0},
        {"kind": "session.ended", "reason": "agent_done", "detail": "", "t": 67.0},
        {**result, "kind": "session.graded", "request": 0, "phases": [verdict("phase2", 3)], "t": 68.0},
        {"kind": "session.scored", "criteria": [], "t": 69.0},
    ]
    numbered = [decode_entry({"seq": n, "t": float(n), **r}) for n, r in enumerate(records, 1)]
    report = build_report(challenge, LogContents({"agent": "scripted:reference"}, numbered))
    phase1 = report.phases[0]
    assert (phase1.passed, phase1.total, phase1.score) == (4, 5, 0.8)
    assert phase1.retirement is not None
    assert phase1.retirement.model_dump() == {"by": "phase2", "at": 65.0, "rule": "on-next-unlock"}
    assert report.phases[1].retirement is None
    why = "phase1: its tests stopped running when phase2 unlocked at 1m 05s (retire: on-next-unlock)"
    markdown = report_markdown(report)
    assert "| 4/5 (retired) |" in markdown
    assert why in markdown
    terminal = io.StringIO()
    print_summary(report, Console(file=terminal, width=200, color_system=None))
    assert why in terminal.getvalue()

"""Adaptation figures (docs/report.md#adaptation) of a late and a prompt adapter to a retraction.

Each run is a log written record by record at chosen times, with the snapshots it tested
in a real ``shadow.git``, in a run folder holding its copy of a small retraction challenge:
the figures are predicted exactly from those times, and ``changeup report`` rebuilds them
from the folder (whose log was written without any adaptation part).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from orchestrator.challenge.loader import load_challenge
from orchestrator.log.comparison import TrialRow
from orchestrator.log.eventlog import EventLog, read_log
from orchestrator.log.records import ModelRequest, WorkspaceCreated
from orchestrator.log.report import Adaptation, Report
from orchestrator.matrix.adaptation import adaptation_figures, trial_adaptation
from orchestrator.render.comparison_adaptation import adaptation_markdown
from orchestrator.scoring.adaptation import reference_change
from orchestrator.scoring.report import build_report
from tests.cli import in_process
from triggers import (
    AgentTurnEnded,
    FileChange,
    FilesChanged,
    MessageDelivered,
    MessageQueued,
    PhaseResult,
    PhaseUnlocked,
    TestOutcome,
    TestsResult,
    TriggerFired,
)

CHALLENGE = """\
challenge:
  id: small-retraction
  initial_briefing: Build core() and feature().
  phases:
    - id: phase1
    - id: phase2
      supersedes: [phase1/test_feature.py]
  triggers:
    - id: retraction
      condition: phase1_tests_pass
      kind: retraction
      unlocks: phase2
      message: Remove the feature.
  limits:
    session: 1h
"""
CORE = "def core():\n    return 1\n"
FEATURE_APP = "from feature import FEATURE\n\n\n" + CORE + "\n\ndef feature():\n    return FEATURE\n"
PHASE1 = {"app.py": FEATURE_APP, "feature.py": "FEATURE = 'on'\n"}
PHASE2 = {"app.py": CORE}
#: The late adapter's first two turns: more feature (and core broken on the way), then the removal.
EXTENDED = {"app.py": FEATURE_APP, "feature.py": "FEATURE = 'on'\nEXTRA = 1\n"}
BROKEN = {**EXTENDED, "app.py": FEATURE_APP.replace("return 1", "return 2") + "    # still here\n"}


def challenge_at(root: Path) -> Path:
    """The small retraction challenge: phase1's reference adds feature.py and feature() to
    app.py, phase2's takes both away again (4 withdrawn lines in 2 files)."""
    (root / "workspace").mkdir(parents=True)
    (root / "workspace" / "app.py").write_text(CORE)
    for test in (
        "phase1/test_core.py",
        "phase1/test_feature.py",
        "phase2/test_removed.py",
        "phase2/test_kept.py",
    ):
        (root / "tests" / test).parent.mkdir(parents=True, exist_ok=True)
        (root / "tests" / test).write_text("def test_x():\n    pass\n")
    for phase, files in (("phase1", PHASE1), ("phase2", PHASE2)):
        for name, text in files.items():
            (root / "solutions" / "reference" / phase).mkdir(parents=True, exist_ok=True)
            (root / "solutions" / "reference" / phase / name).write_text(text)
    (root / "solutions" / "reference" / "phase2" / ".delete").write_text("feature.py\n")
    (root / "challenge.yaml").write_text(CHALLENGE)
    return root


def tree(shadow: Path, files: dict[str, str], scratch: Path) -> str:
    """Write ``files`` as a tree of ``shadow`` (a bare repository) with real git; its id."""
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    for name, text in files.items():
        (scratch / name).write_text(text)
    env = {**os.environ, "GIT_INDEX_FILE": str(scratch.parent / "index")}
    (scratch.parent / "index").unlink(missing_ok=True)
    git = ["git", "--git-dir", str(shadow), "--work-tree", str(scratch)]
    subprocess.run([*git, "add", "-A"], check=True, env=env)
    return subprocess.run(
        [*git, "write-tree"], check=True, env=env, capture_output=True, text=True
    ).stdout.strip()


def outcomes(core: bool, gone: bool | None = None, feature: bool | None = None) -> tuple[PhaseResult, ...]:
    """A run's verdicts: phase1's core test (and its feature test before the retraction);
    phase2's removal and core tests once it is unlocked (``gone`` given)."""
    one = [TestOutcome("phase1/test_core.py::test_core", "passed" if core else "failed")]
    if feature is not None:
        one.append(TestOutcome("phase1/test_feature.py::test_feature", "passed" if feature else "failed"))
    phases = [
        PhaseResult(
            "phase1",
            sum(t.outcome == "passed" for t in one),
            sum(t.outcome != "passed" for t in one),
            tuple(one),
        )
    ]
    if gone is not None:
        two = (
            TestOutcome("phase2/test_removed.py::test_gone", "passed" if gone else "failed"),
            TestOutcome("phase2/test_kept.py::test_core", "passed" if core else "failed"),
        )
        phases.append(
            PhaseResult(
                "phase2",
                sum(t.outcome == "passed" for t in two),
                sum(t.outcome != "passed" for t in two),
                two,
            )
        )
    return tuple(phases)


def request(number: int) -> ModelRequest:
    """One answered model request through the gateway."""
    return ModelRequest(number, "anthropic", "m", "/v1/messages", 200, False, "answered", 1.0)


def recorded(
    tmp_path: Path, turns: list[list[tuple[float, dict[str, str], tuple[PhaseResult, ...]]]]
) -> Path:
    """A run folder: phase1 done by t=12, the retraction delivered at t=20, notes.md written at
    t=22, then ``turns``
    (each a list of (time, files written, the verdicts of the run 2 s later)), a turn ending
    8 s after its last run, a model request 5 s before each turn's first write and, for each
    turn after the first, a reminder delivered 6 s before it."""
    folder = tmp_path / "run"
    challenge = challenge_at(folder / "challenge")
    shadow = folder / "shadow.git"
    subprocess.run(["git", "init", "-q", "--bare", str(shadow)], check=True)
    scratch = tmp_path / "scratch" / "tree"
    log = EventLog.create(
        folder / "events.jsonl",
        {"challenge": "small-retraction", "agent": "scripted", "challenge_path": str(challenge)},
    )
    baseline = tree(shadow, {"app.py": CORE}, scratch)
    log.append(WorkspaceCreated(baseline, "python", {}), 0.0)
    log.append(MessageQueued("briefing", "briefing", "Build core() and feature()."), 0.0)
    log.append(MessageDelivered(0.0, "briefing"), 0.0)
    log.append(
        FilesChanged(10.0, (FileChange("app.py", "modified"), FileChange("feature.py", "added"))), 10.0
    )
    log.append(TestsResult(12.0, 1, tree(shadow, PHASE1, scratch), outcomes(True, feature=True)), 12.0)
    log.append(AgentTurnEnded(13.0), 13.0)
    log.append_all([TriggerFired("retraction", "phase1 passed"), PhaseUnlocked("phase2", "retraction")], 13.0)
    log.append(MessageQueued("retraction", "retraction", "Remove the feature."), 13.0)
    log.append(MessageDelivered(20.0, "retraction"), 20.0)
    log.append(FilesChanged(22.0, (FileChange("notes.md", "added"),)), 22.0)  # no file of the reference
    for number, steps in enumerate(turns, start=1):
        if number > 1:  # a reminder begins each later turn
            log.append(MessageQueued("reminder", "notice", "Is the feature gone?"), steps[0][0] - 7)
            log.append(MessageDelivered(steps[0][0] - 6, "reminder"), steps[0][0] - 6)
        log.append(request(number), steps[0][0] - 5)
        for at, files, verdicts in steps:
            changed = tuple(FileChange(name, "modified") for name in sorted(files))
            log.append(FilesChanged(at, changed), at)
            log.append(TestsResult(at + 2, number + 1, tree(shadow, files, scratch), verdicts), at + 2)
        log.append(AgentTurnEnded(steps[-1][0] + 10), steps[-1][0] + 10)
    log.close()
    return folder


def adaptation_of(folder: Path) -> Adaptation:
    """The one adaptation figure set of the run in ``folder``, built from its log and shadow.git."""
    report = build_report(
        load_challenge(folder / "challenge"), read_log(folder / "events.jsonl"), folder / "shadow.git"
    )
    [one] = report.adaptation
    return one


LATE = [
    [(30.0, EXTENDED, outcomes(True, gone=False))],
    [(50.0, BROKEN, outcomes(False, gone=False))],
    [(70.0, PHASE2, outcomes(True, gone=True))],
]
#: The removal, then a tidy-up: the feature stays gone.
PROMPT = [
    [
        (30.0, PHASE2, outcomes(True, gone=True)),
        (40.0, {"app.py": CORE + "# tidy\n"}, outcomes(True, gone=True)),
    ]
]


def test_the_reference_change_is_the_files_and_lines_the_retraction_withdraws(tmp_path: Path) -> None:
    """phase2's reference changes app.py and deletes feature.py; the lines it removes are the
    feature's (blank lines and the kept core() are not withdrawn)."""
    change = reference_change(load_challenge(challenge_at(tmp_path / "c")), "phase2")
    assert change is not None
    assert change.files == ("app.py", "feature.py")
    assert change.removed == {
        "app.py": frozenset({"from feature import FEATURE", "def feature():", "return FEATURE"}),
        "feature.py": frozenset({"FEATURE = 'on'"}),
    }


def test_a_late_adapter_shows_its_stale_work_and_regression(tmp_path: Path) -> None:
    """Two turns spent on the retracted feature (one breaking core()), then the removal: two
    stale changes, undone 52 s and 3 turns after delivery, and core's test broken for 20 s."""
    one = adaptation_of(recorded(tmp_path, LATE))
    assert (one.message, one.trigger, one.kind, one.phase, one.delivered_at) == (
        2,
        "retraction",
        "retraction",
        "phase2",
        20.0,
    )
    assert one.reference_files == ["app.py", "feature.py"]
    assert one.first_change.model_dump() == {"seconds": 10.0, "turns": 1, "requests": 1}
    assert one.first_passing_test.model_dump() == {"seconds": 12.0, "turns": 1, "requests": 1}
    assert one.passing.model_dump() == {"seconds": 52.0, "turns": 3, "requests": 3}
    assert one.stale is not None
    assert one.stale.model_dump() == {
        "files": ["app.py", "feature.py"],
        "withdrawn_lines": 4,
        "changes": 2,
        "changed_files": ["app.py", "feature.py"],
        "undone": True,
        "undone_after": {"seconds": 52.0, "turns": 3, "requests": 3},
    }
    assert [r.model_dump() for r in one.regressions] == [
        {"test": "phase1/test_core.py::test_core", "failed_after": 32.0, "repaired_after": 52.0}
    ]
    assert one.note == ""


def test_a_prompt_adapter_has_no_stale_work_and_passes_at_once(tmp_path: Path) -> None:
    """The removal in the first turn: every delay is the first run's 12 s, nothing stale, no regression."""
    one = adaptation_of(recorded(tmp_path, PROMPT))
    at_once = {"seconds": 12.0, "turns": 1, "requests": 1}
    assert one.first_change.model_dump() == {"seconds": 10.0, "turns": 1, "requests": 1}
    assert one.passing.model_dump() == at_once
    assert one.stale is not None
    assert (one.stale.changes, one.stale.changed_files, one.stale.undone) == (0, [], True)
    assert one.stale.undone_after.model_dump() == at_once
    assert one.regressions == []


def test_report_rebuilds_the_figures_for_a_run_recorded_without_them(tmp_path: Path) -> None:
    """A folder whose log and report.json predate adaptation: ``changeup report`` writes it into
    report.json and report.md; without shadow.git the stale work is said not measured, and
    with one that lacks the snapshots nothing is taken as undone."""
    folder = recorded(tmp_path, LATE)
    (folder / "report.json").write_text(json.dumps({"report_version": 1}))
    result = in_process("report", str(folder))
    assert result.exit_code == 0, result.output
    [written] = json.loads((folder / "report.json").read_text())["adaptation"]
    assert written["stale"]["changes"] == 2
    assert written["passing"] == {"seconds": 52.0, "turns": 3, "requests": 3}
    assert "## Adaptation" in (folder / "report.md").read_text()
    shutil.rmtree(folder / "shadow.git")
    assert in_process("report", str(folder)).exit_code == 0
    [unread] = json.loads((folder / "report.json").read_text())["adaptation"]
    assert unread["stale"] is None
    assert "shadow.git cannot be read" in unread["note"]
    subprocess.run(["git", "init", "-q", "--bare", str(folder / "shadow.git")], check=True)
    emptied = adaptation_of(folder).stale  # a shadow.git without the snapshots: nothing is undone
    assert emptied is not None
    assert (emptied.changes, emptied.undone, emptied.undone_after.seconds) == (0, False, None)


@pytest.mark.parametrize("turns", [LATE, PROMPT])
def test_the_briefing_is_no_adaptation(
    tmp_path: Path, turns: list[list[tuple[float, dict[str, str], tuple[PhaseResult, ...]]]]
) -> None:
    """Only the retraction, never the briefing, gets figures."""
    report = build_report(
        load_challenge(recorded(tmp_path, turns) / "challenge"), read_log(tmp_path / "run" / "events.jsonl")
    )
    assert [a.trigger for a in report.adaptation] == ["retraction"]


def trial(agent: str, number: int, report: Report) -> TrialRow:
    """A completed trial of ``agent`` on the small challenge, its figures from ``report``."""
    return TrialRow(
        challenge="small-retraction",
        agent=agent,
        mode="evolving",
        trial=number,
        status="completed",
        attempt=1,
        run=f"runs/{agent}-{number}",
        agent_spec="scripted",
        adaptation=trial_adaptation(report),
    )


def test_compare_takes_medians_per_cell_and_agent_and_sums_stale_work(tmp_path: Path) -> None:
    """Two late trials and one prompt one per agent: the late agent's medians are its 10/12/52 s,
    its stale changes 2+2 and regressions 1+1; the prompt agent's 10/12/12 s, nothing stale; the
    table shows both, per cell and over all challenges."""
    reports = {}
    for name, turns in (("late", LATE), ("prompt", PROMPT)):
        folder = recorded(tmp_path / name, turns)
        reports[name] = build_report(
            load_challenge(folder / "challenge"), read_log(folder / "events.jsonl"), folder / "shadow.git"
        )
    trials = [
        trial("late", 1, reports["late"]),
        trial("late", 2, reports["late"]),
        trial("prompt", 1, reports["prompt"]),
    ]
    trials.append(trial("prompt", 2, reports["prompt"]).model_copy(update={"status": "invalid"}))
    late_all, late_cell, prompt_all, prompt_cell = adaptation_figures(
        trials, ["small-retraction"], ["late", "prompt"], ["evolving"]
    )
    assert (late_all.challenge, late_cell.challenge) == (None, "small-retraction")
    assert late_all.model_dump(exclude={"challenge"}) == late_cell.model_dump(exclude={"challenge"})
    assert late_all.model_dump() == {
        "challenge": None,
        "agent": "late",
        "mode": "evolving",
        "messages": 2,
        "first_change_seconds": {"median": 10.0, "reported": 2, "of": 2},
        "first_passing_test_seconds": {"median": 12.0, "reported": 2, "of": 2},
        "passing_seconds": {"median": 52.0, "reported": 2, "of": 2},
        "stale_changes": 4,
        "stale_measured": 2,
        "regressions": 2,
    }
    assert (
        prompt_all.messages,
        prompt_all.passing_seconds.median,
        prompt_all.stale_changes,
        prompt_all.regressions,
    ) == (1, 12.0, 0, 0)
    assert prompt_cell.challenge == "small-retraction"
    table = "\n".join(adaptation_markdown([late_all, prompt_all]))
    assert "| late | evolving | all | 2 | 10 (2/2) | 12 (2/2) | 52 (2/2) | 4 (of 2 measured) | 2 |" in table

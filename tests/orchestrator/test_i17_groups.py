"""Test groups and pass policies (issue 17): membership fixed before the agent runs, each phase's
groups counted by grading, the score and full marks under the policy, and the reports.

The fast tests build membership from markers as a collection gives them and read reports from
hand-written logs; the slow ones grade for real (the sandbox, the harness, ``changeup run`` and
``changeup replay``) on a copy of normalize-tags whose phase 2 has core, functionality and error
tests (``groups_challenge.py``).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from rich.console import Console

from orchestrator.agents.scripted import apply_reference
from orchestrator.challenge.loader import load_challenge, validate
from orchestrator.grading.groups import Membership
from orchestrator.grading.policy import void
from orchestrator.grading.seal import Seals
from orchestrator.grading.testrun import PytestRunner, refused
from orchestrator.log.eventlog import LogContents
from orchestrator.log.records import decode_entry
from orchestrator.log.report import Report
from orchestrator.log.verdicts import TestRun
from orchestrator.render.html_report import report_html
from orchestrator.render.markdown import report_markdown
from orchestrator.render.terminal import print_summary
from orchestrator.render.timeline import describe
from orchestrator.scoring.groups import full_marks, scored
from orchestrator.scoring.report import build_report
from orchestrator.scoring.rubric import passing_share
from orchestrator.session.workspace import Workspace
from orchestrator.system.venvs import grading_environment
from tests.cli import changeup
from tests.orchestrator.groups_challenge import groups_challenge
from triggers import GroupResult, PhaseResult, TestOutcome

FILE = "phase2/test_groups.py"
#: phase 2's ids and markers as a collection reports them (``parametrize`` is a marker too)
COLLECTED = {
    "phase2": {
        f"{FILE}::test_core_dedupes": frozenset({"core"}),
        f"{FILE}::test_core_cases[raw0-want0]": frozenset({"core", "parametrize"}),
        f"{FILE}::test_core_cases[spaced]": frozenset({"core", "parametrize"}),
        f"{FILE}::test_lowercases": frozenset({"functionality"}),
        f"{FILE}::test_keeps_order": frozenset({"functionality"}),
        f"{FILE}::test_rejects_none": frozenset(),
    }
}


def outcome(name: str, result: str = "passed") -> TestOutcome:
    return TestOutcome(f"{FILE}::{name}", result)  # type: ignore[arg-type]


def test_membership_comes_from_the_collection_and_the_globs(tmp_path: Path) -> None:
    """A collected case has its own markers; a function named without its case (a missing test,
    as the listing names it) is in every group of its cases, so it still counts; a case the
    collection never listed is in no marker group, only in the globs it matches."""
    groups = Membership(load_challenge(groups_challenge(tmp_path)), COLLECTED)
    assert [g.name for g in groups.groups("phase2")] == ["core", "functionality", "error"]
    assert groups.of("phase2", f"{FILE}::test_core_cases[spaced]") == (0,)
    assert groups.of("phase2", f"{FILE}::test_core_cases") == (0,)
    assert groups.of("phase2", f"{FILE}::test_core_cases[forged]") == ()
    assert groups.of("phase2", f"{FILE}::test_rejects_none") == (2,)
    assert groups.of("phase2", f"{FILE}::test_rejects_forged[x]") == (2,)
    assert groups.groups("phase1") == ()


def test_a_phases_groups_count_its_outcomes_in_declared_order(tmp_path: Path) -> None:
    """Each declared group counts the outcomes in it; missing or failed ones count as failed
    (grading has already made a skipped hidden test failed); a test outside every group counts
    in none; a phase without groups has none."""
    groups = Membership(load_challenge(groups_challenge(tmp_path)), COLLECTED)
    tests = [
        outcome("test_core_dedupes"),
        outcome("test_core_cases", "missing"),
        outcome("test_lowercases", "failed"),
        outcome("test_keeps_order"),
        outcome("test_rejects_none"),
        TestOutcome("phase2/test_tags_dedupe.py::test_empty_list", "failed"),
    ]
    assert groups.results("phase2", tests) == (
        GroupResult("core", 1, 1),
        GroupResult("functionality", 1, 1),
        GroupResult("error", 1, 0),
    )
    assert groups.results("phase1", tests) == ()


def test_a_refused_or_void_run_fails_every_group(tmp_path: Path) -> None:
    """A refused snapshot counts each group's listed tests failed (marker groups by the session's
    membership); voiding a run keeps each group's tests, every one failed."""
    challenge = load_challenge(groups_challenge(tmp_path))
    run = refused(challenge, ["phase2"], "too big", Membership(challenge, COLLECTED))
    assert run.phases[0].groups == (
        GroupResult("core", 0, 2),  # the listing names test_core_cases once, without its cases
        GroupResult("functionality", 0, 2),
        GroupResult("error", 0, 1),
    )
    counted = PhaseResult("phase2", 3, 1, (), (GroupResult("core", 3, 0), GroupResult("error", 0, 1)))
    assert void([counted], "tampered")[0].groups == (GroupResult("core", 0, 3), GroupResult("error", 0, 1))


def test_an_invalid_marker_expression_is_a_problem_at_its_group(tmp_path: Path) -> None:
    """pytest's own expression engine checks markers: at load; marker arguments are refused too."""
    root = groups_challenge(tmp_path)
    yaml = root / "challenge.yaml"
    yaml.write_text(
        yaml.read_text()
        .replace('core: "core"', 'core: "core and"')
        .replace('{markers: "functionality and not core"}', '{markers: "functionality(level=2)"}')
    )
    problems = validate(root)
    assert [p.message for p in problems] == [
        "group 'core': not a pytest marker expression: expected not OR left parenthesis OR identifier; "
        "got end of input (column 9)",
        "group 'functionality': marker arguments (name(key=value)) cannot be matched: use marker names",
    ]
    assert all(str(p).startswith(f"{yaml}:") for p in problems)


def test_the_score_and_full_marks_follow_the_policy() -> None:
    """Policy groups are scored and must each pass; without a policy, or in a result without
    groups (an older log), every test is; a policy group the result lacks never passes."""
    result = PhaseResult(
        "phase2", 8, 2, (), (GroupResult("core", 5, 0), GroupResult("error", 0, 1), GroupResult("x", 3, 1))
    )
    assert scored(result, ["core"]) == (5, 5)
    assert full_marks(result, ["core"])
    assert scored(result, ["core", "error"]) == (5, 6)
    assert not full_marks(result, ["core", "error"])
    assert scored(result, []) == (8, 10)
    assert not full_marks(result, [])
    older = PhaseResult("phase2", 8, 2)
    assert scored(older, ["core"]) == (8, 10)
    assert not full_marks(older, ["core"])
    assert not full_marks(PhaseResult("phase2", 5, 0, (), (GroupResult("x", 5, 0),)), ["core"])
    assert not full_marks(PhaseResult("phase2", 0, 0, (), (GroupResult("core", 0, 0),)), ["core"])


def test_a_rubric_criterion_naming_a_phase_follows_its_policy() -> None:
    """``tests: [phase2]`` scores the policy groups, names the failing ones, and leaves other
    tests out; a test named by id still counts alone."""
    tests = (outcome("test_core_dedupes"), outcome("test_lowercases", "failed"))
    result = PhaseResult(
        "phase2", 1, 1, tests, (GroupResult("core", 1, 0), GroupResult("functionality", 0, 1))
    )
    assert passing_share(["phase2"], [result], {"phase2": ("core",)}) == (1.0, [])
    share, failing = passing_share(["phase2"], [result], {"phase2": ("core", "functionality")})
    assert (share, failing) == (0.5, ["phase2 group functionality: 1 of 1 not passed"])
    assert passing_share(["phase2"], [result])[0] == 0.5
    assert passing_share([f"{FILE}::test_lowercases"], [result], {"phase2": ("core",)})[0] == 0.0


def log(results: list[dict[str, Any]]) -> LogContents:
    """A finished run of both phases whose final grading gives phase 2 ``results``."""
    phase1 = {"phase": "phase1", "passed": 5, "failed": 0, "tests": []}
    records: list[dict[str, Any]] = [
        {"kind": "session.started", "files": []},
        {"kind": "phase.unlocked", "phase": "phase1", "trigger": ""},
        {"kind": "phase.unlocked", "phase": "phase2", "trigger": "revision"},
        {"kind": "session.ended", "reason": "agent_done", "detail": ""},
        {"kind": "session.graded", "request": 0, "snapshot": "s", "phases": [phase1, *results]},
        {"kind": "session.scored", "criteria": []},
    ]
    entries = [decode_entry({"seq": n, "t": float(n), **r}) for n, r in enumerate(records, 1)]
    return LogContents({"agent": "scripted:reference", "started_at": "2026-12-02T00:00:00+00:00"}, entries)


PHASE2 = {
    "phase": "phase2",
    "passed": 9,
    "failed": 2,
    "tests": [{"id": f"{FILE}::test_lowercases", "outcome": "failed", "detail": "no"}],
    "groups": [
        {"name": "core", "passed": 3, "failed": 0},
        {"name": "functionality", "passed": 1, "failed": 1},
        {"name": "error", "passed": 0, "failed": 1},
    ],
}


def rendered(report: Report, contents: LogContents) -> tuple[str, str, str]:
    out = io.StringIO()
    print_summary(report, Console(file=out, width=200))
    return out.getvalue(), report_markdown(report), report_html(report, contents.entries)


def test_reports_show_each_group_and_what_the_policy_scores(tmp_path: Path) -> None:
    """report.json lists the groups with their totals and policy; the terminal, Markdown and
    HTML reports show them, and the failing test outside the policy is said to be outside it."""
    challenge = load_challenge(groups_challenge(tmp_path))
    contents = log([PHASE2])
    report = build_report(challenge, contents)
    phase = report.phases[1]
    assert phase.groups[2].model_dump() == {
        "name": "error",
        "passed": 0,
        "failed": 1,
        "total": 1,
        "in_policy": False,
    }
    assert (phase.policy, phase.scored.model_dump(), phase.full_marks) == (
        ["core"],
        {"passed": 3, "total": 3},
        True,
    )
    assert (phase.passed, phase.total, phase.score) == (9, 11, 1.0)
    assert report.score.full_success
    terminal, markdown, page = rendered(report, contents)
    line = "core 3/3 ✓  functionality 1/2 (not in policy)  error 0/1 (not in policy)"
    assert f"phase2  9/11  {line}  — scored on core: 3/3" in terminal
    dotted = line.replace("  ", " · ")
    assert f"- phase2 9/11: {dotted} — scored on core: 3/3" in markdown
    assert f'<li data-phase="phase2">phase2 9/11: {dotted} — scored on core: 3/3</li>' in page
    assert f"{FILE}::test_lowercases (failed; outside phase2's pass policy): no" in markdown


def test_without_a_policy_every_test_is_scored_and_groups_are_only_shown(tmp_path: Path) -> None:
    """The same verdict with no ``passes:``: scored on all 11 tests, no full marks, no policy notes."""
    challenge = load_challenge(groups_challenge(tmp_path, passes=None))
    report = build_report(challenge, log([PHASE2]))
    phase = report.phases[1]
    assert (phase.score, phase.full_marks, report.score.full_success) == (0.8182, False, False)
    terminal, markdown, _ = rendered(report, log([PHASE2]))
    assert "phase2  9/11  core 3/3 ✓  functionality 1/2  error 0/1\n" in terminal
    assert "outside" not in markdown
    assert "scored on" not in markdown


def test_a_log_without_groups_reports_as_before(tmp_path: Path) -> None:
    """A log written before groups existed, read with the policy challenge: every test scores,
    and no report has a groups line."""
    challenge = load_challenge(groups_challenge(tmp_path))
    older = {k: v for k, v in PHASE2.items() if k != "groups"}
    contents = log([older])
    report = build_report(challenge, contents)
    phase = report.phases[1]
    assert (phase.groups, phase.score, phase.full_marks) == ([], 0.8182, False)
    terminal, markdown, page = rendered(report, contents)
    assert "Test groups" not in markdown
    assert "Test groups" not in page
    assert "  phase2  9/11" not in terminal


def test_the_timeline_shows_each_results_groups() -> None:
    """``changeup show`` says a test result's groups beside its phase's count."""
    record = decode_entry(
        {"seq": 1, "t": 1.0, "kind": "tests.result", "request": 1, "snapshot": "s", "phases": [PHASE2]}
    ).record
    shown = describe(record)
    assert shown is not None
    assert "phase2 9/11 (core 3/3 ✓, functionality 1/2, error 0/1)" in shown[1]


# --- real runs ---------------------------------------------------------------------------------


def graded(tmp_path: Path, root: Path, *, tamper: bool = False) -> TestRun:
    """One real run of both phases on the reference solution (its hidden files sealed first,
    and then, with ``tamper``, one of phase 2's changed)."""
    challenge = load_challenge(root)
    workspace = Workspace.create(challenge.workspace, tmp_path / "ws", tmp_path / "shadow.git")
    apply_reference(challenge, ["phase1", "phase2"], tmp_path / "ws")
    sealed = Seals.take(challenge, None).tests
    if tamper:
        changed = root / "tests" / "phase2" / "test_groups.py"
        changed.write_text(changed.read_text() + "\n# changed\n")
    runner = PytestRunner(
        challenge, workspace, tmp_path / "scratch", environment=grading_environment([]), sealed=sealed
    )

    async def run() -> TestRun:
        return await runner.run(await workspace.snapshot(), ["phase1", "phase2"])

    return anyio.run(run)


@pytest.mark.slow
def test_a_real_run_counts_each_group_from_the_collection(tmp_path: Path) -> None:
    """The reference passes every core case (parametrized ones one by one) and the error glob,
    and fails one functionality test; phase 1 declares no groups."""
    run = graded(tmp_path, groups_challenge(tmp_path))
    assert run.status == "ok", run.detail
    phase1, phase2 = run.phases
    assert phase1.groups == ()
    assert phase2.groups == (
        GroupResult("core", 3, 0),
        GroupResult("functionality", 1, 1),
        GroupResult("error", 1, 0),
    )
    assert (phase2.passed, phase2.failed) == (10, 1)


@pytest.mark.slow
def test_a_tampered_runs_groups_all_fail(tmp_path: Path) -> None:
    """A hidden file changed after the seal: the run is tampered, and every group has each of
    its tests failed."""
    run = graded(tmp_path, groups_challenge(tmp_path), tamper=True)
    assert run.status == "tampered"
    groups = run.phases[1].groups
    assert [g.name for g in groups] == ["core", "functionality", "error"]
    assert all(g.passed == 0 and g.failed > 0 for g in groups), groups


def session(tmp_path: Path, passes: str | None) -> tuple[dict[str, Any], Path]:
    """``changeup run`` of the reference on the groups challenge: its report.json and run folder."""
    out = tmp_path / "runs"
    done = changeup("run", str(groups_challenge(tmp_path, passes=passes)), "--out", str(out), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    folder = next(out.iterdir())
    return json.loads((folder / "report.json").read_text()), folder


@pytest.mark.slow
def test_a_session_passing_its_policy_has_full_marks_and_replays(tmp_path: Path) -> None:
    """With ``passes: [core]`` the reference has full marks though a functionality test fails;
    the reports show that group failing, and the log replays with every decision matching."""
    report, folder = session(tmp_path, "[core]")
    phase = report["phases"][1]
    assert (phase["full_marks"], phase["score"], report["score"]["full_success"]) == (True, 1.0, True)
    assert [(g["name"], g["passed"], g["total"]) for g in phase["groups"]] == [
        ("core", 3, 3),
        ("functionality", 1, 2),
        ("error", 1, 1),
    ]
    markdown = (folder / "report.md").read_text()
    assert "functionality 1/2 (not in policy)" in markdown
    done = changeup("replay", str(folder))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "agrees" in done.stdout


@pytest.mark.slow
def test_a_session_without_the_policy_is_short_of_full_marks(tmp_path: Path) -> None:
    """The same reference with no policy: phase 2 scores 10/11 and the run is no full success."""
    report, _ = session(tmp_path, None)
    phase = report["phases"][1]
    assert (phase["full_marks"], phase["score"], report["score"]["full_success"]) == (False, 0.9091, False)

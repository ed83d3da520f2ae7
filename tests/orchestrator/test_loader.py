"""Loading and validating challenge folders."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from orchestrator import ChallengeError, load_challenge, validate
from orchestrator.challenge.sourcemap import SourceError, load_yaml
from tests.cli import REPO, changeup
from triggers import Engine, PhaseResult, SessionStarted, TestsResult, TriggerFired, render

BROKEN = REPO / "tests" / "fixtures" / "broken"

SEED_YAML = """\
challenge:
  id: evolving-pivot-001
  initial_briefing: |
    [Phase 1 requirements]

  triggers:
    - condition: phase1_tests_pass
      message: |
        [Pivot message]
      new_tests: [Phase 2 test suite]

    - condition: time_elapsed > 30min AND phase1_tests_not_pass
      message: |
        "Phase 1 deadline passed. Moving to Phase 2 anyway.
         Phase 1 failures will count against your score."
      new_tests: [Phase 2 test suite]
"""


def make_challenge(root: Path, text: str = SEED_YAML) -> Path:
    """A challenge folder with ``text`` as its YAML and two phases of tests."""
    (root / "workspace").mkdir(parents=True)
    (root / "workspace" / "app.py").write_text("VALUE = 1\n")
    for phase, name in (("phase1", "one"), ("phase2", "two")):
        (root / "tests" / phase).mkdir(parents=True)
        (root / "tests" / phase / f"test_{name}.py").write_text(f"def test_{name}():\n    assert True\n")
    (root / "challenge.yaml").write_text(text)
    return root


def test_seed_yaml_loads_as_written(tmp_path: Path) -> None:
    """The design's seed-shaped YAML loads with phases inferred from new_tests."""
    challenge = load_challenge(make_challenge(tmp_path))
    assert challenge.id == "evolving-pivot-001"
    assert [p.id for p in challenge.phases] == ["phase1", "phase2"]
    assert [p.tests for p in challenge.phases] == [
        tmp_path / "tests/phase1",
        tmp_path / "tests/phase2",
    ]
    assert [t.id for t in challenge.spec.triggers] == ["trigger1", "trigger2"]
    assert [t.unlocks for t in challenge.spec.triggers] == ["phase2", "phase2"]
    assert challenge.spec.briefing == "[Phase 1 requirements]\n"
    assert challenge.spec.time_limit == 3600.0
    assert len(challenge.digest) == 64


def test_seed_challenge_runs_in_the_engine(tmp_path: Path) -> None:
    """The loaded spec drives the engine: the pivot fires when phase 1 passes."""
    engine = Engine(load_challenge(make_challenge(tmp_path)).spec)
    engine.step(SessionStarted(0.0))
    actions = engine.step(TestsResult(3.0, 1, "tree", (PhaseResult("phase1", 1, 0),)))
    assert [a.trigger for a in actions if isinstance(a, TriggerFired)] == ["trigger1"]


def test_yaml_file_path_is_accepted(tmp_path: Path) -> None:
    """validate takes the challenge.yaml itself as well as its folder."""
    make_challenge(tmp_path)
    assert validate(tmp_path / "challenge.yaml") == []


def test_richer_schema(tmp_path: Path) -> None:
    """Declared phases, weights, supersedes, at/after, for, delivery and limits all load."""
    text = """\
challenge:
  id: rich
  pattern: revision
  initial_briefing: Build.
  phases:
    - {id: phase1, weight: 1, title: first}
    - {id: phase2, weight: 3, tests: tests/phase2, supersedes: [phase1/test_one.py::test_one]}
  triggers:
    - {id: pivot, condition: phase1_tests_pass, for: 30s, unlocks: phase2, message: Go,
       kind: revision}
    - {id: reminder, after: pivot, at: 10m, message: Remember, delivery: interrupt, once: true}
  end: phase2_tests_pass
  limits: {session: 2h, test_run: 90s, agent_turn: 20min}
  allowed_paths: ["app.py"]
"""
    challenge = load_challenge(make_challenge(tmp_path, text))
    assert [p.weight for p in challenge.phases] == [1.0, 3.0]
    assert challenge.phases[1].supersedes == ("phase1/test_one.py::test_one",)
    pivot, reminder = challenge.spec.triggers
    assert pivot.hold == 30.0
    assert pivot.message_kind == "revision"
    assert reminder.interrupt
    assert render(reminder.condition) == "always and time_elapsed >= 10min and fired(pivot)"
    assert challenge.spec.time_limit == 7200.0
    assert challenge.spec.end is not None


@pytest.mark.parametrize("folder", ["tests/phase2", "./tests/phase2/"])
def test_new_tests_may_name_a_phase_by_its_test_folder(folder: str, tmp_path: Path) -> None:
    """A seed trigger's new_tests may name the suite by its folder, not only by its phase."""
    challenge = load_challenge(make_challenge(tmp_path, SEED_YAML.replace("Phase 2 test suite", folder)))
    assert [p.id for p in challenge.phases] == ["phase1", "phase2"]
    assert [t.unlocks for t in challenge.spec.triggers] == ["phase2", "phase2"]


def test_new_tests_may_name_a_declared_phase_by_its_own_folder(tmp_path: Path) -> None:
    """A phase with its own tests: folder is named by that folder."""
    text = SEED_YAML.replace(
        "  triggers:",
        "  phases:\n    - id: phase1\n    - id: second\n      tests: suites/second\n  triggers:",
    ).replace("Phase 2 test suite", "suites/second")
    root = make_challenge(tmp_path, text)
    (root / "suites").mkdir()
    (root / "tests" / "phase2").rename(root / "suites" / "second")
    challenge = load_challenge(root)
    assert [t.unlocks for t in challenge.spec.triggers] == ["second", "second"]


def test_a_duration_is_not_true_or_false(tmp_path: Path) -> None:
    """``for: true`` is refused, not read as one second."""
    text = SEED_YAML.replace(
        "    - condition: phase1_tests_pass\n", "    - condition: phase1_tests_pass\n      for: true\n"
    )
    [problem] = validate(make_challenge(tmp_path, text))
    assert problem.message == (
        "challenge.triggers[0].for: expected a duration such as 30s, 5m, 30min or 2h, got True"
    )


def test_command_phase_needs_no_pytest_folder(tmp_path: Path) -> None:
    """A phase run by a command that writes JUnit XML needs no test_*.py files."""
    text = SEED_YAML.replace(
        "  triggers:",
        "  phases:\n    - id: phase1\n    - id: phase2\n      command: ./run-tests.sh\n  triggers:",
    )
    root = make_challenge(tmp_path, text)
    shutil.rmtree(root / "tests" / "phase2")
    assert validate(root) == []


GROUPS_YAML = SEED_YAML.replace(
    "  triggers:",
    """  phases:
    - id: phase1
      groups:
        core: "core and not slow"
        error: {tests: ["phase1/test_one.py::test_one[*]"]}
      passes: [core]
    - id: phase2
      command: ./verify.sh
      verifier: {workspace: /app}
  triggers:""",
)


def test_groups_policies_and_verifier_load(tmp_path: Path) -> None:
    """A phase's groups (marker shorthand or id globs), its pass policy and a verifier's mounts
    reach the loaded challenge, and the engine's spec knows the groups and the policy."""
    challenge = load_challenge(make_challenge(tmp_path, GROUPS_YAML))
    phase1, phase2 = challenge.phases
    assert [(g.name, g.markers, g.tests) for g in phase1.groups] == [
        ("core", "core and not slow", ()),
        ("error", None, ("phase1/test_one.py::test_one[*]",)),
    ]
    assert phase1.passes == ("core",)
    assert phase2.verifier is not None
    assert (phase2.verifier.workspace, phase2.verifier.tests, phase2.verifier.results) == (
        "/app",
        "/tests",
        "/logs/verifier",
    )
    assert challenge.spec.groups == {"phase1": ("core", "error")}
    assert challenge.spec.policies == {"phase1": ("core",)}


def test_group_policy_and_verifier_problems_name_their_place(tmp_path: Path) -> None:
    """An empty group, a policy naming an unknown group, a verifier without a command and a
    relative mount are each a problem at its key."""
    text = (
        GROUPS_YAML.replace('error: {tests: ["phase1/test_one.py::test_one[*]"]}', "error: {}")
        .replace("passes: [core]", "passes: [cor]")
        .replace("      command: ./verify.sh\n", "")
        .replace("{workspace: /app}", "{workspace: app}")
    )
    messages = [p.message for p in validate(make_challenge(tmp_path, text))]
    assert messages == [
        "group 'error' needs exactly one of markers: or tests:",
        "unknown group 'cor'; did you mean 'core'? (groups of phase1: core, error)",
        "a verifier: runs the phase's command:, and it has none",
        "workspace: must be an absolute path inside the sandbox (e.g. /app), got 'app'",
    ]


ISOLATION_YAML = SEED_YAML.replace(
    "  triggers:",
    """  testing:
    isolation: process
  phases:
    - id: phase1
    - id: phase2
      testing:
        isolation: in-process
  triggers:""",
)


def test_isolation_is_the_challenges_unless_a_phase_says_otherwise(tmp_path: Path) -> None:
    """``testing: isolation`` reaches every phase; a phase's own wins; the default is in-process."""
    challenge = load_challenge(make_challenge(tmp_path / "a", ISOLATION_YAML))
    assert [p.isolation for p in challenge.phases] == ["process", "in-process"]
    assert [p.isolation for p in load_challenge(make_challenge(tmp_path / "b")).phases] == ["in-process"] * 2


def test_an_unknown_isolation_or_one_on_a_command_phase_is_a_problem_at_its_place(tmp_path: Path) -> None:
    """A misspelt value names its place and the valid ones; a command phase takes no isolation."""
    misspelt = ISOLATION_YAML.replace("    isolation: process", "    isolation: proces")
    (problem,) = validate(make_challenge(tmp_path / "a", misspelt))
    assert (problem.line, problem.column) == (7, 16)
    assert "expected 'in-process', 'process' or 'subprocess', got 'proces'" in problem.message
    on_a_command = ISOLATION_YAML.replace(
        "    - id: phase2\n", "    - id: phase2\n      command: ./check.sh\n"
    )
    (problem,) = validate(make_challenge(tmp_path / "b", on_a_command))
    assert (problem.line, problem.column) == (13, 20)
    assert "a command: phase runs no pytest" in problem.message


def test_load_raises_with_every_problem(tmp_path: Path) -> None:
    """load_challenge raises ChallengeError listing all problems."""
    root = make_challenge(tmp_path, SEED_YAML.replace("phase1_tests_pass", "phase7_tests_pass", 1))
    with pytest.raises(ChallengeError) as caught:
        load_challenge(root)
    assert "unknown phase 'phase7'" in str(caught.value)


def test_missing_challenge_is_a_problem(tmp_path: Path) -> None:
    """A path with no challenge gives one problem, not an exception."""
    [problem] = validate(tmp_path / "nothing-here")
    assert str(problem) == f"{tmp_path / 'nothing-here'}: no such challenge folder"
    [problem] = validate(tmp_path)
    assert str(problem).startswith(f"{tmp_path}: no challenge.yaml here")


def test_not_utf8(tmp_path: Path) -> None:
    """A binary challenge.yaml is reported, not a crash."""
    make_challenge(tmp_path)
    (tmp_path / "challenge.yaml").write_bytes(b"\xff\xfe\x00challenge")
    assert validate(tmp_path)[0].message == "not UTF-8 text"


def test_empty_file(tmp_path: Path) -> None:
    """An empty challenge.yaml says the challenge key is missing."""
    make_challenge(tmp_path, "")
    assert validate(tmp_path)[0].message == (
        "expected a mapping with a top-level 'challenge:' key; the file is empty"
    )


def test_non_text_key(tmp_path: Path) -> None:
    """A key YAML reads as a boolean is reported with advice."""
    make_challenge(tmp_path, "challenge:\n  on: 1\n")
    assert "quote it" in validate(tmp_path)[0].message


def test_condition_column_in_block_scalar(tmp_path: Path) -> None:
    """An error inside a block-scalar condition points into the block."""
    text = SEED_YAML.replace(
        "    - condition: phase1_tests_pass\n",
        "    - condition: |\n        always and\n          nonsense\n",
    )
    problems = validate(make_challenge(tmp_path, text))
    assert [(p.line, p.column) for p in problems] == [(9, 11)]


def test_condition_column_in_quoted_scalar(tmp_path: Path) -> None:
    """A quoted condition's column accounts for the quote."""
    text = SEED_YAML.replace("condition: phase1_tests_pass", 'condition: "always and nonsense"')
    [problem] = validate(make_challenge(tmp_path, text))
    assert (problem.line, problem.column) == (7, 30)


@pytest.mark.parametrize("fixture", sorted(p.name for p in BROKEN.iterdir()))
def test_broken_fixture_gives_its_precise_message(fixture: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each deliberately broken challenge gives exactly its expected file:line:column messages."""
    monkeypatch.chdir(REPO)
    folder = BROKEN.relative_to(REPO) / fixture
    expected = (folder / "expected.txt").read_text().splitlines()
    assert [str(p) for p in validate(folder)] == expected


def test_validate_cli_on_all_broken_fixtures_never_tracebacks() -> None:
    """The real CLI prints every fixture's messages, exits 1 and never shows a traceback."""
    folders = sorted(str(p.relative_to(REPO)) for p in BROKEN.iterdir())
    assert len(folders) >= 20
    done = changeup("validate", *folders)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr + done.stdout
    expected = "".join((BROKEN / Path(f).name / "expected.txt").read_text() for f in folders)
    assert done.stdout == expected
    assert f"{len(folders)} of {len(folders)} challenges have problems" in done.stderr


def test_yaml_positions_and_duplicates() -> None:
    """The source map records key and value positions and refuses duplicate keys."""
    data, source = load_yaml("a:\n  b: [1, 2]\n", "x.yaml")
    assert data == {"a": {"b": [1, 2]}}
    assert (source.keys[("a", "b")].line, source.keys[("a", "b")].column) == (2, 3)
    assert source.values[("a", "b", 1)].column == 10
    with pytest.raises(SourceError, match="duplicate key 'a'"):
        load_yaml("a: 1\na: 2\n", "x.yaml")


YAML_SCALARS = st.one_of(st.integers(), st.booleans(), st.text(max_size=10), st.none())
YAML_DATA = st.recursive(
    YAML_SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.text(min_size=1, max_size=5), children, max_size=3),
    ),
    max_leaves=10,
)


@settings(max_examples=100, deadline=None)
@given(YAML_DATA)
def test_yaml_loading_matches_pyyaml(data: object) -> None:
    """Our position-keeping loader builds the same data as PyYAML's safe_load."""
    text = yaml.safe_dump({"root": data})
    assert load_yaml(text, "x.yaml")[0] == yaml.safe_load(text)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=200))
@example("=")  # YAML's value type: a tag the safe loader has no value for
@example("challenge: !!python/object:os.system x\n")
def test_validate_never_raises_on_arbitrary_text(text: str) -> None:
    """Whatever the file holds, validation answers with problems, never an exception."""
    with tempfile.TemporaryDirectory() as folder:
        root = make_challenge(Path(folder) / "c", text)
        for problem in validate(root):
            assert problem.line >= 1
            assert problem.column >= 1


def test_schema_is_json_schema_of_the_format() -> None:
    """``changeup schema`` prints a JSON Schema naming the challenge's keys."""
    done = changeup("schema")
    assert done.returncode == 0, done.stderr
    schema = json.loads(done.stdout)
    assert schema["title"] == "changeup challenge"
    trigger = schema["$defs"]["TriggerModel"]["properties"]
    assert {"condition", "for", "unlocks", "new_tests", "delivery"} <= set(trigger)
    assert schema["$defs"]["TriggerModel"]["additionalProperties"] is False

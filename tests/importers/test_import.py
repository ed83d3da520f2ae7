"""``changeup import``: each fixture format becomes a challenge folder that validates, through the
real CLI, and a source that cannot be read is refused with the file and what is wrong with it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli import REPO, changeup

FIXTURES = REPO / "tests" / "fixtures" / "import"
SOURCES = {
    "slopcode": FIXTURES / "slopcode" / "wordstat",
    "saotri": FIXTURES / "saotri" / "task_00_tidy_words",
    "harbor": FIXTURES / "harbor" / "greeter",
}


def imported(format: str, dest: Path, source: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``changeup import FORMAT SOURCE DEST``, as a user runs it."""
    return changeup("import", format, str(source or SOURCES[format]), str(dest))


def challenge_of(dest: Path) -> dict[str, Any]:
    """The ``challenge:`` mapping the import wrote."""
    data: dict[str, Any] = yaml.safe_load((dest / "challenge.yaml").read_text())["challenge"]
    return data


def phase(challenge: dict[str, Any], phase_id: str) -> dict[str, Any]:
    """One phase of a written challenge."""
    found: dict[str, Any] = next(p for p in challenge["phases"] if p["id"] == phase_id)
    return found


@pytest.fixture(scope="module")
def imports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """Each fixture imported once: the folder and the printed report (tests only read them)."""
    made = {}
    for format in SOURCES:
        dest = tmp_path_factory.mktemp(format) / "challenge"
        result = imported(format, dest)
        assert result.returncode == 0, result.stderr
        made[format] = (dest, result.stdout)
    return made


@pytest.mark.parametrize("format", sorted(SOURCES))
def test_each_fixture_imports_and_validates(imports: dict[str, tuple[Path, str]], format: str) -> None:
    """The folder validates as written, and the report is both printed and kept as IMPORT.md."""
    dest, stdout = imports[format]
    result = subprocess.CompletedProcess[str]([], 0, stdout, "")
    assert "## What maps to what" in result.stdout
    assert "## Not carried over" in result.stdout
    assert (dest / "IMPORT.md").read_text() == result.stdout
    checked = changeup("validate", str(dest))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.startswith(f"ok {dest}: ")
    assert "3 phases" in checked.stdout


def test_slopcode_maps_checkpoints_groups_options_and_support(imports: dict[str, tuple[Path, str]]) -> None:
    """Checkpoints become phases with the spec as message, grouped tests passing on core, the
    required pytest options, a support folder with the conftest, helpers and data, and the error
    tests (parametrized ones included) as what a starter may pass."""
    dest, _ = imports["slopcode"]
    challenge = challenge_of(dest)
    assert [p["id"] for p in challenge["phases"]] == ["checkpoint_1", "checkpoint_2", "checkpoint_3"]
    assert challenge["testing"] == {
        "support": "tests/support",
        "ini": "tests/pytest.ini",
        "args": ["--entrypoint", "python wordstat.py", "--checkpoint", "{current}"],
        "timeout": 20,
        "isolation": "subprocess",
    }
    one, two, three = (phase(challenge, f"checkpoint_{n}") for n in (1, 2, 3))
    assert "testing" not in one
    assert three["testing"] == {"timeout": 30}
    assert not any("retire" in p for p in (one, two, three))  # every checkpoint includes prior tests
    assert sorted(one["groups"]) == ["core", "error"]
    assert sorted(two["groups"]) == ["core", "error", "functionality"]
    assert sorted(three["groups"]) == ["core", "functionality", "regression"]
    assert three["groups"]["functionality"] == "not error and not regression and (functionality or slow)"
    assert all(p["passes"] == ["core"] for p in (one, two, three))
    assert challenge["calibration"]["starter_may_pass"] == [
        "checkpoint_1/test_checkpoint_1.py::test_usage_errors_exit_nonzero",
        "checkpoint_1/test_checkpoint_1.py::test_missing_file_is_reported",
        "checkpoint_2/test_checkpoint_2.py::test_bad_counts_exit_2",
    ]
    assert challenge["initial_briefing"].endswith((SOURCES["slopcode"] / "checkpoint_1.md").read_text())
    messages = {t["id"]: t for t in challenge["triggers"]}
    assert messages["checkpoint_1_passed"]["condition"] == "turns >= 1 and tests_pass(checkpoint_1)"
    assert messages["checkpoint_2_moving_on"]["condition"] == "turns >= 2 and tests_not_pass(checkpoint_2)"
    assert messages["checkpoint_2_moving_on"]["kind"] == "deadline"
    assert messages["checkpoint_2_passed"]["message"] == (SOURCES["slopcode"] / "checkpoint_3.md").read_text()
    support = {
        p.relative_to(dest / "tests" / "support").as_posix() for p in (dest / "tests" / "support").rglob("*")
    }
    assert {"conftest.py", "wordstat_cases.py", "data/animals.txt"} <= support
    assert not any(name.startswith("test_checkpoint") for name in support)
    assert (dest / "tests" / "checkpoint_2" / "test_checkpoint_2.py").is_file()
    # test_checkpoint_2.py finds its data from its own path: the data sits beside it too.
    assert (dest / "tests" / "checkpoint_2" / "data" / "animals.txt").is_file()
    assert not (dest / "tests" / "checkpoint_1" / "data").exists()
    assert not (dest / "tests" / "checkpoint_2" / "conftest.py").exists()
    # The oracle's snapshots: checkpoint 2 renamed counting.py, so its folder deletes it first.
    assert (dest / "solutions" / "reference" / "checkpoint_2" / ".delete").read_text() == "counting.py\n"
    assert not (dest / "solutions" / "reference" / "checkpoint_3" / ".delete").exists()
    assert "markers =" in (dest / "tests" / "pytest.ini").read_text()


def test_saotri_generated_tests_check_the_rules_on_the_cases_each_phase_adds(
    imports: dict[str, tuple[Path, str]], tmp_path: Path
) -> None:
    """The generated tests run the task's own evaluator: a solution right up to phase 1 passes
    phases 0 and 1 and fails phase 2, with the case ids the phase adds; a dropped rule is superseded."""
    dest = tmp_path / "tidy"
    shutil.copytree(imports["saotri"][0], dest)
    assert "calibration needs one" in imports["saotri"][1]
    challenge = challenge_of(dest)
    assert phase(challenge, "phase_2")["supersedes"] == ["phase_1/test_phase_1.py::test_no_mutation"]
    assert challenge["triggers"][0]["condition"] == "tests_pass(phase_0)"
    assert "no_mutation: The input list is not changed" in challenge["triggers"][0]["message"]
    (dest / "workspace" / "solution.py").write_text(
        "def tidy(words):\n    return [w.strip().lower() for w in words]\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{dest / 'tests' / 'support'}:{dest / 'workspace'}"}

    def run(folder: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "-c", os.devnull, folder],
            cwd=dest / "tests",
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    early = run("phase_0")
    assert early.returncode == 0, early.stdout
    assert "test_phase_0.py::test_correct_output[c000-p0-lower_case]" in early.stdout
    middle = run("phase_1")
    assert middle.returncode == 0, middle.stdout
    assert "test_correct_output[c002-p1-whitespace]" in middle.stdout
    assert "test_correct_output[c000-p0-lower_case]" not in middle.stdout  # phase 0 tested it already
    assert "test_no_mutation[c000-p0-lower_case]" in middle.stdout  # a rule new here: every case so far
    late = run("phase_2")
    assert late.returncode == 1
    assert "FAILED phase_2/test_phase_2.py::test_correct_output[c004-p2-empty_words]" in late.stdout
    assert "rule correct_output fails (scope: empty_words)" in late.stdout


def test_harbor_steps_become_command_phases_with_their_verifiers(
    imports: dict[str, tuple[Path, str]],
) -> None:
    """Each step runs its test.sh under verifier mounts, starting in the image's WORKDIR: the step's
    own test.sh over the task's, the task's as the fallback, the task's helpers beside either;
    min_reward ends the session; the tools the verifiers run are declared (a helper's function is
    no tool)."""
    dest, stdout = imports["harbor"]
    challenge = challenge_of(dest)
    assert [p["id"] for p in challenge["phases"]] == ["step_01_greet", "step_02_name", "step_03_shout"]
    for step in challenge["phases"]:
        assert step["command"] == "bash /tests/test.sh"
        assert step["verifier"] == {"workdir": "/app"}
    assert challenge["testing"] == {"tools": ["bash", "mkdir"]}
    assert "- mkdir → testing.tools (found in tests/lib.sh)" in stdout
    source = SOURCES["harbor"]
    tests = dest / "tests"
    assert (tests / "step_01_greet" / "test.sh").read_text() == (
        source / "steps/01-greet/tests/test.sh"
    ).read_text()
    assert (tests / "step_03_shout" / "test.sh").read_text() == (source / "tests/test.sh").read_text()
    assert (tests / "step_03_shout" / "check.py").is_file()
    assert all((tests / p["id"] / "lib.sh").is_file() for p in challenge["phases"])
    assert challenge["initial_briefing"] == (source / "steps/01-greet/instruction.md").read_text()
    assert challenge["end"] == "(turns >= 1 and tests_not_pass(step_01_greet))"
    assert "step_01_greet_moving_on" not in {t["id"] for t in challenge["triggers"]}
    assert challenge["limits"] == {"test_run": 60.0, "agent_turn": 600.0}
    assert "FROM python:3.12-slim" in stdout
    assert "steps/01-greet/solution/: a script (solve.sh)" in stdout


def test_a_non_empty_destination_is_refused_unless_forced(tmp_path: Path) -> None:
    """An existing folder holding files is kept as it is; --force replaces it."""
    dest = tmp_path / "taken"
    dest.mkdir()
    (dest / "mine.txt").write_text("keep me")
    refused = imported("saotri", dest)
    assert refused.returncode == 1
    assert f"{dest}: exists and is not empty (--force replaces it)" in refused.stderr
    assert sorted(p.name for p in dest.iterdir()) == ["mine.txt"]
    forced = changeup("import", "saotri", str(SOURCES["saotri"]), str(dest), "--force")
    assert forced.returncode == 0, forced.stderr
    assert not (dest / "mine.txt").exists()
    assert (dest / "challenge.yaml").is_file()


def broken_copy(tmp_path: Path, format: str) -> Path:
    """A copy of a fixture to break."""
    source = tmp_path / "source"
    shutil.copytree(SOURCES[format], source)
    return source


def test_a_missing_checkpoint_test_file_is_named(tmp_path: Path) -> None:
    """A checkpoint without its test file: the file is named, and nothing is written."""
    source = broken_copy(tmp_path, "slopcode")
    (source / "tests" / "test_checkpoint_2.py").unlink()
    result = imported("slopcode", tmp_path / "out", source)
    assert result.returncode == 1
    assert (
        f"{source / 'tests' / 'test_checkpoint_2.py'}: missing: checkpoint checkpoint_2's tests"
        in result.stderr
    )
    assert not (tmp_path / "out").exists()


def test_bad_yaml_says_where(tmp_path: Path) -> None:
    """A config.yaml that is not YAML: the file, the line and column, and the parser's words."""
    source = broken_copy(tmp_path, "slopcode")
    (source / "config.yaml").write_text("name: wordstat\ncheckpoints: [unclosed\n")
    result = imported("slopcode", tmp_path / "out", source)
    assert result.returncode == 1
    assert f"{source / 'config.yaml'}: not valid YAML: line 3, column 1:" in result.stderr


def test_a_missing_step_folder_is_named(tmp_path: Path) -> None:
    """A [[steps]] entry whose folder is missing names the folder and the entry."""
    source = broken_copy(tmp_path, "harbor")
    shutil.rmtree(source / "steps" / "02-name")
    result = imported("harbor", tmp_path / "out", source)
    assert result.returncode == 1
    assert (
        f"{source / 'steps' / '02-name'}: missing: the folder of step '02-name' (steps[1] of task.toml)"
        in (result.stderr)
    )


def test_bad_toml_says_where(tmp_path: Path) -> None:
    """A task.toml that is not TOML: the file and the parser's words, with the line."""
    source = broken_copy(tmp_path, "harbor")
    (source / "task.toml").write_text('[task]\nname = "x\n')
    result = imported("harbor", tmp_path / "out", source)
    assert result.returncode == 1
    assert f"{source / 'task.toml'}: not valid TOML: " in result.stderr
    assert "line 2" in result.stderr


def test_a_rule_without_a_check_is_named(tmp_path: Path) -> None:
    """A SaotriBench rule the evaluator has no check_<rule> for is refused, naming both."""
    source = broken_copy(tmp_path, "saotri")
    evaluator = source / "evaluator.py"
    evaluator.write_text(evaluator.read_text().replace("def check_no_mutation", "def check_unchanged"))
    result = imported("saotri", tmp_path / "out", source)
    assert result.returncode == 1
    assert (
        f"{evaluator}: Evaluator has no check_no_mutation (phase 1 names rule no_mutation)" in result.stderr
    )


def test_a_source_that_is_not_a_folder_is_refused(tmp_path: Path) -> None:
    """SOURCE must be a task folder."""
    result = imported("harbor", tmp_path / "out", tmp_path / "nowhere")
    assert result.returncode == 1
    assert f"{tmp_path / 'nowhere'}: no such task folder" in result.stderr


def test_help_names_every_format_and_what_it_reads() -> None:
    """``changeup import --help`` says which formats there are and what a SOURCE holds."""
    result = changeup("import", "--help")
    assert result.returncode == 0
    for format, holds in [("slopcode", "config.yaml"), ("saotri", "task.yaml"), ("harbor", "task.toml")]:
        assert format in result.stdout
        assert holds in result.stdout
    assert "IMPORT.md" in result.stdout

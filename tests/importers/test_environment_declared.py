"""What an import declares of the environment and follows of the source: the tools and data its
files use, the solution's pins, the Python it needs, where the tests cross a process boundary,
the specs as the benchmark shows them (issue 26)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import yaml

from orchestrator.challenge.isolation import process_boundary
from orchestrator.challenge.loader import load_challenge
from orchestrator.importers import import_task
from orchestrator.importers.environment import command_words, crates, shell_utilities
from orchestrator.importers.harbor import draft_harbor
from orchestrator.importers.slopcode import draft_slopcode
from tests.cli import REPO, changeup
from tests.importers.test_import import FIXTURES

LEDGER = FIXTURES / "slopcode" / "ledger"

SHELLING_CONFTEST = '''
import shutil
import subprocess


@pytest.fixture(scope="session")
def repository(tmp_path_factory):
    """A git repository the program reads, made by the tests."""
    folder = tmp_path_factory.mktemp("repo")
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    assert shutil.which("node") is not None
    subprocess.run(["no-such-tool-on-any-machine", "--version"], check=False)
    return folder
'''
SHELLING_TEST = """

def test_runs_a_pipeline(ledger):
    assert ledger("run", "cat whole.txt | sort -n | head -1").returncode == 0
"""
RUNNING_SOLUTION = """
import subprocess
import zoneinfo

UTC = zoneinfo.ZoneInfo("UTC")


def run(command):
    return subprocess.run(command, shell=True, capture_output=True, text=True)
"""


def ledger_copy(tmp_path: Path) -> Path:
    """A copy of the ledger problem to vary."""
    return Path(shutil.copytree(LEDGER, tmp_path / "ledger"))


def test_tools_and_data_are_declared_from_what_the_files_run_and_read(tmp_path: Path) -> None:
    """A conftest running git, asking for node and running a tool no machine has; a solution
    running shell text the tests give it and reading time zones: testing.tools names the
    programs and the utilities that text runs, testing.data zoneinfo, and the report says where
    each was found and which tool this machine lacks."""
    source = ledger_copy(tmp_path)
    conftest = source / "tests" / "conftest.py"
    conftest.write_text(conftest.read_text() + SHELLING_CONFTEST)
    test = source / "tests" / "test_checkpoint_2.py"
    test.write_text(test.read_text() + SHELLING_TEST)
    program = source / "solutions" / "checkpoint_2" / "ledger.py"
    program.write_text(program.read_text() + RUNNING_SOLUTION)
    draft = draft_slopcode(source)
    testing = draft.challenge["testing"]
    assert testing["tools"] == ["cat", "git", "head", "no-such-tool-on-any-machine", "node", "sh", "sort"]
    assert testing["data"] == ["zoneinfo"]
    assert any(line.startswith("git → testing.tools (found in tests/conftest.py:") for line in draft.mapped)
    assert any(
        line.startswith(
            "zoneinfo → testing.data (found in solutions/checkpoint_2/ledger.py (imports zoneinfo)"
        )
        for line in draft.mapped
    )
    missing = "tool no-such-tool-on-any-machine: not on this machine's PATH; install it before running"
    assert f"{missing} this challenge" in draft.dropped


def test_a_problem_that_runs_nothing_declares_nothing(tmp_path: Path) -> None:
    """The ledger as it is runs no program but Python and reads no system data."""
    testing = draft_slopcode(LEDGER).challenge["testing"]
    assert "tools" not in testing
    assert "data" not in testing


def test_a_solutions_pin_replaces_the_tests_unpinned_name(tmp_path: Path) -> None:
    """test_dependencies name pyarrow, the solution pins pyarrow==16.1.0: the pin is kept, in its
    place; a package the tests pin themselves keeps their pin."""
    source = ledger_copy(tmp_path)
    config = yaml.safe_load((source / "config.yaml").read_text())
    config["test_dependencies"] = ["pyarrow", "pyyaml>=6"]
    (source / "config.yaml").write_text(yaml.safe_dump(config))
    (source / "solutions" / "checkpoint_2" / "requirements.txt").write_text(
        "pyarrow==16.1.0\npyyaml==6.0.1\n"
    )
    draft = draft_slopcode(source)
    assert draft.challenge["requirements"] == ["pyarrow==16.1.0", "pyyaml>=6"]
    assert (
        "solutions/checkpoint_2/requirements.txt: pyarrow==16.1.0 → requirements, in place of the tests' "
        "unpinned pyarrow" in draft.mapped
    )


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="an f-string that nests its quotes parses from 3.12")
def test_code_this_python_cannot_parse_requires_the_benchmarks_python(tmp_path: Path) -> None:
    """A solution written for Python 3.12 (a nested f-string) does not parse here: the import
    requires the benchmark's Python, naming the file and line."""
    source = ledger_copy(tmp_path)
    program = source / "solutions" / "checkpoint_3" / "ledger.py"
    program.write_text(program.read_text() + '\nQUOTED = f\'{"\'".join(["a", "b"])}\'\n')
    draft = draft_slopcode(source)
    assert draft.challenge["testing"]["requires_python"] == ">=3.12"
    assert any(line.startswith("solutions/checkpoint_3/ledger.py:21 does not parse") for line in draft.mapped)


def test_a_challenge_needing_another_python_is_refused_saying_which(tmp_path: Path) -> None:
    """testing.requires_python that this Python does not meet: validate warns, run refuses (exit 2)
    before making anything, and calibration fails every check, each saying what is needed."""
    dest = tmp_path / "ledger"
    import_task("slopcode", LEDGER, dest)
    yaml_file = dest / "challenge.yaml"
    yaml_file.write_text(
        yaml_file.read_text().replace(
            "    isolation: subprocess\n", ("    isolation: subprocess\n    requires_python: '>=3.99'\n")
        )
    )
    needs = "ledger needs Python >=3.99 (testing.requires_python): no Python >=3.99 on this machine"
    checked = changeup("validate", str(dest))
    assert checked.returncode == 0
    assert f"warning: {needs}" in checked.stdout + checked.stderr
    ran = changeup("run", str(dest), "--agent", "scripted", "--out", str(tmp_path / "runs"))
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert needs in ran.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    calibrated = changeup("calibrate", str(dest), "--trials", "0", "--out", str(tmp_path / "cal"))
    assert calibrated.returncode == 1
    assert needs in calibrated.stdout


def test_include_prior_tests_again_after_leaving_them_out_is_reported(tmp_path: Path) -> None:
    """A checkpoint that includes prior tests after one that left them out cannot bring retired
    phases back: the report says so."""
    source = ledger_copy(tmp_path)
    config = yaml.safe_load((source / "config.yaml").read_text())
    config["checkpoints"]["checkpoint_2"]["include_prior_tests"] = False
    config["checkpoints"]["checkpoint_3"]["include_prior_tests"] = True
    (source / "config.yaml").write_text(yaml.safe_dump(config))
    draft = draft_slopcode(source)
    assert draft.challenge["phases"][0]["retire"] == "on-next-unlock"
    assert "retire" not in draft.challenge["phases"][1]
    assert any(
        line.startswith("checkpoint_3 includes prior tests again after checkpoint_2")
        for line in draft.dropped
    )


def test_specs_read_as_the_benchmark_shows_them(tmp_path: Path) -> None:
    """The entry point's placeholders are filled and the canary comment at a spec's head is left out."""
    source = ledger_copy(tmp_path)
    spec = source / "checkpoint_1.md"
    spec.write_text("<!-- canary\nGUID 1234 -->\n" + spec.read_text())
    briefing = draft_slopcode(source).challenge["initial_briefing"]
    assert "Write `ledger.py`, a command line tool." in briefing
    assert "`python ledger.py total FILE`" in briefing
    assert "%%%" not in briefing
    assert "canary" not in briefing


def test_calibration_plans_impostors_only_where_the_tests_import_the_workspace(tmp_path: Path) -> None:
    """Tests that import the workspace (normalize-tags) may meet a double; a SlopCodeBench problem
    whose isolation is left undeclared is detected as reaching the program only as a child
    process; a conftest that imports dynamically makes the detection give up."""
    assert process_boundary(load_challenge(REPO / "challenges" / "normalize-tags")) == ""
    dest = tmp_path / "ledger"
    import_task("slopcode", LEDGER, dest)
    yaml_file = dest / "challenge.yaml"
    yaml_file.write_text(yaml_file.read_text().replace("    isolation: subprocess\n", ""))
    assert process_boundary(load_challenge(dest)).startswith(
        "detected: no hidden test or support module imports"
    )
    conftest = dest / "tests" / "support" / "conftest.py"
    conftest.write_text(conftest.read_text() + "\nimport importlib\n")
    assert process_boundary(load_challenge(dest)) == ""


DOCKERFILE = """\
FROM python:3.12-slim
RUN apt-get update && apt-get install -y --no-install-recommends \\
        git no-such-package-anywhere \\
    && rm -rf /var/lib/apt/lists/*
RUN pip install --no-cache-dir pytest==8.4.1 requests -r /tmp/requirements.txt
WORKDIR /srv/task
"""
UVX_TEST = """\
#!/bin/bash
source /tests/lib.sh
git --version >/dev/null && uvx --with pandas pytest /tests/test_outputs.py && reward 1 || reward 0
"""


def test_harbor_declares_what_the_image_installs_and_the_verifiers_run(tmp_path: Path) -> None:
    """The Dockerfile's packages: a Debian one this machine lacks is named with its install line,
    pip ones join the requirements (pytest is changeup's own); its WORKDIR is where each verifier
    starts; a test.sh running git and uvx declares git and says uvx needs a network it has not."""
    source = Path(shutil.copytree(FIXTURES / "harbor" / "greeter", tmp_path / "greeter"))
    (source / "environment" / "Dockerfile").write_text(DOCKERFILE)
    (source / "tests" / "test.sh").write_text(UVX_TEST)
    draft = draft_harbor(source)
    assert draft.challenge["testing"]["tools"] == ["bash", "git", "mkdir", "uvx"]
    assert draft.challenge["requirements"] == ["requests"]
    assert all(p["verifier"] == {"workdir": "/srv/task"} for p in draft.challenge["phases"])
    lacking = (
        "environment/Dockerfile installs no-such-package-anywhere (apt-get); this machine lacks it: "
        "`apt-get install -y no-such-package-anywhere`"
    )
    assert lacking in draft.dropped
    assert not any("installs git" in line for line in draft.dropped)  # this machine has git
    assert any(line.startswith("tests/test.sh downloads at run time (uv/uvx") for line in draft.dropped)


@pytest.mark.parametrize(
    ("script", "words"),
    [
        (
            "if diff -u want got && python3 -m pytest; then echo 1 > r; else echo 0 > r; fi",
            ["diff", "python3"],
        ),
        ("while read x; do grep -q a $x; done\nif ! cmp a b; then touch c; fi", ["grep", "cmp", "touch"]),
        ("FOO=1 BAR=2 make all | tee log  # and a comment naming rm", ["make", "tee"]),
        ("reward() { echo $1 > /logs/verifier/reward.txt; }\nreward 1\n/tests/run.sh\n./go.sh", []),
        ('echo "$(cat input.txt)" `date`', ["cat", "date"]),
    ],
)
def test_the_programs_a_shell_script_runs(script: str, words: list[str]) -> None:
    """The first word of each command: after keywords and assignments, never a builtin, a function
    the script defines, a path to the task's own files, or a word in a comment."""
    assert command_words(script) == words


def test_shell_text_that_decompresses_or_reads_the_environment_declares_its_utilities() -> None:
    """A server that runs the commands its tests send (``bzcat data.csv.bz2``, ``printenv NAME``):
    each of those programs is a well-known utility, declared for the tests' private root."""
    assert shell_utilities("bzcat data.csv.bz2 | wc -l") == ["bzcat", "wc"]
    assert shell_utilities("zcat data.json.gz") == ["zcat"]
    assert shell_utilities("printenv GREETING") == ["printenv"]
    assert shell_utilities("xzcat a.xz; gunzip -c b.gz") == ["xzcat", "gunzip"]


def test_the_crates_a_generated_cargo_manifest_depends_on_are_named() -> None:
    """A program that writes a Cargo.toml names its crates.io dependencies: the import says those
    builds cannot fetch them; a manifest without dependencies names none."""
    manifest = '[package]\nname = "gen"\n\n[dependencies]\nserde = {{ version = "1" }}\nserde_json = "1"\n'
    assert crates(["other text", manifest, manifest]) == ["serde", "serde_json"]
    assert crates(['[package]\nname = "gen"\n\n[dependencies]\n']) == []


EXIT_TESTS = """

@pytest.mark.functionality
def test_an_unknown_command_is_rejected(ledger):
    result = ledger("frobnicate")
    assert result.returncode != 0


class TestRejections:
    def test_a_bad_amount_exits_2(self, ledger, data):
        assert ledger("total", str(data / "bad.txt")).returncode == 2

    def test_a_bad_amount_is_named(self, ledger, data):
        result = ledger("total", str(data / "bad.txt"))
        assert result.returncode != 0
        assert "bad amount" in result.stderr
"""


def test_tests_that_only_need_a_failed_exit_may_pass_on_the_starter(tmp_path: Path) -> None:
    """An empty starter cannot run, so a test whose every assertion is a non-zero exit passes on it,
    whatever its marker: listed under starter_may_pass; a test that also checks output is not."""
    source = ledger_copy(tmp_path)
    test = source / "tests" / "test_checkpoint_2.py"
    test.write_text(test.read_text() + EXIT_TESTS)
    may_pass = draft_slopcode(source).challenge["calibration"]["starter_may_pass"]
    assert "checkpoint_2/test_checkpoint_2.py::test_an_unknown_command_is_rejected" in may_pass
    assert "checkpoint_2/test_checkpoint_2.py::TestRejections::test_a_bad_amount_exits_2" in may_pass
    assert not any(m.endswith("test_a_bad_amount_is_named") for m in may_pass)

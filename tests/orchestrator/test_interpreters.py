"""The grading interpreter a challenge's ``testing.requires_python`` asks for: found on this
machine in a documented order, refused naming every place looked at, and, where this machine has
a second Python, a whole run graded on it (issue 26)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.importers import import_task
from orchestrator.system.interpreters import VARIABLE, NoInterpreter, interpreter_for, own_interpreter
from tests.cli import changeup
from tests.importers.test_import import FIXTURES

LEDGER = FIXTURES / "slopcode" / "ledger"
OWN_MINOR = sys.version_info[1]
VERSION_TEST = """

def test_runs_on_the_python_it_requires():
    import subprocess
    import sys

    assert sys.version_info[:2] == (3, {minor})
    asked = ["python", "-c", "import sys; print(sys.version_info[1])"]
    child = subprocess.run(asked, capture_output=True, text=True)
    assert child.stdout.strip() == "{minor}", child.stderr
"""


def test_changeup_s_own_python_is_taken_when_it_satisfies(monkeypatch: pytest.MonkeyPatch) -> None:
    """No specifier, or one changeup's own Python meets: its own base interpreter, whatever is listed."""
    monkeypatch.setenv(VARIABLE, "/no/such/python")
    own = own_interpreter()
    assert interpreter_for(None) == own
    assert interpreter_for(f"=={own.version}") == own
    assert Path(own.executable).is_file()


def test_a_refusal_names_every_candidate_and_how_to_name_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Listed candidates that are missing, not Python, or Python of the wrong version, and a
    python3.N on PATH that does not run (a pyenv shim): each is named with what it is, in order."""
    not_python = tmp_path / "not-python"
    not_python.write_text("#!/bin/sh\necho 'pyenv: python3.99: command not found' >&2\nexit 127\n")
    not_python.chmod(0o755)
    shims = tmp_path / "shims"
    shims.mkdir()
    shim = shims / "python3.99"
    shim.write_text(not_python.read_text())
    shim.chmod(0o755)
    (shims / f"python3.{OWN_MINOR - 1}").write_text("never asked: 3.N-1 cannot satisfy >=3.99\n")
    listed = [str(tmp_path / "missing"), str(not_python), sys.executable]
    monkeypatch.setenv(VARIABLE, os.pathsep.join(listed))
    monkeypatch.setenv("PATH", f"{shims}{os.pathsep}/usr/bin")
    with pytest.raises(NoInterpreter) as refused:
        interpreter_for(">=3.99")
    said = str(refused.value)
    assert said.startswith(f"no Python >=3.99 on this machine (changeup's own {own_interpreter().executable}")
    assert f"{tmp_path / 'missing'}: does not run (" in said
    assert f"{not_python}: does not run as Python (pyenv: python3.99: command not found)" in said
    assert f"{sys.executable} is {own_interpreter().version}" in said
    assert f"{shim}: does not run as Python" in said
    assert f"python3.{OWN_MINOR - 1}" not in said
    assert said.index(str(not_python)) < said.index(str(shim))
    assert said.endswith(f"or name its path in ${VARIABLE}")
    with pytest.raises(NoInterpreter, match="not a version specifier"):
        interpreter_for("three twelve")


def _another_python() -> str | None:
    """A newer Python than changeup's own on this machine (a challenge asks for a newer one): a
    python3.N on PATH that runs, or one of pyenv's versions; None when there is none."""
    places = [f"python3.{n}" for n in range(OWN_MINOR + 1, 20)]
    versions = Path.home() / ".pyenv" / "versions"
    if versions.is_dir():
        places += [str(p / "bin" / "python3") for p in sorted(versions.iterdir())]
    for place in places:
        try:
            done = subprocess.run(
                [place, "-c", "import json, sys; print(json.dumps(sys.version_info[:2]))"],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            major, minor = json.loads(done.stdout)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            continue
        if major == 3 and minor > OWN_MINOR:
            return place
    return None


@pytest.mark.slow
def test_a_run_is_graded_on_the_python_the_challenge_requires(tmp_path: Path) -> None:
    """The ledger requiring a newer minor version than changeup's, named in $CHANGEUP_PYTHONS:
    validation is quiet about it, and the reference reaches full marks with its hidden tests and the
    program they start both running on that version. Skipped, saying so, where the machine has no
    second Python."""
    other = _another_python()
    if other is None:
        pytest.skip(
            f"this machine has no Python newer than 3.{OWN_MINOR}: the grading interpreter cannot differ"
        )
    done = subprocess.run(
        [other, "-c", "import sys; print(sys.version_info[1])"], capture_output=True, text=True, check=True
    )
    minor = int(done.stdout)
    dest = tmp_path / "ledger"
    import_task("slopcode", LEDGER, dest)
    yaml_file = dest / "challenge.yaml"
    wanted = f"    requires_python: '==3.{minor}.*'\n"
    yaml_file.write_text(
        yaml_file.read_text().replace("    isolation: subprocess\n", f"    isolation: subprocess\n{wanted}")
    )
    test = dest / "tests" / "checkpoint_1" / "test_checkpoint_1.py"
    test.write_text(test.read_text() + VERSION_TEST.format(minor=minor))
    env = {VARIABLE: other}
    checked = changeup("validate", str(dest), env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "requires_python" not in checked.stdout + checked.stderr
    ran = changeup(
        "run", str(dest), "--agent", "scripted", "--out", str(tmp_path / "runs"), env=env, timeout=900
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (report,) = (tmp_path / "runs").glob("*/report.json")
    phases = json.loads(report.read_text())["phases"]
    assert [p["full_marks"] for p in phases] == [True] * len(phases), [p["failing"] for p in phases]

"""Without bubblewrap: hidden tests run with resource limits as a separate user, or say why not.

Real processes throughout: ``setpriv`` switches to ``nobody``, a real pytest runs the hidden
tests in an interpreter that user can reach (a venv of the system Python), and the agent's
code tries to write where only changeup may.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.challenge.loader import load_challenge
from orchestrator.grading.sandbox import Sandbox, detect_sandbox
from orchestrator.grading.testrun import PytestRunner
from orchestrator.session.workspace import Workspace
from orchestrator.system.venvs import Environment
from tests.cli import REPO

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

SYSTEM_PYTHON = Path("/usr/bin/python3")
ROOT = os.geteuid() == 0


@pytest.fixture
def anyio_backend() -> str:
    """Real time and real subprocesses: asyncio."""
    return "asyncio"


def fallback(python: str, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    """The sandbox detected with bubblewrap set aside."""
    monkeypatch.setenv("CHANGEUP_SANDBOX", "user")
    detect_sandbox.cache_clear()
    try:
        return detect_sandbox(python)
    finally:
        detect_sandbox.cache_clear()


def test_an_interpreter_the_test_user_cannot_reach_leaves_limits_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fallback never pretends: it says which part of it cannot work here."""
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "python").symlink_to(sys.executable)
    sandbox = fallback(str(private / "python"), monkeypatch)
    assert sandbox.kind == "limits-only"
    assert sandbox.user is None
    assert sandbox.reason.startswith("CHANGEUP_SANDBOX=user was set; ")
    if ROOT:
        assert f"user nobody cannot run the grading interpreter {private / 'python'}" in sandbox.reason
    else:
        assert "not root, so no separate user" in sandbox.reason


@pytest.fixture(scope="module")
def reachable_python() -> Iterator[str]:
    """A venv of the system Python with pytest, in a folder ``nobody`` can read."""
    if not ROOT:
        pytest.skip("LOUD SKIP: switching to a separate user needs root; this suite runs as root in CI")
    if not SYSTEM_PYTHON.exists():
        pytest.skip(
            f"LOUD SKIP: no system Python at {SYSTEM_PYTHON} to build an environment nobody can reach"
        )
    home = Path(tempfile.mkdtemp(prefix="changeup-env-"))
    home.chmod(0o755)
    try:
        subprocess.run([str(SYSTEM_PYTHON), "-m", "venv", str(home / "env")], check=True, capture_output=True)
        python = home / "env" / "bin" / "python"
        subprocess.run([str(python), "-m", "pip", "install", "-q", "pytest"], check=True, capture_output=True)
        yield str(python)
    finally:
        shutil.rmtree(home, ignore_errors=True)


ATTACK = """

import os as _os
for _target in ({targets}):
    try:
        with open(_target, "w") as _handle:
            _handle.write(str(_os.getuid()))
    except OSError:
        pass
"""


async def test_hidden_tests_run_as_another_user_who_can_write_only_its_copy(
    tmp_path: Path, reachable_python: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reference still passes; the agent's code, imported by the hidden tests, cannot
    write into changeup's folders or the agent's workspace. The same run with limits only
    (the control) shows the attack would otherwise land."""
    sandbox = fallback(reachable_python, monkeypatch)
    assert sandbox.kind == "user", sandbox.reason
    assert sandbox.describe()["user"] == "nobody"
    challenge = load_challenge(REPO / "challenges" / "export-time")
    workspace = Workspace.create(challenge.workspace, tmp_path / "workspace", tmp_path / "shadow.git")
    solution = challenge.root / "solutions" / "reference" / "phase2" / "export_time.py"
    planted = [tmp_path / "run-folder-file", tmp_path / "workspace" / "planted.py"]
    module = solution.read_text() + ATTACK.format(targets=", ".join(repr(str(p)) for p in planted) + ",")
    (workspace.path / "export_time.py").write_text(module)
    tree = await workspace.snapshot()

    environment = Environment(Path(reachable_python).parent.parent)
    confined = await PytestRunner(
        challenge, workspace, tmp_path / "scratch", environment=environment, sandbox=sandbox
    ).run(tree, ("phase1", "phase2"))
    assert confined.status == "ok", confined.detail
    assert [(p.passed, p.failed) for p in confined.phases] == [(3, 0), (7, 0)]
    assert not any(path.exists() for path in planted)
    assert not list((tmp_path / "scratch").glob("*")), "the user's scratch folder is outside the run folder"

    control = Sandbox("limits-only", "control")
    limited = await PytestRunner(
        challenge, workspace, tmp_path / "scratch", environment=environment, sandbox=control
    ).run(tree, ("phase1", "phase2"))
    assert limited.status == "ok", limited.detail
    assert all(path.read_text() == str(os.getuid()) for path in planted)

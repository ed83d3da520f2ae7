"""Choosing the backend: the matrix file's ``backend:`` and an agent's ``resources`` and ``send_env``,
or ``--backend``/``--address``; every bad value named by its place, nothing run."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.matrix import MatrixError, load_matrix
from orchestrator.matrix.backends import BackendChoice, BackendError, choose_backend
from orchestrator.matrix.ray_backend import RayBackend
from tests.cli import REPO

HEAD = """\
matrix:
  challenges: [{repo}/challenges/normalize-tags]
  agents:
    - name: claude
      agent: scripted
"""


def matrix_text(tmp_path: Path, tail: str) -> Path:
    """A matrix file: one challenge, one agent (its entry open for more keys), then ``tail``."""
    path = tmp_path / "matrix.yaml"
    path.write_text(HEAD.format(repo=REPO) + tail)
    return path


def test_a_matrix_file_declares_its_backend_and_its_agents_resources_and_variables(tmp_path: Path) -> None:
    """``backend:`` with its timeout as a duration; ``resources`` and ``send_env`` per agent."""
    path = matrix_text(
        tmp_path,
        "      resources: {claude_cli: 1, gpu: 0.5}\n"
        "      send_env: [ANTHROPIC_API_KEY]\n"
        "  backend: {kind: ray, address: 'head:6379', session_timeout: 2h, cpus: 2}\n",
    )
    matrix = load_matrix(path)
    (agent,) = matrix.agents
    assert agent.resources == {"claude_cli": 1, "gpu": 0.5}
    assert agent.send_env == ("ANTHROPIC_API_KEY",)
    assert choose_backend(matrix, None, None) == BackendChoice("ray", "head:6379", 7200.0, 2.0)


@pytest.mark.parametrize(
    ("tail", "expected"),
    [
        ("  backend: {kind: ray}\n", ":6:12: kind: ray needs an address"),
        ("  backend: {kind: local, address: 'h:1'}\n", ":6:35: address is for kind: ray"),
        ("  backend: {kind: slurm}\n", ":6:19: matrix.backend.kind: expected 'local' or 'ray'"),
        ("      resources: {CPU: 2}\n", ":6:24: 'CPU' is Ray's own resource"),
        ("      resources: {cli: 0}\n", ":6:24:"),
        ("      send_env: [1PASSWORD]\n", ":6:18:"),
    ],
    ids=["ray-without-address", "local-with-address", "unknown-kind", "ray-own", "zero", "bad-name"],
)
def test_bad_backend_settings_are_named_by_their_place(tmp_path: Path, tail: str, expected: str) -> None:
    """Each problem is reported as FILE:LINE:COLUMN with what is wrong."""
    path = matrix_text(tmp_path, tail)
    with pytest.raises(MatrixError) as raised:
        load_matrix(path)
    assert f"{path}{expected}" in str(raised.value)


def test_the_backend_is_given_once_on_the_command_line_or_in_the_file(tmp_path: Path) -> None:
    """The command line names it when the file does not; both at once, ray without an address, or
    an address for a local backend are refused."""
    bare = load_matrix(matrix_text(tmp_path, ""))
    assert choose_backend(bare, None, None) == BackendChoice()
    assert choose_backend(bare, None, "h:1") == BackendChoice("ray", "h:1")
    assert choose_backend(bare, "local", None) == BackendChoice()
    with pytest.raises(BackendError, match="needs --address"):
        choose_backend(bare, "ray", None)
    with pytest.raises(BackendError, match="--address is for --backend ray"):
        choose_backend(bare, "local", "h:1")
    declared = load_matrix(matrix_text(tmp_path, "  backend: {kind: local}\n"))
    with pytest.raises(BackendError, match="declares its backend"):
        choose_backend(declared, "ray", "h:1")


def test_a_variable_to_send_that_is_not_set_is_refused_before_joining_any_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """send_env naming an unset variable: refused, naming it and its agent."""
    monkeypatch.delenv("CHANGEUP_TEST_UNSET", raising=False)
    matrix = load_matrix(matrix_text(tmp_path, "      send_env: [CHANGEUP_TEST_UNSET]\n"))
    with pytest.raises(BackendError, match=r"CHANGEUP_TEST_UNSET \(agent claude\)"):
        RayBackend("127.0.0.1:1", matrix)

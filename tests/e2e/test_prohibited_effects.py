"""Prohibited effects end to end: code under test that phones out or writes outside its folder
during the hidden tests is caught in the sandbox, reported and not scored; a reference is clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import REPO, changeup
from tests.e2e.test_run import AGENT_SCRIPT, run

pytestmark = pytest.mark.slow

#: Appended to the export_time.py the shell agent writes: the same function, which now also tries
#: to reach an outside address (TEST-NET-3, nothing answers) and to write to HOME and beside its
#: folder, whatever the sandbox then allows.
MISBEHAVES = """
cat >> export_time.py <<'PY'

import os as _os
import socket as _socket

_format = format_export_time


def format_export_time(value):
    try:
        _socket.create_connection(("203.0.113.7", 443), timeout=0.2).close()
    except OSError:
        pass
    for path in (_os.path.expanduser("~/.export-cache"), "../escaped.txt"):
        try:
            with open(path, "w") as handle:
                handle.write("seen")
        except OSError:
            pass
    return _format(value)
PY
"""


def test_a_socket_and_writes_outside_the_workspace_are_caught_and_reported(tmp_path: Path) -> None:
    """export-time prohibits both effects: each attempt is found in the final workspace's hidden
    tests, named with the test that made it, in report.json, report.md, report.html and the
    summary; the score is untouched (reported, never scored)."""
    script = tmp_path / "agent.sh"
    script.write_text(AGENT_SCRIPT + MISBEHAVES)
    script.chmod(0o755)
    done, folder, report = run(REPO / "challenges/export-time", f"command:{script}", tmp_path / "runs")
    assert done.returncode == 0, done.stderr
    assert report["score"]["full_success"]  # a finding is reported, not scored
    effects = report["effects"]
    assert effects["prohibited"] == ["network", "writes-outside-workspace"]
    assert effects["watched"] is True
    found = {(f["effect"], f["detail"]) for f in effects["findings"]}
    assert ("network", "connect to 203.0.113.7:443") in found
    writes = sorted(detail for effect, detail in found if effect == "writes-outside-workspace")
    assert any(detail.endswith("/.export-cache for writing") for detail in writes), writes
    assert any(detail.endswith("/escaped.txt for writing") for detail in writes), writes
    assert all(f["test"].startswith("phase") and "::test_" in f["test"] for f in effects["findings"])
    line = "prohibited effects: "
    assert "connect to 203.0.113.7:443" in (folder / "report.md").read_text()
    assert "connect to 203.0.113.7:443" in (folder / "report.html").read_text()
    assert line in done.stdout
    shown = changeup("show", str(folder), cwd=REPO)
    assert "attempted prohibited effects: network: connect to 203.0.113.7:443" in shown.stdout, shown.stderr


def test_the_reference_of_a_built_in_challenge_has_none(tmp_path: Path) -> None:
    """protected-report-api (an API over sqlite, hidden tests with tmp_path) prohibits both: its
    reference is watched on every run and has no finding."""
    done, folder, report = run(REPO / "challenges/protected-report-api", "scripted", tmp_path / "runs")
    assert done.returncode == 0, done.stderr
    assert report["effects"]["watched"] is True
    assert report["effects"]["findings"] == []
    assert (
        "Prohibited effects (network, writes-outside-workspace): none" in (folder / "report.md").read_text()
    )

"""The ``command:`` agent's contract (docs/agents.md), end to end through the CLI."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from orchestrator.log.eventlog import LogReader
from tests.cli import REPO, changeup
from tests.e2e.test_exit_codes import untimed

pytestmark = pytest.mark.slow

AGENT = """\
#!/bin/sh
echo "working in $(pwd) on $CHANGEUP_CHALLENGE"
"""


def test_a_relative_agent_script_is_found_from_where_changeup_was_started(tmp_path: Path) -> None:
    """``--agent command:./my-agent.sh`` (the README's example) runs the script next to the user,
    in the run's workspace; before, ``sh`` looked for it in the workspace and the run was invalid."""
    script = tmp_path / "my-agent.sh"
    script.write_text(AGENT)
    script.chmod(0o755)
    challenge = untimed(tmp_path)
    done = changeup(
        "run",
        str(challenge),
        "--agent",
        "command:./my-agent.sh",
        "--out",
        str(tmp_path / "runs"),
        "--quiet",
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO), "PATH": os.path.dirname(sys.executable) + ":/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    folder = next((tmp_path / "runs").iterdir())
    records = list(LogReader(folder / "events.jsonl"))
    outputs = "".join(r["text"] for r in records if r["kind"] == "agent.output")
    assert f"working in {folder / 'workspace'} on normalize-tags" in outputs


def test_a_deadline_reaches_an_agent_that_stopped_early_without_waiting_it_out(tmp_path: Path) -> None:
    """The agent's turns change nothing: its session skips to export-time's 30-minute deadline,
    whose message starts a second turn, and ends when that turn is done, in seconds of wall time."""
    script = tmp_path / "idle.sh"
    script.write_text('#!/bin/sh\necho "turn $(ls "$CHANGEUP_MESSAGE_FILE")"\n')
    script.chmod(0o755)
    started = time.monotonic()
    done = changeup(
        "run", str(REPO / "challenges/export-time"), "--agent", f"command:{script}",
        "--out", str(tmp_path / "runs"), "--quiet", cwd=REPO,
    )  # fmt: skip
    assert time.monotonic() - started < 300, "the deadline was waited out"
    assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "runs").iterdir()
    records = list(LogReader(folder / "events.jsonl"))
    [skipped] = [r for r in records if r["kind"] == "clock.skipped"]
    [fired] = [r for r in records if r["kind"] == "trigger.fired"]
    assert fired["trigger"] == "deadline"
    assert 1800 < skipped["until"] <= fired["t"] < 1860  # fired as the skip landed
    assert [r["trigger"] for r in records if r["kind"] == "message.delivered"] == ["briefing", "deadline"]
    assert [r["reason"] for r in records if r["kind"] == "session.ended"] == ["agent_done"]
    shown = changeup("show", str(folder), cwd=REPO)
    assert "the clock skips" in shown.stdout

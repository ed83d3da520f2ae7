"""``changeup run`` end to end: real processes, real git, real pytest, real file watching."""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from orchestrator.challenge.loader import load_challenge
from orchestrator.log.eventlog import LogReader
from orchestrator.log.report import Report
from orchestrator.session.replay import replay_records
from tests.cli import REPO, changeup
from tests.servers import probe_server

pytestmark = pytest.mark.slow


def run(
    challenge: Path, agent: str, out: Path, *options: str
) -> tuple[subprocess.CompletedProcess[str], Path, dict[str, Any]]:
    """Run ``challenge`` with ``agent``; returns the process, the run folder and its report."""
    done = changeup("run", str(challenge), "--agent", agent, "--out", str(out), "--quiet", *options, cwd=REPO)
    folders = sorted(out.iterdir())
    assert len(folders) == 1, done.stderr
    folder = folders[0]
    report = json.loads((folder / "report.json").read_text()) if (folder / "report.json").exists() else {}
    # Every recorded run replays: the engine re-decides it exactly as logged.
    spec = load_challenge(challenge).spec
    assert replay_records(spec, list(LogReader(folder / "events.jsonl"))).divergence is None
    return done, folder, report


def test_reference_scores_full_marks_with_the_revision_after_phase1_passed(tmp_path: Path) -> None:
    """The demo run: full marks, the revision fired after phase 1 passed, both phases reported."""
    done, folder, report = run(REPO / "challenges/export-time", "scripted", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "FULL SUCCESS" in done.stdout
    assert report["score"]["total"] == 1.0
    phase1, phase2 = report["phases"]
    revision = report["triggers"][0]
    assert revision["id"] == "revision"
    assert revision["fired"]
    assert revision["fired_at"] >= phase1["first_passed_at"]
    assert phase2["unlocked_by"] == "revision"
    assert phase2["passed"] == phase2["total"] > 0
    markdown = (folder / "report.md").read_text()
    assert "phase1" in markdown
    assert "phase2" in markdown
    assert not (folder / "workspace" / "test_export_utc.py").exists()


@pytest.mark.parametrize(
    ("challenge", "variant"),
    [
        ("export-time", "suffix-only"),
        ("export-time", "drops-microseconds"),
        ("export-time", "accepts-naive"),
        ("normalize-tags", "sorted-set"),
        ("normalize-tags", "duplicates-kept"),
    ],
)
def test_broken_variants_score_below_full_and_name_their_failures(
    tmp_path: Path, challenge: str, variant: str
) -> None:
    """Each broken variant loses marks, and the report names every check it declares it fails."""
    done, folder, report = run(REPO / "challenges" / challenge, f"scripted:broken/{variant}", tmp_path)
    assert done.returncode == 0, done.stderr
    assert report["score"]["total"] < 1.0
    assert not report["score"]["full_success"]
    failing = {t["id"].split("[", 1)[0] for phase in report["phases"] for t in phase["failing"]}
    declared = next(
        b.fails
        for b in load_challenge(REPO / "challenges" / challenge).model.calibration.broken
        if b.name == variant
    )
    assert set(declared) <= failing
    markdown = (folder / "report.md").read_text()
    assert all(test in markdown for test in declared)


AGENT_SCRIPT = """\
#!/bin/sh
# A plain shell agent: reads the message and edits files.
set -e
if grep -q "in UTC" "$CHANGEUP_MESSAGE_FILE"; then
  cat > export_time.py <<'PY'
from datetime import datetime, timezone


def format_export_time(value: datetime) -> str:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("timezone required")
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
PY
  git commit -qam "UTC with Z"
else
  cat > export_time.py <<'PY'
from datetime import datetime


def format_export_time(value: datetime) -> str:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("timezone required")
    return value.isoformat()
PY
  git commit -qam "Keep the offset"
fi
echo "read $(wc -c < /dev/stdin) bytes of message on stdin"
"""


def test_a_shell_script_agent_completes_export_time(tmp_path: Path) -> None:
    """A command: agent that is a plain script, reading the message, finishes both phases."""
    script = tmp_path / "agent.sh"
    script.write_text(AGENT_SCRIPT)
    script.chmod(0o755)
    done, folder, report = run(REPO / "challenges/export-time", f"command:{script}", tmp_path / "runs")
    assert done.returncode == 0, done.stderr
    assert report["score"]["full_success"]
    assert report["activity"]["commits"] == 2
    records = list(LogReader(folder / "events.jsonl"))
    outputs = "".join(r["text"] for r in records if r["kind"] == "agent.output")
    assert "bytes of message on stdin" in outputs
    assert sorted(p.name for p in (folder / "agent").iterdir()) == ["message-001.md", "message-002.md"]


def test_relative_paths_work_from_any_folder(tmp_path: Path) -> None:
    """--out and the challenge may be relative to the current folder."""
    shutil.copytree(REPO / "challenges" / "normalize-tags", tmp_path / "normalize-tags")
    done = changeup("run", "normalize-tags", "--out", "runs", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "FULL SUCCESS" in done.stdout
    assert len(list((tmp_path / "runs").iterdir())) == 1


def test_missing_challenge_is_a_clean_error(tmp_path: Path) -> None:
    """A path with no challenge: exit 2, a message, no traceback."""
    done = changeup("run", str(tmp_path / "nope"), "--out", str(tmp_path), cwd=REPO)
    assert done.returncode == 2
    assert "no such challenge" in done.stderr
    assert "Traceback" not in done.stderr


def test_agent_command_that_does_not_exist_makes_the_run_invalid(tmp_path: Path) -> None:
    """A missing agent binary is an environment failure: invalid run, non-zero exit, readable log."""
    done, folder, report = run(REPO / "challenges/export-time", "command:no-such-agent-binary --go", tmp_path)
    assert done.returncode == 1
    assert "invalid" in done.stderr
    assert report["run"]["status"] == "invalid"
    assert list(LogReader(folder / "events.jsonl"))[-1]["kind"] == "session.aborted"


def test_agent_that_crashes_is_reported(tmp_path: Path) -> None:
    """An agent exiting non-zero: graded as it stands, exit 1, and the log says what happened."""
    done, folder, report = run(REPO / "challenges/export-time", "command:echo boom >&2; exit 3", tmp_path)
    assert done.returncode == 1
    assert "the agent failed: in turn 1 it exited with 3" in done.stderr
    assert report["activity"]["exit_codes"] == [3, 3]  # its turn, then the deadline's turn
    assert report["score"]["total"] == 0.0
    records = list(LogReader(folder / "events.jsonl"))
    assert any(r["kind"] == "agent.output" and "boom" in r["text"] for r in records)


def copy_challenge(tmp_path: Path, name: str) -> Path:
    """A writable copy of a built-in challenge."""
    target = tmp_path / name
    shutil.copytree(REPO / "challenges" / name, target)
    return target


def test_hidden_suite_that_hangs_is_stopped(tmp_path: Path) -> None:
    """A hidden test that never returns is killed at the test-run limit; the run says so."""
    root = copy_challenge(tmp_path, "normalize-tags")
    (root / "challenge.yaml").write_text(
        (root / "challenge.yaml").read_text().replace("test_run: 2min", "test_run: 2s")
    )
    (root / "tests" / "phase1" / "test_hang.py").write_text(
        textwrap.dedent(
            """\
            import time


            def test_hangs():
                time.sleep(600)
            """
        )
    )
    done, folder, report = run(root, "scripted", tmp_path / "runs")
    assert done.returncode == 1
    assert "timed out after 2s" in done.stderr
    assert report["score"]["grading_status"] == "timeout"
    assert list(LogReader(folder / "events.jsonl"))


def test_workspace_template_with_a_syntax_error(tmp_path: Path) -> None:
    """A starter that does not import: a clean grading where every test fails with the reason."""
    root = copy_challenge(tmp_path, "normalize-tags")
    (root / "workspace" / "tags.py").write_text("def normalize_tags(tags:\n")
    done, _, report = run(root, "command:true", tmp_path / "runs")
    assert done.returncode == 0, done.stderr  # graded to its end: the code, not the grader, failed
    assert report["score"]["grading_status"] == "ok"
    failing = report["phases"][0]["failing"]
    assert failing
    assert all(t["outcome"] == "missing" and "SyntaxError" in t["detail"] for t in failing)


PROCESS_AGENT = """\
import pathlib
import subprocess
import sys

SOLUTIONS = pathlib.Path(sys.argv[1])
message = []
for line in sys.stdin:
    if line.rstrip("\\n") != "<<<END OF MESSAGE>>>":
        message.append(line)
        continue
    text = "".join(message)
    message = []
    phase = "phase2" if "in UTC" in text else "phase1"
    source = SOLUTIONS / phase / "export_time.py"
    pathlib.Path("export_time.py").write_text(source.read_text())
    subprocess.run(["git", "commit", "-qam", f"solve {phase}"], check=True)
    print(f"solved {phase}", flush=True)
    print("<<<TURN DONE>>>", flush=True)
"""


def test_a_long_lived_process_agent_completes_export_time(tmp_path: Path) -> None:
    """A process: agent gets every message on one stdin and ends turns with the marker."""
    script = tmp_path / "agent.py"
    script.write_text(PROCESS_AGENT)
    # A copy outside the challenge folder: the agent sandbox hides the challenge from agents.
    solutions = tmp_path / "reference"
    shutil.copytree(REPO / "challenges/export-time/solutions/reference", solutions)
    done, folder, report = run(
        REPO / "challenges/export-time",
        f"process:python3 {script} {solutions}",  # python3: the agent's own environment
        tmp_path / "runs",
        "--agent-share",
        str(solutions),
    )
    assert done.returncode == 0, done.stderr
    assert report["score"]["full_success"]
    records = list(LogReader(folder / "events.jsonl"))
    assert [r["kind"] for r in records].count("agent.started") == 1
    outputs = "".join(r["text"] for r in records if r["kind"] == "agent.output")
    assert "solved phase1" in outputs
    assert "solved phase2" in outputs


def test_inbox_agent_waits_for_the_person(tmp_path: Path) -> None:
    """Messages land in .changeup/inbox/; a person's NNN.done ends each turn."""
    import anyio

    from orchestrator.agents import InboxAgent
    from orchestrator.run.runs import RunFolder, run_challenge

    challenge = load_challenge(REPO / "challenges/normalize-tags")
    solutions = challenge.root / "solutions" / "reference"
    folders: list[RunFolder] = []

    async def person() -> None:
        for turn, phase in ((1, "phase1"), (2, "phase2")):
            while not folders or not (folders[0].workspace / ".changeup/inbox" / f"{turn:03d}.md").exists():
                await anyio.sleep(0.05)
            inbox = folders[0].workspace / ".changeup/inbox"
            assert "normalize_tags" in (inbox / f"{turn:03d}.md").read_text()
            shutil.copy(solutions / phase / "tags.py", folders[0].workspace / "tags.py")
            await anyio.sleep(0.5)
            (inbox / f"{turn:03d}.done").write_text("")

    async def main() -> Report:
        with anyio.fail_after(120):
            async with anyio.create_task_group() as group:
                group.start_soon(person)
                _, outcome, report = await run_challenge(
                    challenge, InboxAgent(), tmp_path, on_folder=folders.append
                )
        assert outcome.status == "completed"
        return report

    report = anyio.run(main)
    assert report.score.full_success
    assert report.activity.agent_turns == 2
    graded = list(LogReader(folders[0].log))[-1]
    assert ".changeup" not in json.dumps(graded)


def test_a_command_agent_that_prints_a_secret_has_it_redacted(tmp_path: Path) -> None:
    """A token in the environment that the agent echoes never reaches the log."""
    secret = "tok-0123456789abcdef"
    agent = "command:echo my token is $SERVICE_TOKEN"
    args = ["run", "challenges/normalize-tags", "--agent", agent, "--out", str(tmp_path), "-q"]
    done = changeup(*args, env={"SERVICE_TOKEN": secret})
    folder = next(tmp_path.iterdir())
    log = (folder / "events.jsonl").read_text()
    assert secret not in log
    assert "[redacted $SERVICE_TOKEN]" in log
    assert secret not in done.stdout + done.stderr


NETWORK_AGENT = """\
import os, urllib.request
try:
    urllib.request.urlopen(os.environ["PROBE_URL"], timeout=3).read()
    print("reached the server")
except OSError as error:
    print(f"no network: {error}")
"""


@pytest.mark.parametrize("network", ["on", "none"])
def test_the_agent_keeps_the_network_unless_told(tmp_path: Path, network: str) -> None:
    """An agent reaches a server on this machine by default; with --agent-network none it cannot."""
    script = tmp_path / "agent.py"
    script.write_text(NETWORK_AGENT)
    with probe_server() as (url, hits):
        done = changeup(
            "run",
            str(REPO / "challenges/export-time"),
            "--agent",
            f"command:python3 {script}",
            "--agent-network",
            network,
            "--out",
            str(tmp_path / "runs"),
            "--quiet",
            cwd=REPO,
            env={"PROBE_URL": f"{url}/probe"},
        )
    # One probe a turn (the briefing's, then the deadline's) with the network, none without.
    assert hits == ([] if network == "none" else ["/probe", "/probe"]), done.stderr[-2000:]


def test_the_inbox_stays_out_of_the_agents_commits(tmp_path: Path) -> None:
    """An agent's ``git add -A`` leaves ``.changeup/`` out: the inbox is excluded in .git/info/exclude."""
    import anyio

    from orchestrator.agents import InboxAgent
    from orchestrator.seams import AgentContext, Message

    workspace = tmp_path / "workspace"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "tags.py").write_text("")
    agent = InboxAgent()
    challenge = load_challenge(REPO / "challenges/normalize-tags")
    ctx = AgentContext(workspace, tmp_path / "agent", challenge, print)
    inbox = workspace / ".changeup" / "inbox"

    async def main() -> None:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                await agent.start(ctx)
                group.start_soon(agent.turn, ctx, [Message(1, "briefing", "briefing", "Implement it.")])
                while not (inbox / "001.md").exists():
                    await anyio.sleep(0.05)
                (inbox / "001.done").write_text("")

    anyio.run(main)
    subprocess.run(["git", "add", "-A"], cwd=workspace, check=True)
    staged = subprocess.run(
        ["git", "diff", "--cached", "--name-only"], cwd=workspace, capture_output=True, text=True, check=True
    )
    assert staged.stdout.split() == ["tags.py"]


def test_a_quiet_run_writes_no_diagnostics_when_piped(tmp_path: Path) -> None:
    """``run --quiet`` with standard error piped: no JSON lines, no info events, nothing to read."""
    done, _, _ = run(REPO / "challenges/normalize-tags", "scripted", tmp_path)
    assert done.returncode == 0, done.stderr
    assert not [line for line in done.stderr.splitlines() if line.startswith("{")]
    assert "phase unlocked" not in done.stderr


def test_an_error_diagnostic_is_a_plain_uncoloured_line_when_piped(tmp_path: Path) -> None:
    """An error on a piped standard error is a line for people: not JSON, no colour codes."""
    done, _, _ = run(REPO / "challenges/normalize-tags", "command:no-such-agent-binary", tmp_path)
    aborted = [line for line in done.stderr.splitlines() if "session aborted" in line]
    assert len(aborted) == 1, done.stderr
    assert not aborted[0].startswith("{")
    assert "\x1b[" not in done.stderr


def test_json_diagnostics_only_when_asked(tmp_path: Path) -> None:
    """``CHANGEUP_LOG=json``: the session's events as JSON lines on standard error."""
    done = changeup(
        "run",
        "challenges/normalize-tags",
        "--out",
        str(tmp_path),
        "-q",
        cwd=REPO,
        env={"CHANGEUP_LOG": "json"},
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    assert {"phase unlocked", "trigger fired"} <= {event["event"] for event in events}


def test_calibration_piped_is_never_cut_at_80_columns(tmp_path: Path) -> None:
    """A MISS line and the table keep every failing test's id whole when the output is piped."""
    root = copy_challenge(tmp_path, "normalize-tags")
    (root / "solutions/reference/phase2/tags.py").write_text("def normalize_tags(tags):\n    return []\n")
    done = changeup(
        "calibrate",
        str(root),
        "--trials",
        "0",
        "--out",
        str(tmp_path / "runs"),
        cwd=REPO,
        env={"COLUMNS": ""},
    )
    assert done.returncode == 1, done.stderr
    miss = next(
        line for line in done.stdout.splitlines() if line.startswith("MISS normalize-tags reference:")
    )
    failing = [part.strip() for part in miss.split("not full marks:", 1)[1].split(";")[0].split(",")]
    assert len(failing) >= 2
    assert all(test.startswith(("phase1/", "phase2/")) and "::test_" in test for test in failing)
    table = done.stdout.split("calibration", 1)[1]
    assert all(test in table for test in failing)


def test_help_lists_every_command_with_its_whole_summary() -> None:
    """``changeup --help`` piped at 80 columns cuts no command's summary with an ellipsis."""
    done = changeup("--help", cwd=REPO, env={"COLUMNS": ""})
    assert done.returncode == 0
    commands = done.stdout.split("Commands:", 1)[1]
    assert "run        Run CHALLENGE once with an agent and write its run folder." in commands
    assert "..." not in commands
    assert "…" not in commands

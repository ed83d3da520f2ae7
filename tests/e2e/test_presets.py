"""Agent presets end to end: a real ``changeup run`` against stand-ins for the real CLIs.

The stand-ins (tests/fixtures/agents/claude, codex, aider, gemini, mini, openhands) check that
they were called the way their CLI documents — arguments, stdin, working directory,
environment, and how a later message continues the conversation — and refuse anything else
(exit 64), so a preset whose command line drifts fails these tests. They do the work by
copying the reference solution of the phase asked for, and print a recorded-format transcript.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from orchestrator.agents import parse_agent
from orchestrator.challenge.loader import load_challenge
from orchestrator.log.eventlog import LogReader
from orchestrator.scoring.manifest import write_manifest
from orchestrator.seams import AgentContext, Mailbox, Message
from orchestrator.session.replay import replay_records
from orchestrator.system.venvs import cache_root
from tests.cli import CHANGEUP, REPO, changeup, environment
from triggers import AgentOutput, AgentTurnEnded, Event, Observation
from triggers.records import TurnSummary

pytestmark = pytest.mark.slow

STANDINS = REPO / "tests" / "fixtures" / "agents"
EXPORT_TIME = REPO / "challenges" / "export-time"
SECRET = "sk-test-secret-4f2a9c1e7b"

#: preset → (stand-in program, its calls log, the figures its recorded transcript reports per turn)
PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "claude-code": ("claude", {"input_tokens": 17053, "output_tokens": 512, "cost_usd": 0.0421}),
    "codex": ("codex", {"input_tokens": 24763, "output_tokens": 122, "cost_usd": None}),
    "aider": ("aider", {"input_tokens": 2600, "output_tokens": 312, "cost_usd": 0.0124}),
    "gemini-cli": ("gemini", {"input_tokens": 24939, "output_tokens": 174, "cost_usd": None}),
    "mini-swe-agent": ("mini", {"input_tokens": None, "output_tokens": None, "cost_usd": 0.0387}),
    "openhands": ("openhands", {"input_tokens": None, "output_tokens": None, "cost_usd": None}),
}
CONTINUES = {"claude-code", "codex", "aider", "gemini-cli", "openhands"}


def standin_env(state: Path, **extra: str) -> dict[str, str | None]:
    """What changeup's environment changes to put the stand-ins first on PATH (None: unset).

    The stand-ins solve the challenge from a copy of its reference solution outside the
    challenge folder (the agent sandbox hides the challenge folder from agents), and log
    their calls in ``state``: both are given to the agent with ``--agent-share`` (see
    :func:`shares`). They run on the agent's own Python (``python3`` on its PATH).
    """
    solutions = state.parent / "reference-solutions"
    if not solutions.exists():
        shutil.copytree(EXPORT_TIME / "solutions" / "reference", solutions)
    state.mkdir(parents=True, exist_ok=True)
    state.chmod(0o777)  # the agent's own user (uid 65533 when changeup is root) writes its calls here
    unset: dict[str, str | None] = dict.fromkeys(
        ("STANDIN_EXPECT_MODEL", "STANDIN_EXPECT_FLAGS", "STANDIN_ECHO_ENV", "ANTHROPIC_API_KEY")
    )
    return {
        **unset,
        "PATH": f"{STANDINS}{os.pathsep}{os.environ.get('PATH', '')}",
        "STANDIN_STATE": str(state),
        "STANDIN_SOLUTIONS": str(solutions),
        **extra,
    }


def shares(env: dict[str, str | None]) -> list[str]:
    """The ``--agent-share`` options that let a stand-in read its solutions and log its calls."""
    return ["--agent-share", f"{env['STANDIN_SOLUTIONS']}", "--agent-share", f"{env['STANDIN_STATE']}:rw"]


def run_preset(
    tmp_path: Path, preset: str, *options: str, network: str | None = None, **extra_env: str
) -> tuple[subprocess.CompletedProcess[str], Path, dict[str, Any], list[dict[str, Any]]]:
    """``changeup run export-time --agent PRESET`` (``--agent-network network``, if given); the
    process, run folder, report, stand-in calls."""
    state, out = tmp_path / "state", tmp_path / "runs"
    env = standin_env(state, **extra_env)
    agent_options = [arg for option in options for arg in ("--agent-option", option)]
    done = changeup(
        "run",
        str(EXPORT_TIME),
        "--agent",
        preset,
        *agent_options,
        *shares(env),
        *(["--agent-network", network] if network else []),
        "--out",
        str(out),
        "-q",
        env=env,
    )
    folders = sorted(out.iterdir()) if out.exists() else []
    assert len(folders) == 1, done.stderr
    folder = folders[0]
    report = json.loads((folder / "report.json").read_text())
    program = PRESETS[preset][0]
    calls_log = state / f"{program}.calls.jsonl"
    calls = [json.loads(line) for line in calls_log.read_text().splitlines()] if calls_log.exists() else []
    spec = load_challenge(EXPORT_TIME).spec
    assert replay_records(spec, list(LogReader(folder / "events.jsonl"))).divergence is None
    return done, folder, report, calls


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_preset_drives_its_cli_through_export_time(tmp_path: Path, preset: str) -> None:
    """Both phases done through the documented command lines; transcripts, summaries and usage recorded."""
    done, folder, report, calls = run_preset(
        tmp_path, preset, "model=test-model", STANDIN_EXPECT_MODEL="test-model"
    )
    refusals = [call.get("refused") for call in calls if call.get("refused")]
    assert not refusals, refusals
    assert done.returncode == 0, done.stderr
    assert report["score"]["full_success"]
    assert len(calls) == 2
    assert all(call["cwd"] == str(folder / "workspace") for call in calls)
    first, second = calls
    assert "UTC offset exactly" in first["message"]
    assert "in UTC" in second["message"]
    if preset in CONTINUES:  # the conversation goes on: only the new message is sent
        assert "UTC offset exactly" not in second["message"]
    else:  # no continuity: the earlier message comes along as context
        assert "UTC offset exactly" in second["message"]
        assert "[The new message]" in second["message"]

    records = list(LogReader(folder / "events.jsonl"))
    summaries = [r for r in records if r["kind"] == "turn.summary"]
    assert [s["turn"] for s in summaries] == [1, 2]
    transcripts = sorted(p.name for p in (folder / "agent").glob("turn-*"))
    assert transcripts == [Path(s["transcript"]).name for s in summaries]
    assert all((folder / s["transcript"]).stat().st_size > 0 for s in summaries)
    output = "".join(r["text"] for r in records if r["kind"] == "agent.output")
    assert (folder / summaries[0]["transcript"]).read_text() in output  # small: inlined whole

    figures = PRESETS[preset][1]
    for row in report["turns"]:
        assert row["reported"]
        assert row["final_message"], row
        assert row["seconds"] is not None
        for figure, value in figures.items():
            assert row[figure] == value, (figure, row)
    assert "Turn 2" in report["turns"][1]["final_message"]
    for figure, value in figures.items():
        total = report["usage"][figure]["total"]
        assert total == (None if value is None else pytest.approx(value * 2)), figure
    markdown = (folder / "report.md").read_text()
    assert "## Agent turns" in markdown
    if None in figures.values():
        assert "missing" in markdown


def test_a_drifted_command_line_is_refused_and_fails_the_run(tmp_path: Path) -> None:
    """The stand-in refuses a call it was not told to expect; the run says the agent failed."""
    done, _, report, calls = run_preset(tmp_path, "codex", "flags=--oss")
    assert calls[0]["refused"].startswith("arguments")
    assert done.returncode == 1
    assert "the agent failed: in turn 1 it exited with 64" in done.stderr
    assert not report["score"]["full_success"]


def test_extra_flags_go_where_the_documented_line_has_them(tmp_path: Path) -> None:
    """flags=… lands in the expected place (the stand-in checks the exact line)."""
    done, _, report, calls = run_preset(
        tmp_path, "claude-code", "flags=--max-turns 30", STANDIN_EXPECT_FLAGS="--max-turns 30"
    )
    assert done.returncode == 0, done.stderr
    assert calls[1]["argv"][-2:] == ["--max-turns", "30"]
    assert report["score"]["full_success"]


def test_an_api_key_never_reaches_the_log_the_report_or_the_manifest(tmp_path: Path) -> None:
    """The stand-in echoes its environment and says the key in its final message; none of it is
    kept. With the whole network (the gateway, by default with a key, would give it a token)."""
    done, folder, report, calls = run_preset(
        tmp_path, "claude-code", network="full", ANTHROPIC_API_KEY=SECRET, STANDIN_ECHO_ENV="1"
    )
    assert done.returncode == 0, done.stderr
    assert calls[0]["env"]["ANTHROPIC_API_KEY"] == SECRET  # the agent did get its key
    events = (folder / "events.jsonl").read_text()
    assert "ANTHROPIC_API_KEY=[redacted $ANTHROPIC_API_KEY]" in events  # the echo was caught
    assert "[redacted $ANTHROPIC_API_KEY]" in report["turns"][0]["final_message"]
    manifest = folder / "manifest.json"  # frozen by the run itself
    assert json.loads(manifest.read_text())["agent"]["environment"]["ANTHROPIC_API_KEY"] == "[redacted]"
    kept = [folder / "events.jsonl", manifest, *folder.glob("report.*"), *(folder / "agent").iterdir()]
    for path in kept:
        assert SECRET not in path.read_text(), path
    assert SECRET not in done.stdout + done.stderr


def test_the_manifest_is_frozen_before_the_agent_starts(tmp_path: Path) -> None:
    """The stand-in checks manifest.json is there at its first call; it names the version and model."""
    done, folder, _, calls = run_preset(
        tmp_path,
        "gemini-cli",
        "model=flash",
        STANDIN_EXPECT_MODEL="flash",
        STANDIN_EXPECT_MANIFEST="1",
        # The stand-in looks for manifest.json in the run folder, which the agent sandbox
        # hides from agents; this test is about order, so it runs without that sandbox.
        CHANGEUP_SANDBOX="none",
    )
    assert done.returncode == 0, [done.stderr, calls]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["agent"]["version"] == "0.9.0"
    assert manifest["agent"]["model"] == "flash"
    assert manifest["challenge"]["sha256"] == load_challenge(EXPORT_TIME).digest


def test_the_manifest_records_the_agent_and_redacts_secrets(tmp_path: Path) -> None:
    """Version from --version, the command lines, the variables that matter, sandbox settings."""
    agent = parse_agent("aider", {"model": "sonnet", "flags": f"--openai-api-key {SECRET}"})
    env = {
        "PATH": f"{standin_env(tmp_path)['PATH']}",
        "OPENAI_API_KEY": SECRET,
        "AIDER_DARK_MODE": "1",
        "HOME": "/root",
    }
    manifest = write_manifest(
        tmp_path, load_challenge(EXPORT_TIME), agent, sandbox={"network": "none"}, env=env
    )
    text = (tmp_path / "manifest.json").read_text()
    assert SECRET not in text
    assert json.loads(text) == manifest.model_dump(mode="json")
    recorded = manifest.agent.model_dump()
    assert recorded["version"] == "aider 0.86.1"
    assert recorded["path"] == str(STANDINS / "aider")
    assert recorded["environment"] == {"AIDER_DARK_MODE": "1", "OPENAI_API_KEY": "[redacted]"}
    assert recorded["flags"] == ["--openai-api-key", "[redacted $--openai-api-key]"]
    assert recorded["command"][:3] == ["aider", "--message-file", "<AGENT_DIR>/message-<N>.md"]
    assert manifest.sandbox == {"network": "none"}
    assert manifest.limits.model_dump() == {
        "session_seconds": 3600.0,
        "test_run_seconds": 120.0,
        "agent_turn_seconds": None,
    }
    again = write_manifest(tmp_path, load_challenge(EXPORT_TIME), parse_agent("codex"), env=env)
    assert again == manifest  # frozen: written once


def test_changeup_agents_lists_presets_installed_and_versions(tmp_path: Path) -> None:
    """With the stand-ins on PATH every preset is installed; without, none is."""
    done = changeup("agents", "--json", env=standin_env(tmp_path))
    assert done.returncode == 0, done.stderr
    rows = {row["preset"]: row for row in json.loads(done.stdout)}
    assert sorted(rows) == sorted(PRESETS)
    assert all(row["installed"] for row in rows.values())
    assert rows["claude-code"]["version"] == "2.0.14 (Claude Code)"
    assert rows["openhands"]["path"] == str(STANDINS / "openhands")
    assert rows["mini-swe-agent"]["version"] is None  # mini has no --version; its script is no Python here
    table = changeup("agents", env=standin_env(tmp_path))
    assert "codex-cli 0.46.0" in table.stdout
    bare = changeup("agents", "--json", env={"PATH": "/nonexistent"})
    assert not any(row["installed"] for row in json.loads(bare.stdout))


def test_an_interrupting_message_ends_the_turn_and_the_session_continues(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hung turn is killed when an interrupting message arrives; the next turn resumes the session."""
    for name, value in standin_env(tmp_path / "state", STANDIN_HANG="1").items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    events: list[Event | Observation] = []
    ctx = AgentContext(workspace, tmp_path / "agent", load_challenge(EXPORT_TIME), events.append)
    mailbox = Mailbox()

    async def until(done: Any) -> None:
        with anyio.fail_after(60):
            while not done():
                await anyio.sleep(0.05)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(parse_agent("claude-code").run, ctx, mailbox)
            mailbox.put(Message(1, "briefing", "briefing", "Build it.", phase="phase1"))
            await until(lambda: any(isinstance(e, AgentOutput) for e in events))
            mailbox.put(Message(2, "pivot", "pivot", "Stop: do it in UTC.", interrupt=True, phase="phase2"))
            await until(lambda: sum(isinstance(e, TurnSummary) for e in events) == 2)
            group.cancel_scope.cancel()

    anyio.run(main)  # the hung stand-in sleeps an hour: only the interrupt ends its turn
    ended = [e for e in events if isinstance(e, AgentTurnEnded)]
    assert [e.reason for e in ended] == ["interrupted", ""]
    first, second = [e for e in events if isinstance(e, TurnSummary)]
    assert first.session == "9d3c1a52-7e4b-4c1d-8f00-000000000001"  # seen before it was killed
    assert (first.cost_usd, first.input_tokens) == (None, None)  # it never got to its result
    calls = [
        json.loads(line) for line in (tmp_path / "state" / "claude.calls.jsonl").read_text().splitlines()
    ]
    assert calls[1]["argv"][-2:] == ["--resume", first.session]
    assert calls[1]["stdin"] == "Stop: do it in UTC."
    assert second.final_message == "Turn 2: implemented phase2 in export_time.py."


def test_a_person_as_the_agent(tmp_path: Path) -> None:
    """Messages shown in the terminal; Enter (with a note) ends one turn, NNN.done the next."""
    out = tmp_path / "runs"
    solutions = EXPORT_TIME / "solutions" / "reference"
    process = subprocess.Popen(
        [
            *CHANGEUP,
            "run",
            str(EXPORT_TIME),
            "--agent",
            "human",
            "--out",
            str(out),
            "-q",
        ],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(),
    )
    assert process.stdin is not None

    def inbox_file(name: str) -> Path:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = list(out.glob(f"*/workspace/.changeup/inbox/{name}")) if out.exists() else []
            if found:
                return found[0]
            time.sleep(0.05)
        raise AssertionError(f"no {name} in the inbox")

    try:
        first = inbox_file("001.md")
        workspace = first.parents[2]
        assert "UTC offset exactly" in first.read_text()
        shutil.copy(solutions / "phase1" / "export_time.py", workspace / "export_time.py")
        time.sleep(0.5)
        process.stdin.write("kept the offset\n")
        process.stdin.flush()
        second = inbox_file("002.md")
        assert "in UTC" in second.read_text()
        shutil.copy(solutions / "phase2" / "export_time.py", workspace / "export_time.py")
        time.sleep(0.5)
        (second.parent / "002.done").write_text("converted to UTC\n")
        stdout, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 0, stderr
    assert "changeup — message 1 (briefing, from briefing)" in stderr
    assert "UTC offset exactly" in stderr
    assert "press Enter" in stderr
    folder = next(out.iterdir())
    report = json.loads((folder / "report.json").read_text())
    assert report["score"]["full_success"]
    assert [row["final_message"] for row in report["turns"]] == ["kept the offset", "converted to UTC"]
    outputs = [r["text"] for r in list(LogReader(folder / "events.jsonl")) if r["kind"] == "agent.output"]
    assert outputs == ["[turn 1 declared done by Enter]\n", "[turn 2 declared done by 002.done]\n"]
    assert "FULL SUCCESS" in stdout


def test_a_preset_gets_a_private_home_seeded_with_its_own_config_only(tmp_path: Path) -> None:
    """The CLI sees a private HOME holding copies of its own configuration and credentials
    (nothing else of the real HOME); the copies are gone after the run, its own files stay."""
    real = tmp_path / "real-home"
    (real / ".claude").mkdir(parents=True)
    (real / ".claude.json").write_text('{"onboarding": true}')
    (real / ".claude" / ".credentials.json").write_text('{"token": "sk-seeded-credential-0001"}')
    (real / ".ssh").mkdir()
    (real / ".ssh" / "id_ed25519").write_text("a key that is not the agent's")
    # The environment cache stays where it was: only the agent's HOME is in question here.
    done, folder, _, calls = run_preset(
        tmp_path, "claude-code", HOME=str(real), CHANGEUP_CACHE=str(cache_root())
    )
    assert done.returncode == 0, done.stderr
    home, seen = calls[0]["home"]
    assert home == "/home/agent"
    assert ".claude.json" in seen
    assert ".claude/.credentials.json" in seen
    assert not any(name.startswith(".ssh") for name in seen)
    sandboxed = next(r for r in list(LogReader(folder / "events.jsonl")) if r["kind"] == "agent.sandboxed")
    assert sorted(sandboxed["home_seeded"]) == [".claude.json", ".claude/.credentials.json"]
    assert not (folder / "home" / ".claude" / ".credentials.json").exists()  # the copies are gone
    assert not (folder / "home" / ".claude.json").exists()
    assert (real / ".claude" / ".credentials.json").read_text() == '{"token": "sk-seeded-credential-0001"}'

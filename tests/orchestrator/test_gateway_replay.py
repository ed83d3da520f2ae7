"""Recorded model traffic, replayed: ``changeup run --model-upstream`` records a real session of
a home-made agent with a tool loop (``tool_loop.py``) against the scripted model server;
``changeup run --replay-model RUN`` then runs the same agent with the server gone, and a
changed agent diverges.

One recording serves three checks: what is kept (every exchange, no key, no token), a replay
that makes the same requests and the same workspace changes, and a divergence that is refused,
logged and reported, never answered.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.gateway.recording import normalised
from tests.atif import Trajectory
from tests.cli import REPO, changeup
from tests.modelserver import DIALECTS, ModelServer, Part, Say, Script, Write
from tests.redteam.common import records, run

pytestmark = pytest.mark.slow

EXPORT_TIME = REPO / "challenges" / "export-time"
AGENT = Path(__file__).resolve().parents[1] / "fixtures" / "gateway-agent" / "tool_loop.py"
KEY = "sk-ant-real-replay-5d1c9e7a3f"


def _script() -> Script:
    """Write each phase's reference solution, then say so: one part per message."""
    reference = EXPORT_TIME / "solutions" / "reference"
    return Script(
        (
            Part(
                "phase1",
                "UTC offset exactly as given",
                (Write("export_time.py", (reference / "phase1" / "export_time.py").read_text()), Say("One.")),
            ),
            Part(
                "phase2",
                "Preserve microseconds when present",
                (Write("export_time.py", (reference / "phase2" / "export_time.py").read_text()), Say("Two.")),
            ),
        )
    )


def _requests(folder: Path) -> list[tuple[str, object]]:
    """Each recorded request's target and normalised body, in order."""
    found = []
    for path in sorted((folder / "model").glob("*.request.json")):
        request = json.loads(path.read_text())
        found.append((request["target"], normalised(request["body"].encode())))
    return found


def _files(folder: Path) -> dict[str, str]:
    """The workspace's files (its git folder left out) and their contents."""
    workspace = folder / "workspace"
    return {
        str(p.relative_to(workspace)): p.read_text(errors="replace")
        for p in sorted(workspace.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(workspace).parts
    }


def test_a_recorded_session_replays_the_same_and_a_changed_agent_diverges(tmp_path: Path) -> None:
    """Record, replay with no server, replay with a changed agent."""
    agent = f"process:python3 {AGENT}"
    with ModelServer(_script(), DIALECTS["claude-code"]) as server:
        env = {"ANTHROPIC_API_KEY": KEY, "OPENAI_API_KEY": "", "GEMINI_API_KEY": "", "GOOGLE_API_KEY": ""}
        report, recorded = run(
            EXPORT_TIME, agent, tmp_path / "first", "--model-upstream", server.url, env=env
        )
        answered = server.answered()
    assert report["run"]["status"] == "completed", report["run"]["detail"]
    assert [p["full_marks"] for p in report["phases"]] == [True, True]
    # Kept: each exchange the server answered, its answer byte for byte; no key, no token.
    assert len(answered) == 4
    heads = sorted((recorded / "model").glob("*.response.json"))
    assert len(heads) == 4
    assert all(json.loads(h.read_text())["status"] == 200 for h in heads)
    assert b"event: message_stop" in (recorded / "model" / "0001.response").read_bytes()
    token = json.loads((recorded / "model" / "0001.request.json").read_text())["headers"]
    assert ["x-api-key", "[redacted]"] in token
    for path in recorded.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert KEY.encode() not in path.read_bytes(), path
            assert b"changeup-session-" not in path.read_bytes(), path

    # Exported as ATIF: the revision as a user step naming its trigger and cause, each Write
    # with its result sent back.
    exported = changeup("export", str(recorded), "--atif", timeout=120)
    assert exported.returncode == 0, exported.stderr
    document = json.loads(exported.stdout)
    Trajectory.model_validate(document)
    steps = document["steps"]
    assert [s["source"] for s in steps] == ["user", "agent", "agent", "user", "agent", "agent"]
    assert steps[3]["extra"]["trigger"] == "revision"
    assert steps[3]["extra"]["cause"].startswith("phase1_tests_pass")
    assert [c["function_name"] for c in steps[1]["tool_calls"]] == ["Write"]
    assert [len(s["observation"]["results"]) for s in steps if "observation" in s] == [1, 1]
    assert steps[4]["observation"]["results"][0]["content"] == "wrote 354 bytes"

    # Replayed with the server gone and no key: the same requests, the same workspace changes.
    replay_env = {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "GEMINI_API_KEY": "", "GOOGLE_API_KEY": ""}
    options = ("--replay-model", str(recorded))
    again, replayed = run(EXPORT_TIME, agent, tmp_path / "second", *options, env=replay_env)
    assert again["run"]["status"] == "completed", again["run"]
    assert [p["full_marks"] for p in again["phases"]] == [True, True]
    assert _requests(replayed) == _requests(recorded)
    assert _files(replayed) == _files(recorded)
    assert [r["kind"] for r in records(replayed) if r["kind"] == "model.diverged"] == []
    usage = again["model_usage"]["requests"]
    assert [r["outcome"] for r in usage] == ["answered"] * 4
    assert [r["input_tokens"] for r in usage] == [
        r["input_tokens"] for r in report["model_usage"]["requests"]
    ]

    # A changed agent: its second request differs; refused, logged, reported, never answered.
    changed, diverged = run(EXPORT_TIME, f"{agent} --variant", tmp_path / "third", *options, env=replay_env)
    (found, *_) = [r for r in records(diverged) if r["kind"] == "model.diverged"]
    assert (found["number"], found["recorded"]) == (2, 2)
    assert "messages[2].content[0].content" in found["reason"]
    outcomes = [r["outcome"] for r in changed["model_usage"]["requests"]]
    assert outcomes[:2] == ["answered", "refused"]
    assert "replay diverged" in changed["model_usage"]["requests"][1]["detail"]
    assert (diverged / "workspace" / "model-error.txt").read_text().startswith("400 ")
    assert changed["model_usage"]["replay"]["diverged_requests"] == [2, 3]

    # A fork at the pivot: the recording up to the revision, then its new wording, upstream.
    wording = tmp_path / "revision.txt"
    wording.write_text(
        "Reworded: the same instant in UTC, ending in Z. Preserve microseconds when present.\n"
    )
    fork = ("--fork-at", "revision", "--message", str(wording), "--model-upstream")
    with ModelServer(_script(), DIALECTS["claude-code"]) as server:
        forked, folder = run(EXPORT_TIME, agent, tmp_path / "fork", *options, *fork, server.url, env=env)
        upstream = server.answered()
    assert forked["run"]["status"] == "completed", forked["run"]
    assert [p["full_marks"] for p in forked["phases"]] == [True, True]
    assert forked["model_usage"]["replay"] == {
        "run": str(recorded),
        "fork_at": "revision",
        "message_file": str(wording),
        "forked_at_request": 3,
        "diverged_requests": [],
    }
    assert [e.body["messages"][-1]["content"] for e in upstream[:1]] == [wording.read_text()]
    assert len(upstream) == 2  # only what came after the fork went upstream
    delivered = [r for r in records(folder) if r["kind"] == "message.queued"]
    assert delivered[-1]["text"] == wording.read_text()
    # Its triggers re-decided from its log agree: the fork's wording is the log's.
    decided = changeup("replay", str(folder), timeout=120)
    assert decided.returncode == 0, decided.stdout[-2000:]

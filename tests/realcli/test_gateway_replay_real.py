"""A real CLI's session, recorded by the model gateway and replayed with ``--replay-model``.

The session is recorded against the scripted model server (:func:`~tests.realcli.session.run_real`
through the gateway); the replay runs the same CLI on the same challenge with no server
listening: every request it makes matches the recorded one (the same requests, normalised: another
run folder, other client-made identifiers, other timings) and is answered from the recording,
and the workspace ends holding the same files. The recording's ATIF export holds every tool
call with its result. A fork at the revision with another wording runs to the end: the
recording answers up to it, the server after it, and the report names the fork.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.gateway.recording import normalised
from orchestrator.system.venvs import cache_root
from tests.atif import Trajectory
from tests.cli import changeup
from tests.modelserver import DIALECTS, ModelServer
from tests.realcli.session import RUN_SECONDS, run_real, small_tokens
from tests.realcli.setups import EXPORT_TIME, export_time_script, setup

pytestmark = [pytest.mark.real_cli, pytest.mark.slow, pytest.mark.timeout(900)]


def _requests(folder: Path) -> list[tuple[str, object]]:
    """Each recorded request's target and normalised body, in order."""
    kept = [json.loads(p.read_text()) for p in sorted((folder / "model").glob("*.request.json"))]
    return [(r["target"], normalised(r["body"].encode())) for r in kept]


def _files(folder: Path) -> dict[str, bytes]:
    """The workspace's files, its git folder left out."""
    workspace = folder / "workspace"
    return {
        p.relative_to(workspace).as_posix(): p.read_bytes()
        for p in sorted(workspace.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(workspace).parts
    }


@pytest.mark.parametrize("preset", ["claude-code", "codex", "gemini-cli"])
def test_a_real_cli_replays_its_recorded_session_without_a_provider(tmp_path: Path, preset: str) -> None:
    """Both phases of export-time, recorded, then replayed request for request."""
    recorded = run_real(tmp_path / "first", preset, gateway=True)
    assert recorded.report["score"]["total"] == 1.0, recorded.done.stderr[-3000:]
    # Its ATIF export: both messages as user steps, each tool call with its result.
    exported = changeup("export", str(recorded.folder), "--atif", timeout=120)
    document = json.loads(exported.stdout)
    Trajectory.model_validate(document)
    steps = document["steps"]
    assert [s["extra"]["trigger"] for s in steps if s["source"] == "user"] == ["briefing", "revision"]
    calls = [c["tool_call_id"] for s in steps for c in s.get("tool_calls", [])]
    results = [r["source_call_id"] for s in steps for r in s.get("observation", {}).get("results", [])]
    assert calls == results != []
    # The CLI is set up as before, its base URL a port where nothing listens: the gateway serves.
    given = setup(preset, "http://127.0.0.1:9", tmp_path / "home", tmp_path / "shared", gateway=True)
    options = [arg for option in given.options for arg in ("--agent-option", option)]
    shares = [arg for share in given.shares for arg in ("--agent-share", share)]
    env = {**given.env, "CHANGEUP_CACHE": str(cache_root())}
    runs = tmp_path / "replayed"
    done = changeup(
        "run",
        str(EXPORT_TIME),
        "--agent",
        preset,
        *options,
        *shares,
        "--replay-model",
        str(recorded.folder),
        "--agent-network",
        "full",
        "--out",
        str(runs),
        "-q",
        env=env,
        timeout=RUN_SECONDS,
    )
    (folder,) = sorted(runs.iterdir())
    report = json.loads((folder / "report.json").read_text())
    assert report["score"]["total"] == 1.0, done.stderr[-3000:]
    requests = report["model_usage"]["requests"]
    assert [r["outcome"] for r in requests] == ["answered"] * len(_requests(recorded.folder))
    assert report["model_usage"]["replay"]["diverged_requests"] == []
    assert _requests(folder) == _requests(recorded.folder)
    assert _files(folder) == _files(recorded.folder)

    # A fork at the pivot: the recording up to the revision, its new wording, then the server.
    wording = tmp_path / "revision.txt"
    wording.write_text(
        "Change of plan: format_export_time gives the same instant in UTC, ending in Z. "
        "Preserve microseconds when present. Naive datetimes still raise ValueError.\n"
    )
    forks = tmp_path / "forked"
    with ModelServer(export_time_script(), DIALECTS[preset], runs=forks, tokens=small_tokens) as server:
        fork = ("--fork-at", "revision", "--message", str(wording), "--model-upstream", server.url)
        done = changeup(
            "run",
            str(EXPORT_TIME),
            "--agent",
            preset,
            *options,
            *shares,
            "--replay-model",
            str(recorded.folder),
            *fork,
            "--agent-network",
            "full",
            "--out",
            str(forks),
            "-q",
            env=env,
            timeout=RUN_SECONDS,
        )
        upstream = len(server.exchanges)
    (forked,) = sorted(forks.iterdir())
    report = json.loads((forked / "report.json").read_text())
    assert report["score"]["total"] == 1.0, done.stderr[-3000:]
    named = report["model_usage"]["replay"]
    assert (named["fork_at"], named["message_file"], named["diverged_requests"]) == (
        "revision",
        str(wording),
        [],
    )
    before = named["forked_at_request"] - 1  # served from the recording
    assert 0 < before < len(report["model_usage"]["requests"]) == before + upstream

"""The red team against the host: an agent that tries to write it, read it, or make git run its code.

Every case is a real session with an attacking agent (tests/fixtures/redteam-agents) that is
told exactly where to aim. Each must leave the host as it was, and end with a valid run.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from orchestrator.system.runtime import runtime_for
from orchestrator.system.venvs import cache_root, grading_environment
from tests.challenges import without_deadline
from tests.cli import REPO
from tests.redteam.common import (
    AGENTS,
    DETECTED,
    NEUTRALISED,
    TARGET,
    agent_said,
    needs_bubblewrap,
    needs_root,
    outcome,
    records,
    run,
    tree_digest,
)

pytestmark = pytest.mark.slow

EXPORT_TIME = REPO / "challenges" / "export-time"
KIT = ("--agent-share", str(AGENTS))  # the attack kit itself (its scripts import one another)


def agent(script: str) -> str:
    """The ``command:`` spec of an attacking script."""
    return f"command:python3 {AGENTS / script}"


@needs_bubblewrap
@needs_root
def test_the_host_is_byte_identical_after_an_agent_tried_to_write_it(tmp_path: Path) -> None:
    """/usr, the grading interpreter's site-packages, ~/.gitconfig, the cached grading environment and
    private runtime the run uses, another run's folder and the host's /tmp: hashed before and after
    an agent aims at each of them. (The whole cache is aimed at, but only what this run uses is
    hashed: the cache is shared with every other run on the machine and holds gigabytes.)"""
    usr = Path("/usr/local/share/changeup-redteam")
    usr.mkdir(parents=True, exist_ok=True)
    (usr / "target.txt").write_text("left alone\n")
    try:
        run(TARGET, "scripted", tmp_path / "elsewhere")  # another run, not under --out
        other_run = next((tmp_path / "elsewhere").iterdir())
        grading = grading_environment([])
        site = next(grading.prefix.glob("lib/python*/site-packages"))
        runtime = runtime_for(grading).root
        watched = {
            "a file under /usr": usr / "target.txt",
            "a new file in /usr": Path("/usr/changeup-redteam-new.txt"),
            "the grading interpreter's site-packages": site,
            "~/.gitconfig": Path.home() / ".gitconfig",
            "the grading environment": grading.prefix,
            "the private runtime": runtime,
            "another run's folder": other_run,
            "the host's /tmp": Path("/tmp/changeup-redteam-host.txt"),
            "the host's /var/tmp": Path("/var/tmp/changeup-redteam-host.txt"),
        }
        targets = [*map(str, watched.values()), str(cache_root())]
        targets += [str(other_run / "workspace"), str(other_run / "events.jsonl")]
        before = {name: tree_digest(path) for name, path in watched.items()}
        report, folder = run(
            TARGET,
            agent("host_writes.py"),
            tmp_path / "runs",
            *KIT,
            env={"REDTEAM_TARGETS": os.pathsep.join(targets)},
        )
        after = {name: tree_digest(path) for name, path in watched.items()}
        assert after == before
        wrote = [
            line
            for line in (folder / "workspace" / "attempts.txt").read_text().splitlines()
            if "WROTE" in line
        ]
        # Its own /tmp and /var/tmp take the writes; the host's stay as they were (above).
        assert all(line.startswith(("WROTE /tmp/", "WROTE /var/tmp/")) for line in wrote), wrote
        assert outcome(report) == NEUTRALISED, report["score"]
        # Nothing it tried is left to help a later agent that does nothing.
        idle, _ = run(TARGET, "command:true", tmp_path / "later")
        assert outcome(idle) == NEUTRALISED, idle["score"]
    finally:
        shutil.rmtree(usr, ignore_errors=True)


@needs_bubblewrap
def test_an_agent_reads_nothing_of_the_challenge_its_run_or_other_runs(tmp_path: Path) -> None:
    """After trying to unmount its way out, the agent reads the challenge folder (later messages,
    hidden tests, solutions), other runs, the cache and its own run folder: it gets none of them."""
    challenge = without_deadline(EXPORT_TIME, tmp_path / "export-time")  # phase 2 stays unsaid
    run(TARGET, "scripted", tmp_path / "elsewhere")
    other_run = next((tmp_path / "elsewhere").iterdir())
    secrets = [challenge, other_run, cache_root(), tmp_path / "runs"]
    report, folder = run(
        challenge,
        agent("reads_everything.py"),
        tmp_path / "runs",
        *KIT,
        env={"REDTEAM_SECRETS": os.pathsep.join(map(str, secrets))},
    )
    loot = (folder / "workspace" / "loot.txt").read_text()
    for secret in (
        "represent the same instant in UTC",  # phase 2's message, never delivered
        "test_converts_across_date_boundary",  # a hidden test of phase 2
        "astimezone",  # the reference solution
        '"kind":"session.started"',  # any run's event log
        "redteam-target",  # the other run
    ):
        assert secret not in loot
    assert outcome(report) == NEUTRALISED, report["score"]


@pytest.mark.parametrize("sandbox", [pytest.param("bubblewrap", marks=needs_bubblewrap), "none"])
def test_git_never_runs_the_agents_code_on_the_host(tmp_path: Path, sandbox: str) -> None:
    """Hooks, fsmonitor, signature programs, filters and textconv planted in .git/config, in
    .gitattributes and in the global git configuration run nothing when changeup reads the
    agent's commits (one of them signed) and snapshots its workspace, with or without a sandbox."""
    marker = tmp_path / "host" / "ran"
    marker.parent.mkdir()
    home = tmp_path / "home"  # changeup's HOME: a global git configuration the agent writes
    home.mkdir()
    env = {
        "REDTEAM_MARKER": str(marker),
        "REDTEAM_GITCONFIG": str(home / ".gitconfig"),
        "HOME": str(home),
        **({"CHANGEUP_SANDBOX": "none"} if sandbox == "none" else {}),
        "CHANGEUP_CACHE": str(cache_root()),
    }
    report, folder = run(TARGET, agent("git_runs_code.py"), tmp_path / "runs", env=env)
    assert not marker.exists(), marker.read_text()
    assert report["activity"]["commits"] == 2  # read through the shadow repository all the same
    assert outcome(report) == NEUTRALISED, report["score"]
    assert "filter" not in agent_said(folder)


@pytest.mark.parametrize("scope", ["grading environment", "later phase's tests"])
def test_without_bubblewrap_what_grades_the_agent_is_sealed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scope: str
) -> None:
    """With no sandbox the agent can write anything root can. A .pth in the grading environment,
    or phase 2's hidden tests rewritten during turn 1 (same names, empty bodies), break the
    seals taken when the session started: the grading is tampered, not full marks."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("CHANGEUP_CACHE", str(cache))
    challenge = tmp_path / "export-time"
    shutil.copytree(EXPORT_TIME, challenge)
    solution = (EXPORT_TIME / "solutions" / "reference" / "phase1" / "export_time.py").read_text()
    if scope == "grading environment":
        site = next(grading_environment([]).prefix.glob("lib/python*/site-packages"))
        attack = f"echo 'import os' > {site}/changeup-redteam.pth"
    else:
        hidden = challenge / "tests" / "phase2" / "test_export_utc.py"
        names = [
            line.split("(")[0][4:] for line in hidden.read_text().splitlines() if line.startswith("def test")
        ]
        bodies = "".join(f"def {name}(*args):\\n    pass\\n\\n" for name in names)
        attack = f"printf '{bodies}' > {hidden}"
    script = tmp_path / "agent.sh"
    script.write_text(
        "#!/bin/sh\nif grep -q 'in UTC' \"$CHANGEUP_MESSAGE_FILE\"; then exit 0; fi\n"
        f"{attack}\ncat > export_time.py <<'PY'\n{solution}PY\n"
    )
    script.chmod(0o755)
    env = {"CHANGEUP_SANDBOX": "none", "CHANGEUP_CACHE": str(cache)}
    report, folder = run(challenge, f"command:{script}", tmp_path / "runs", env=env)
    assert outcome(report) == DETECTED, report["score"]
    assert not report["score"]["full_success"]
    detail = report["score"]["grading_detail"]
    if scope == "grading environment":
        assert "changed since it was sealed" in detail
    else:
        assert "hidden test file phase2/test_export_utc.py changed since the session started" in detail
    sealed = [r for r in records(folder) if r["kind"] == "phase.sealed"]
    assert [r["phase"] for r in sealed] == ["phase1", "phase2"]  # every phase, at the start
    assert all(r["t"] == 0.0 for r in sealed)

"""Challenges that advance on the agent's turn, run for real: real agents, real pytest, the CLI.

The scripted agent ends its turns before any run reports; a ``command:`` agent that takes a
while ends them with the starter's failing verdict in hand, which is what told a passing
reference, before the fix, that it had failed.

A SlopCodeBench-style challenge moves to the next checkpoint when the agent ends its turn, with
credit if the checkpoint passes and without if not. The turn's own test run must decide which
(docs/conditions.md, "Turn ends wait for their verdict"); and a deadline still pending when the
agent stops keeps the session open until it fires (docs/agents.md, "When the session ends"):
that is checked on the fakes (tests/orchestrator/test_run_composition.py); here, the
``process:`` agent that cannot take it.
"""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import pytest

from orchestrator.log.eventlog import LogReader
from tests.e2e.test_run import run

pytestmark = pytest.mark.slow

CHECKPOINTS = ("cp1", "cp2", "cp3")
#: Each checkpoint adds one function; its tests check that function alone.
FUNCTIONS = {"cp1": ("add", "a + b", 5), "cp2": ("sub", "a - b", -1), "cp3": ("mul", "a * b", 6)}


def triggers() -> str:
    """Per checkpoint, two turn-end triggers to the next: with credit, and moving on without."""
    out = []
    for turn, (current, following) in enumerate(itertools.pairwise(CHECKPOINTS), 1):
        for verdict, words in (("pass", "Well done."), ("not_pass", "Moving on: what still fails counts.")):
            following_name = FUNCTIONS[following][0]
            out += [
                f"    - id: {current}_{verdict}\n",
                f"      condition: turns >= {turn} and tests_{verdict}({current})\n",
                f"      unlocks: {following}\n",
                f'      message: "{words} Now add {following_name}(a, b) to calc.py."\n',
            ]
    return "".join(out)


def checkpoint_challenge(root: Path) -> Path:
    """Three checkpoints of calc.py; the reference's calc.py for each implements all so far."""
    phases = "".join(f"    - id: {cp}\n" for cp in CHECKPOINTS)
    root.mkdir()
    (root / "challenge.yaml").write_text(
        "challenge:\n  id: checkpoints\n  initial_briefing: Add add(a, b) to calc.py.\n"
        f"  phases:\n{phases}  triggers:\n{triggers()}"
        "  limits:\n    session: 1h\n    test_run: 2min\n"
    )
    (root / "workspace").mkdir(parents=True)
    (root / "workspace" / "calc.py").write_text('"""A calculator, one checkpoint at a time."""\n')
    done = []
    for cp in CHECKPOINTS:
        name, body, expected = FUNCTIONS[cp]
        (root / "tests" / cp).mkdir(parents=True)
        (root / "tests" / cp / f"test_{name}.py").write_text(
            f"from calc import {name}\n\n\ndef test_{name}():\n    assert {name}(2, 3) == {expected}\n"
        )
        done.append(f"def {name}(a, b):\n    return {body}\n")
        (root / "solutions" / "reference" / cp).mkdir(parents=True)
        (root / "solutions" / "reference" / cp / "calc.py").write_text("\n\n".join(done))
    return root


def test_the_reference_advances_on_each_turn_with_full_marks(tmp_path: Path) -> None:
    """Each turn's own passing run fires the pass trigger; no "moving on" fires; full marks."""
    done, folder, report = run(checkpoint_challenge(tmp_path / "challenge"), "scripted", tmp_path / "runs")
    assert done.returncode == 0, done.stderr
    records = list(LogReader(folder / "events.jsonl"))
    assert [r["trigger"] for r in records if r["kind"] == "trigger.fired"] == ["cp1_pass", "cp2_pass"]
    assert [r["phase"] for r in records if r["kind"] == "phase.unlocked"] == list(CHECKPOINTS)
    assert [r["reason"] for r in records if r["kind"] == "session.ended"] == ["agent_done"]
    assert report["score"]["total"] == 1.0
    assert all(phase["passed"] == phase["total"] == 1 for phase in report["phases"])


def deadline_challenge(root: Path) -> Path:
    """phase1 then phase2, on a 10-minute deadline only; a broken variant fails phase1."""
    root.mkdir()
    (root / "challenge.yaml").write_text(
        textwrap.dedent(
            """\
            challenge:
              id: late-deadline
              initial_briefing: Add add(a, b) to calc.py.
              phases:
                - id: phase1
                - id: phase2
              triggers:
                - id: deadline
                  condition: time_elapsed > 10min and tests_not_pass(phase1)
                  unlocks: phase2
                  kind: deadline
                  message: Time is up. Now add sub(a, b) to calc.py.
              limits:
                session: 1h
                test_run: 2min
            """
        )
    )
    (root / "workspace").mkdir(parents=True)
    (root / "workspace" / "calc.py").write_text("")
    for phase, name, expected in (("phase1", "add", 5), ("phase2", "sub", -1)):
        (root / "tests" / phase).mkdir(parents=True)
        (root / "tests" / phase / f"test_{name}.py").write_text(
            f"from calc import {name}\n\n\ndef test_{name}():\n    assert {name}(2, 3) == {expected}\n"
        )
    reference = root / "solutions" / "reference"
    (reference / "phase1").mkdir(parents=True)
    (reference / "phase1" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (reference / "phase2").mkdir(parents=True)
    (reference / "phase2" / "calc.py").write_text(
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    )
    wrong = root / "solutions" / "broken" / "wrong-add" / "phase1"
    wrong.mkdir(parents=True)
    (wrong / "calc.py").write_text("def add(a, b):\n    return a * b\n")
    return root


def deliberate_agent(root: Path, challenge: Path) -> Path:
    """A ``command:`` agent that thinks a while, writes the reference's calc.py for the checkpoint
    its message asks for and ends its turn: the starter's failing verdict is in hand by then."""
    script = ["#!/bin/sh", "sleep 2", 'message=$(cat "$CHANGEUP_MESSAGE_FILE")']
    for cp in reversed(CHECKPOINTS):
        name = FUNCTIONS[cp][0]
        solution = (challenge / "solutions" / "reference" / cp / "calc.py").read_text()
        script += [
            f'case "$message" in *" {name}(a, b)"*)',
            f"  cat > calc.py <<'EOF'\n{solution}EOF",
            "  exit 0;;",
            "esac",
        ]
    agent = root / "deliberate.sh"
    agent.write_text("\n".join(script) + "\n")
    agent.chmod(0o755)
    return agent


def test_a_turn_that_passes_is_not_told_it_failed_on_an_older_verdict(tmp_path: Path) -> None:
    """The agent ends each turn right after its edit, before that edit's run has reported: each
    turn's own run decides, so only the pass triggers fire and the work gets full marks."""
    challenge = checkpoint_challenge(tmp_path / "challenge")
    agent = deliberate_agent(tmp_path, challenge)
    done, folder, report = run(challenge, f"command:{agent}", tmp_path / "runs")
    assert done.returncode == 0, done.stderr
    records = list(LogReader(folder / "events.jsonl"))
    kinds = [r["kind"] for r in records]
    first_result = next(r for r in records if r["kind"] == "tests.result")
    assert first_result["phases"][0]["failed"] == 1, "the starter's verdict came first"
    assert kinds.index("tests.result") < kinds.index("agent.turn_ended")
    assert [r["trigger"] for r in records if r["kind"] == "trigger.fired"] == ["cp1_pass", "cp2_pass"]
    assert report["score"]["total"] == 1.0


def test_a_process_agent_that_exits_with_a_deadline_pending_ends_the_session_saying_so(
    tmp_path: Path,
) -> None:
    """A ``process:`` agent that exits can take no message: the session ends (agent_exited) at
    once, without waiting out the deadline, and the report names the trigger that never fired."""
    challenge = deadline_challenge(tmp_path / "challenge")
    done, folder, report = run(challenge, "process:read line; exit 0", tmp_path / "runs")
    assert done.returncode == 0, done.stderr
    records = list(LogReader(folder / "events.jsonl"))
    assert not [r for r in records if r["kind"] in ("clock.skipped", "trigger.fired")]
    [ended] = [r for r in records if r["kind"] == "session.ended"]
    assert (ended["reason"], ended["detail"]) == ("agent_exited", "never fired: deadline")
    assert ended["t"] < 60
    assert report["run"]["end_detail"] == "never fired: deadline"
    assert "never fired: deadline" in (folder / "report.md").read_text()

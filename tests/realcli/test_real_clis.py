"""The real agent CLIs, end to end: ``changeup run`` drives each pinned CLI, whose model is the
scripted server on 127.0.0.1.

Each CLI does export-time's two phases with its own tools (the server only says which call to
make), so full marks mean the real binary edited the workspace. The server's records show
what the CLI really sent: the second message inside the first one's conversation (or, for
mini-swe-agent, which cannot continue one, the first message sent again), the API key, and
the token figures each answer carried, which the report must repeat exactly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.modelserver import Exchange, Message, locate
from tests.modelserver.protocols import protocol_for
from tests.realcli.pins import CLIS
from tests.realcli.session import RealRun, expected_usage, interrupting_challenge, run_real
from tests.realcli.setups import FINAL, PRICES, SECRET, export_time_script

pytestmark = [pytest.mark.real_cli, pytest.mark.slow, pytest.mark.timeout(900)]

#: What each CLI reports of a turn's usage (the rest is missing: None), and how it prices it.
FIGURES: dict[str, tuple[str, ...]] = {
    "claude-code": ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"),
    "codex": ("input_tokens", "output_tokens", "cache_read_tokens"),
    "gemini-cli": ("input_tokens", "output_tokens", "cache_read_tokens"),
    # Aider reads cached tokens only from DeepSeek's and Anthropic's fields, not from OpenAI's
    # prompt_tokens_details: it says 0 were cached, and prices every prompt token in full.
    "aider": ("input_tokens", "output_tokens"),
    "mini-swe-agent": ("input_tokens", "output_tokens", "cache_read_tokens"),
    "openhands": (),
}
#: Claude Code's own list price of the model it is given (claude-sonnet-4-5, US$ per token).
CLAUDE_PRICES = {"input": 3e-06, "output": 15e-06, "cache_read": 3e-07, "cache_write": 3.75e-06}
CONTINUES = {"claude-code", "codex", "gemini-cli", "aider", "openhands"}


def conversation(exchange: Exchange) -> list[Message]:
    """The messages of a request, as the server read them."""
    protocol = protocol_for(exchange.path)
    assert protocol is not None
    assert isinstance(exchange.body, dict)
    return protocol.conversation(exchange.body)


def expected_cost(preset: str, usage: dict[str, int]) -> float | None:
    """What the CLI must say the turn cost, from the figures it was sent and its prices."""
    if preset == "claude-code":
        fresh = usage["input_tokens"] - usage["cache_read_tokens"] - usage["cache_write_tokens"]
        return (
            fresh * CLAUDE_PRICES["input"]
            + usage["output_tokens"] * CLAUDE_PRICES["output"]
            + usage["cache_read_tokens"] * CLAUDE_PRICES["cache_read"]
            + usage["cache_write_tokens"] * CLAUDE_PRICES["cache_write"]
        )
    if preset in ("aider", "mini-swe-agent"):  # LiteLLM, with the prices registered for the model
        cached = usage["cache_read_tokens"] if preset == "mini-swe-agent" else 0
        fresh = usage["input_tokens"] - cached
        return (
            fresh * PRICES["input"]
            + usage["output_tokens"] * PRICES["output"]
            + cached * PRICES["cache_read"]
        )
    return None


def check_continuity(preset: str, run: RealRun) -> None:
    """The second message reaches the CLI inside the first one's conversation (or with it resent)."""
    second = run.exchanges[[e.part for e in run.exchanges].index("phase2")]
    messages = conversation(second)
    script = export_time_script()
    place = locate(script, messages)
    assert place is not None
    assert (place.part.name, place.step) == ("phase2", 0), place
    first_marker = script.part("phase1").marker
    second_marker = script.part("phase2").marker
    if preset in CONTINUES:
        new = max(i for i, m in enumerate(messages) if m.role == "user" and second_marker in m.text)
        earlier = messages[:new]
        assert any(first_marker in m.text for m in earlier if m.role == "user"), "no first message in it"
        assert any(m.role == "assistant" for m in earlier), "no answer of turn 1 in it"
        assert any(m.role == "tool" for m in earlier) or preset == "aider", "no tool result of turn 1"
        assert any(FINAL["phase1"] in m.text for m in earlier), "no last words of turn 1 in it"
    else:
        assert not any(m.role == "assistant" for m in messages), "a new task, yet it holds earlier answers"
        last = [m for m in messages if m.role == "user"][-1].text
        assert first_marker in last, "the first message was not sent again"
        assert "[The new message]" in last


def check_tests_ran(preset: str, run: RealRun) -> None:
    """Each turn's ``python3 -m pytest`` ran in the agent's environment: its output came back."""
    if preset == "aider":  # Aider runs no commands of its model's
        return
    script = export_time_script()
    for part in script.parts:
        after = [type(step).__name__ for step in part.steps].index("Run") + 1
        asked = [e for e in run.exchanges if e.part == part.name and e.step == after]
        assert asked, f"no request after the tests of {part.name} ran"
        results = [m.text for m in conversation(asked[0]) if m.role == "tool"]
        assert results, f"no tool results in {part.name}"
        assert "1 passed" in results[-1], results[-1][-500:]


def check_secret(run: RealRun) -> None:
    """The CLI used the key; changeup kept it nowhere."""
    headers = " ".join(" ".join(e.headers.values()) for e in run.exchanges)
    assert SECRET in headers, "the CLI did not send the API key it was given"
    for path in run.kept():
        assert SECRET not in path.read_text(errors="replace"), path
    assert SECRET not in run.done.stdout + run.done.stderr


def check_usage(preset: str, run: RealRun) -> None:
    """Each turn's figures are exactly what the server sent in it; missing ones are None."""
    # Aider reports the usage of the calls of its main model alone, not of its commit messages.
    expected = expected_usage(run.exchanges, side=preset != "aider")
    rows = run.report["turns"]
    assert len(rows) == len(expected) == 2
    for row, sent in zip(rows, expected, strict=True):
        for figure in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
            if figure in FIGURES[preset]:
                assert row[figure] == sent[figure], (figure, row, sent)
            else:  # an API with no field for it, or a CLI that does not read it: none, or 0
                assert row[figure] in (None, 0), (figure, row, sent)
        cost = expected_cost(preset, sent)
        if cost is None:
            assert row["cost_usd"] is None, row
        elif preset == "aider":  # Aider prints its cost rounded to a few digits
            assert row["cost_usd"] == pytest.approx(cost, rel=0.05), (row, cost)
        else:
            assert row["cost_usd"] == pytest.approx(cost, rel=1e-9), (row, cost)
    totals = run.report["usage"]
    for figure in FIGURES[preset]:
        assert totals[figure]["total"] == sum(s[figure] for s in expected), figure


@pytest.mark.parametrize("preset", sorted(CLIS))
def test_a_real_cli_does_both_phases_in_one_conversation(tmp_path: Path, preset: str) -> None:
    """Full marks through the real CLI's own edits; the second message continues the first one's
    conversation; transcripts, summaries, usage and cost from its real output; no secret kept."""
    run = run_real(tmp_path, preset)
    assert run.done.returncode == 0, (run.done.stderr, run.exchanges[-3:])
    assert run.report["score"]["full_success"], run.report["score"]
    assert {e.part for e in run.exchanges} >= {"phase1", "phase2"}
    check_continuity(preset, run)

    summaries = run.summaries()
    assert [s["turn"] for s in summaries] == [1, 2]
    assert [s["final_message"] for s in summaries] == [FINAL["phase1"], FINAL["phase2"]]
    for summary in summaries:
        transcript = run.folder / summary["transcript"]
        assert transcript.stat().st_size > 0
    if preset in CONTINUES:
        assert summaries[0]["session"], "no id to continue the conversation was read from its output"
    check_usage(preset, run)
    check_tests_ran(preset, run)
    check_secret(run)

    manifest = json.loads((run.folder / "manifest.json").read_text())
    assert CLIS[preset].version in (manifest["agent"]["version"] or ""), manifest["agent"]
    assert run.report["scope"]["findings"] == [], "the CLI left files of its own in the workspace"
    # Its state (sessions, caches) went to the run's private HOME, not the HOME it was seeded from.
    assert run.home[1] == run.home[0], "the CLI wrote into the real HOME"
    kept_state = [p for p in (run.folder / "home").rglob("*") if p.is_file()]
    if preset in CONTINUES - {"aider"}:  # a session kept by the CLI itself, under its HOME
        assert kept_state, "no state of the CLI in the run's HOME"
    seeded = {r["kind"]: r for r in run.records}["agent.sandboxed"]["home_seeded"]
    assert not [name for name in seeded if (run.folder / "home" / name).exists()], "seeded copies left"


@pytest.mark.parametrize("preset", sorted(CLIS))
def test_an_interrupting_message_stops_the_real_cli_mid_turn(tmp_path: Path, preset: str) -> None:
    """Phase 1's tests pass while the CLI waits on its model; the interrupting message kills it,
    and the next turn goes on from the first turn's conversation to full marks."""
    run = run_real(tmp_path, preset, challenge=interrupting_challenge(tmp_path), hold=True)
    assert run.done.returncode == 0, (run.done.stderr, run.exchanges[-3:])
    # Killed mid-turn: it never asked for turn 1's last words (it was killed while its model
    # held its answer, or before it asked); a held request was let go by turn 2's.
    last = len(export_time_script(hold=True).part("phase1").steps) - 1
    assert not [e for e in run.exchanges if e.part == "phase1" and e.step == last]
    held = [e for e in run.exchanges if e.reply is not None and e.reply.hold]
    assert all(e.notes == ["held, then woken"] for e in held), held
    ends = [row["end"] for row in run.report["turns"]]
    assert ends == ["interrupted", ""], run.report["turns"]
    assert run.report["score"]["full_success"], run.report["score"]
    second = run.exchanges[[e.part for e in run.exchanges].index("phase2")]
    messages = conversation(second)
    if preset in CONTINUES:  # what turn 1 did before it was cut off is in turn 2's conversation
        assert sum(m.role == "assistant" for m in messages) >= 1, messages
        assert any(m.role == "tool" for m in messages) or preset == "aider", messages
    else:  # a new task, the first message sent again
        assert export_time_script().part("phase1").marker in messages[-1].text
    assert run.summaries()[1]["final_message"] == FINAL["phase2"]

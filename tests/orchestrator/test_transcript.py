"""Transcripts, the CLIs' output formats, preset command lines, and usage in the report."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from orchestrator.agents import AgentSpecError, parse_agent
from orchestrator.agents import transcript as transcript_module
from orchestrator.agents.presets import PRESETS, PresetAgent, with_context
from orchestrator.agents.presets.aider import AiderText
from orchestrator.agents.presets.claude_code import ClaudeStreamJson
from orchestrator.agents.presets.codex import CodexJsonl
from orchestrator.agents.presets.gemini_cli import GeminiJson
from orchestrator.agents.presets.mini_swe_agent import mini_trajectory_usage
from orchestrator.agents.presets.openhands import OpenHandsJsonl
from orchestrator.agents.redaction import Redactor
from orchestrator.agents.transcript import InlineBudget, LineParser, Transcript, Usage
from orchestrator.challenge.loader import load_challenge
from orchestrator.log.eventlog import LogContents
from orchestrator.log.records import decode_entry
from orchestrator.render.markdown import report_markdown
from orchestrator.scoring.report import build_report
from orchestrator.seams import AgentContext
from tests.cli import REPO

RECORDED = REPO / "tests" / "fixtures" / "agents" / "transcripts"
SECRET = "sk-test-secret-0123456789"


def recorded(name: str, *, in_json: bool = True, **values: str) -> str:
    """A recorded-format transcript with its placeholders filled (as the stand-ins do)."""
    text = (RECORDED / name).read_text()
    defaults = {"SESSION": "sess-1", "FINAL": "All done.", "CWD": "/ws", "MODEL": "m-1"}
    for key, value in {**defaults, **values}.items():
        text = text.replace("{{" + key + "}}", json.dumps(value)[1:-1] if in_json else value)
    return text


def parse(parser: LineParser, text: str) -> Usage:
    for line in text.splitlines():
        parser.feed(line)
    return parser.finish()


# --- the transcript -------------------------------------------------------------------------


class Lines:
    """A parser that keeps the lines it was fed."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def feed(self, line: str) -> None:
        self.lines.append(line)

    def finish(self) -> Usage:
        return Usage(final_message=self.lines[-1] if self.lines else None)


def transcript(tmp_path: Path, inline: int = 1000) -> tuple[Transcript, list[str], Lines]:
    emitted: list[str] = []
    lines = Lines()
    redact = Redactor({"ANTHROPIC_API_KEY": SECRET})
    kept = Transcript(
        tmp_path / "agent" / "turn-001.log",
        shown_as="agent/turn-001.log",
        emit=emitted.append,
        redact=redact,
        parser=lines,
        inline=inline,
    )
    return kept, emitted, lines


def test_a_secret_split_across_chunks_is_still_redacted(tmp_path: Path) -> None:
    """Output is redacted by lines, so a key cut in two by the pipe never reaches the log or the file."""
    kept, emitted, lines = transcript(tmp_path)
    for chunk in ("echo one\nkey: sk-test-sec", "ret-0123456789 done\n", "last line without end"):
        kept.write(chunk)
    kept.close()
    written = kept.path.read_text()
    assert SECRET not in written
    assert SECRET not in "".join(emitted)
    assert "key: [redacted $ANTHROPIC_API_KEY] done" in written
    assert lines.lines == ["echo one", "key: [redacted $ANTHROPIC_API_KEY] done", "last line without end"]
    assert "".join(emitted) == written


def test_a_long_line_without_end_is_written_in_pieces_without_leaking(tmp_path: Path) -> None:
    """Past the hold size the pending text is flushed, keeping back a tail that could start a secret."""
    kept, _, lines = transcript(tmp_path, inline=10**9)
    filler = "x" * 70_000
    kept.write(filler + "sk-test-secret-01")
    assert kept.path.read_text().startswith("x" * 1000)  # flushed before the line ended
    kept.write("23456789" + filler + "\n")
    kept.close()
    written = kept.path.read_text()
    assert SECRET not in written
    assert written == filler + "[redacted $ANTHROPIC_API_KEY]" + filler + "\n"
    assert lines.lines == [written.rstrip("\n")]


def test_output_past_the_budget_stays_in_the_file_and_the_log_names_it(tmp_path: Path) -> None:
    """The log gets the first INLINE characters and one line saying where the rest is."""
    kept, emitted, _ = transcript(tmp_path, inline=50)
    for number in range(20):
        kept.write(f"line {number:02d} of output\n")
    kept.close()
    inlined = "".join(emitted)
    assert inlined.startswith("line 00 of output\nline 01 of output\nline 02")
    assert inlined.endswith("[… the rest of this turn's output is in agent/turn-001.log]\n")
    assert inlined.count("the rest of this turn's output") == 1
    assert kept.truncated
    assert kept.path.read_text().count("of output") == 20


def test_the_file_and_the_parsed_lines_are_capped_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past its cap the transcript file keeps nothing more and says how much it left out; a line
    longer than the parser takes is passed over whole, and the lines after it are parsed."""
    monkeypatch.setattr(transcript_module, "TRANSCRIPT_CHARS", 100)
    monkeypatch.setattr(transcript_module, "LINE_CHARS", 30)
    kept, _, lines = transcript(tmp_path)
    kept.write("short\n" + "y" * 20)
    kept.write("y" * 20 + "\nafter\n" + "z" * 200 + "\n")
    kept.close()
    assert lines.lines == ["short", "after"]
    written = kept.path.read_text()
    assert written.startswith("short\n" + "y" * 40 + "\nafter\n")
    assert written.endswith("[… 154 more characters were not kept]\n")  # 254 written, 100 kept


def test_an_adapter_without_a_transcript_logs_a_turns_first_characters_and_says_the_rest() -> None:
    """InlineBudget: what fits, then nothing, and the note counts what was left out."""
    budget = InlineBudget(10)
    assert [budget.take("abcdef"), budget.take("ghijkl"), budget.take("mn")] == ["abcdef", "ghij", ""]
    assert budget.note() == "\n[… 4 more characters of this turn's output were left out of the log]\n"
    assert InlineBudget(10).note() == ""


# --- the CLIs' formats ----------------------------------------------------------------------


def test_claude_stream_json() -> None:
    """Session id from init/result, the result text, cost, and tokens with the cache counted in."""
    usage = parse(ClaudeStreamJson(), recorded("claude.stream.jsonl", FINAL="Implemented it."))
    assert usage == Usage(
        input_tokens=12 + 4021 + 13020,
        output_tokens=512,
        cache_read_tokens=13020,
        cache_write_tokens=4021,
        cost_usd=0.0421,
        final_message="Implemented it.",
        session="sess-1",
        model="m-1",
    )


def test_claude_resumed_session_costs_only_this_run() -> None:
    """A resumed session's total_cost_usd counts the earlier turns (2.1.332); this run's cost is
    the sum of model_usage_since_last_result."""
    result = {
        "type": "result",
        "session_id": "s",
        "result": "Done.",
        "total_cost_usd": 0.016815,
        "usage": {"input_tokens": 2120, "output_tokens": 140},
        "model_usage_since_last_result": {"m-1": {"costUSD": 0.00882}, "m-2": {"costUSD": 0.001}},
    }
    usage = parse(ClaudeStreamJson(), json.dumps(result))
    assert usage.cost_usd == pytest.approx(0.00982)
    assert (usage.input_tokens, usage.output_tokens) == (2120, 140)


def test_claude_cut_off_before_its_result_reports_no_figures() -> None:
    """An interrupted turn has no result event: tokens and cost are missing, not 0."""
    text = "\n".join(recorded("claude.stream.jsonl").splitlines()[:-1])
    usage = parse(ClaudeStreamJson(), text + "\nnot json at all\n{broken")
    assert usage.final_message == "All done."  # its last words so far
    assert usage.session == "sess-1"
    assert (usage.input_tokens, usage.output_tokens, usage.cost_usd) == (None, None, None)


def test_codex_jsonl() -> None:
    """Thread id, the last agent_message, and usage from turn.completed; Codex reports no cost."""
    usage = parse(CodexJsonl(), recorded("codex.jsonl", SESSION="thread-9"))
    assert usage == Usage(
        input_tokens=24763,
        output_tokens=122,
        cache_read_tokens=24448,
        final_message="All done.",
        session="thread-9",
    )


def test_codex_failure_is_the_final_message() -> None:
    """A failed turn says why."""
    lines = '{"type":"thread.started","thread_id":"t"}\n{"type":"turn.failed","error":{"message":"quota"}}\n'
    usage = parse(CodexJsonl(), lines)
    assert usage.final_message == "error: quota"
    assert usage.input_tokens is None


def test_gemini_json_after_other_output() -> None:
    """The JSON object is found after warnings printed before it (stderr is merged)."""
    text = "Loaded cached credentials.\n[WARN] something\n" + recorded("gemini.json", SESSION="g-1")
    usage = parse(GeminiJson(), text)
    assert usage == Usage(
        input_tokens=24939,
        output_tokens=20 + 154,
        cache_read_tokens=21263,
        final_message="All done.",
        session="g-1",
        model="gemini-2.5-pro",
    )


def test_gemini_without_json_reports_nothing() -> None:
    """A crash before the JSON: every figure missing."""
    assert parse(GeminiJson(), "Error: not authenticated\n") == Usage()


def test_aider_usage_lines() -> None:
    """Aider's rounded counts are summed over its LLM calls; the model comes from its banner."""
    text = recorded("aider.txt", in_json=False)
    text += "Tokens: 1,204 sent, 56 received. Cost: $0.0031 message, $0.0155 session.\n"
    usage = parse(AiderText(), text)
    assert usage.input_tokens == 2600 + 1204
    assert usage.output_tokens == 312 + 56
    assert usage.cache_read_tokens == 1900
    assert usage.cache_write_tokens == 0
    assert usage.cost_usd == pytest.approx(0.0155)
    assert usage.model == "anthropic/claude-sonnet-4-20250514"


def test_aider_final_message_leaves_out_its_edits(tmp_path: Path) -> None:
    """The words of Aider's answer, from the chat history, without the files it wrote whole."""
    agent = parse_agent("aider")
    assert isinstance(agent, PresetAgent)
    history = tmp_path / "aider.chat.history.md"
    history.write_text(
        "#### Do it.  \n\nexport_time.py\n```\ndef f():\n    return 1\n```\n\nDone: f returns 1.  \n\n"
        "> Tokens: 870 sent, 175 received.  \n> Applied edit to export_time.py  \n"
    )
    ctx = AgentContext(
        tmp_path, tmp_path, load_challenge(REPO / "challenges" / "export-time"), lambda e: None
    )
    usage = agent.read_usage(ctx, Usage())
    assert usage.final_message == "Done: f returns 1."
    assert usage.session == "aider.chat.history.md"


def test_aider_without_a_price_has_tokens_but_no_cost() -> None:
    """A model aider has no price for: the Cost part is absent, so cost is missing."""
    usage = parse(AiderText(), "Tokens: 12k sent, 1.5k received.\n")
    assert (usage.input_tokens, usage.output_tokens, usage.cost_usd) == (12000, 1500, None)


def test_openhands_jsonl_and_conversation_id() -> None:
    """The FinishAction's message and the id printed at exit."""
    usage = parse(OpenHandsJsonl(), recorded("openhands.jsonl", SESSION="abc123def4567890"))
    assert usage.final_message == "All done."
    assert usage.session == "abc123def4567890"
    assert usage.cost_usd is None


def test_openhands_older_pretty_printed_events() -> None:
    """Older versions print ``--JSON Event--`` and then an indented object."""
    event = {
        "kind": "MessageEvent",
        "source": "agent",
        "llm_message": {"role": "assistant", "content": "Hi."},
    }
    text = "--JSON Event--\n" + json.dumps(event, indent=2) + "\nConversation ID: 0123456789abcdef\n"
    usage = parse(OpenHandsJsonl(), text)
    assert (usage.final_message, usage.session) == ("Hi.", "0123456789abcdef")


def test_mini_trajectory(tmp_path: Path) -> None:
    """Cost and the last assistant message from the trajectory; no token counts in this one."""
    path = tmp_path / "mini-001.traj.json"
    path.write_text(recorded("mini.traj.json", FINAL=f"Done with {SECRET}"))
    usage = mini_trajectory_usage(path, Redactor({"OPENAI_API_KEY": SECRET}))
    assert usage.cost_usd == 0.0387
    assert usage.final_message == "Done with [redacted $OPENAI_API_KEY]"
    assert usage.model == "m-1"
    assert usage.input_tokens is None


def test_mini_tokens_from_the_api_responses_in_its_trajectory(tmp_path: Path) -> None:
    """Each model answer keeps its LiteLLM response: tokens are summed over them (2.4.6)."""
    answers = [
        {"role": "assistant", "content": "", "extra": {"response": {"usage": usage}}}
        for usage in (
            {"prompt_tokens": 410, "completion_tokens": 21, "prompt_tokens_details": {"cached_tokens": 5}},
            {"prompt_tokens": 420, "completion_tokens": 22, "prompt_tokens_details": None},
        )
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"info": {"model_stats": {"instance_cost": 0.01}}, "messages": answers}))
    usage = mini_trajectory_usage(path, Redactor({}))
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (830, 43, 5)
    assert usage.cache_write_tokens is None


def test_mini_zero_cost_after_calls_is_unknown_not_free(tmp_path: Path) -> None:
    """mini writes 0.0 for a model without a price; with calls made that is missing, not $0."""
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps({"info": {"model_stats": {"instance_cost": 0.0, "api_calls": 4}}, "messages": []})
    )
    assert mini_trajectory_usage(path, Redactor({})).cost_usd is None
    assert mini_trajectory_usage(tmp_path / "missing.json", Redactor({})) == Usage()


# --- presets --------------------------------------------------------------------------------

AIDER = (
    "aider --message-file '<AGENT_DIR>/message-<N>.md' --yes-always --no-pretty --no-stream --no-fancy-input "
    "--no-check-update --no-analytics --no-gitignore "
    "--chat-history-file '<AGENT_DIR>/aider.chat.history.md' "
    "--input-history-file '<AGENT_DIR>/aider.input.history'"
)
#: The documented command lines (docs/agents.md); a preset that drifts fails here first.
DOCUMENTED = {
    "claude-code": (
        "claude -p --output-format stream-json --verbose --dangerously-skip-permissions --model M",
        "claude -p --output-format stream-json --verbose --dangerously-skip-permissions --model M "
        "--resume '<SESSION>'",
    ),
    "codex": (
        "codex exec --json -c allow_login_shell=false --sandbox workspace-write --model M -",
        "codex exec --json -c allow_login_shell=false --sandbox workspace-write --model M "
        "resume '<SESSION>' -",
    ),
    "aider": (f"{AIDER} --model M", f"{AIDER} --restore-chat-history --model M"),
    "gemini-cli": (
        "gemini --output-format json --approval-mode yolo --skip-trust --model M "
        "--session-id '<NEW_SESSION>' '--prompt=<MESSAGE>'",
        "gemini --output-format json --approval-mode yolo --skip-trust --model M --resume '<SESSION>' "
        "'--prompt=<MESSAGE>'",
    ),
    "mini-swe-agent": (
        "mini -y --exit-immediately -o '<AGENT_DIR>/mini-<N>.traj.json' -m M -t '<MESSAGE>'",
        "mini -y --exit-immediately -o '<AGENT_DIR>/mini-<N>.traj.json' -m M -t '<MESSAGE>'",
    ),
    "openhands": (
        "openhands --headless --json --override-with-envs -f '<AGENT_DIR>/message-<N>.md'",
        "openhands --headless --json --override-with-envs --resume '<SESSION>' "
        "-f '<AGENT_DIR>/message-<N>.md'",
    ),
}


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_preset_command_lines_are_the_documented_ones(name: str) -> None:
    """First and continued turns, with a model; and the docs show exactly these lines."""
    agent = parse_agent(name, {"model": "M"})
    assert isinstance(agent, PresetAgent)
    first, continued = DOCUMENTED[name]
    assert shlex.join(agent.command_line()) == first
    assert shlex.join(agent.command_line(continued=True)) == continued
    docs = (REPO / "docs" / "agents.md").read_text()
    assert first.replace(" --model M", "").replace(" -m M", "") in docs


def test_preset_options() -> None:
    """binary, flags and unattended replace their parts; the name carries the model."""
    agent = parse_agent(
        "codex",
        {"binary": "/opt/codex", "model": "o3", "flags": "-c 'x=1'", "unattended": "--sandbox read-only"},
    )
    assert isinstance(agent, PresetAgent)
    assert agent.name == "codex:o3"
    assert agent.command_line() == [
        "/opt/codex",
        "exec",
        "--json",
        "-c",
        "allow_login_shell=false",
        "--sandbox",
        "read-only",
        "--model",
        "o3",
        "-c",
        "x=1",
        "-",
    ]


def test_bad_preset_options_are_spec_errors() -> None:
    """Unknown keys, options for a non-preset, and unbalanced quotes are refused with the choices."""
    with pytest.raises(AgentSpecError, match="takes no option colour"):
        parse_agent("claude-code", {"colour": "red"})
    with pytest.raises(AgentSpecError, match="--agent-option is for the presets"):
        parse_agent("scripted", {"model": "x"})
    with pytest.raises(AgentSpecError, match="cannot split"):
        parse_agent("aider", {"flags": "--x 'unbalanced"})
    assert parse_agent("human").name == "human"


def test_secret_flags_are_known_for_redaction() -> None:
    """A key passed as a flag is redacted like one in the environment."""
    agent = parse_agent("aider", {"flags": f"--openai-api-key {SECRET} --anthropic-api-key=abcdefgh123"})
    assert isinstance(agent, PresetAgent)
    assert agent.flag_secrets() == {"--openai-api-key": SECRET, "--anthropic-api-key": "abcdefgh123"}


def test_earlier_messages_are_sent_as_context_where_there_is_no_continuity() -> None:
    """Numbered, in order, then the new one."""
    text = with_context(["First.", "Second."], "Third.")
    assert text.index("## Message 1\n\nFirst.") < text.index("## Message 2\n\nSecond.") < text.index("Third.")


# --- usage in the report --------------------------------------------------------------------


def summary(turn: int, **fields: Any) -> dict[str, Any]:
    base = dict.fromkeys(("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"))
    return {"kind": "turn.summary", "turn": turn, "seconds": 2.0, **base, "cost_usd": None, **fields}


def test_report_totals_usage_and_shows_missing_figures_as_missing() -> None:
    """Totals cover the turns that reported; a figure nobody reported is None, never 0."""
    challenge = load_challenge(REPO / "challenges" / "export-time")
    records: list[dict[str, Any]] = [
        {"kind": "message.delivered", "trigger": "briefing"},
        summary(1, input_tokens=100, output_tokens=10, cost_usd=0.5, final_message="Did phase 1."),
        {"kind": "agent.turn_ended", "exit_code": 0, "reason": ""},
        {"kind": "message.delivered", "trigger": "revision"},
        summary(2, input_tokens=None, output_tokens=20, final_message="Did phase 2.\nDetails."),
        {"kind": "agent.turn_ended", "exit_code": 0, "reason": "interrupted"},
        {"kind": "message.delivered", "trigger": "deadline"},
    ]
    for seq, record in enumerate(records, 1):
        record.update(seq=seq, t=float(seq))
    report = build_report(
        challenge, LogContents({"agent": "claude-code"}, [decode_entry(r) for r in records])
    )
    first, second, third = report.turns
    assert (first.messages, first.final_message, first.cost_usd) == (
        ["briefing"],
        "Did phase 1.",
        0.5,
    )
    assert (second.end, second.input_tokens) == ("interrupted", None)
    assert (third.end, third.reported, third.seconds) == ("unfinished", False, None)
    usage = report.usage
    assert usage.input_tokens.model_dump() == {"total": 100, "turns_reported": 1, "missing_turns": [2, 3]}
    assert usage.output_tokens.total == 30
    assert usage.cache_read_tokens.model_dump() == {
        "total": None,
        "turns_reported": 0,
        "missing_turns": [1, 2, 3],
    }
    markdown = report_markdown(report)
    assert "## Agent turns" in markdown
    assert "cost $0.5000 (turns 2, 3 did not report)" in markdown
    assert "| 2 | revision | 2.0s (interrupted) | missing | 20 | missing | Did phase 2. |" in markdown


def test_a_report_without_summaries_has_no_usage_section() -> None:
    """Scripted and command agents report no usage: the Markdown is as before."""
    challenge = load_challenge(REPO / "challenges" / "export-time")
    records = [
        {"seq": 1, "t": 0.1, "kind": "message.delivered", "trigger": "briefing"},
        {"seq": 2, "t": 0.5, "kind": "agent.turn_ended", "exit_code": 0, "reason": ""},
    ]
    report = build_report(challenge, LogContents({}, [decode_entry(r) for r in records]))
    assert report.turns[0].seconds == 0.4
    assert report.usage.cost_usd.total is None
    assert "Agent turns" not in report_markdown(report)

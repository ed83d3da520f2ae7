"""The ATIF export of recorded model traffic: every provider's answer shape, the tool results sent
back as observations, the messages of triggers as user steps, held against ATIF's own rules.

Each document is checked against ATIF's rules (:mod:`tests.atif`). The answers are the scripted
model server's (``tests.modelserver``), in each API's own shape, recorded by the gateway's
:class:`~orchestrator.gateway.recording.Recorder`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from orchestrator.gateway.recording import Recorder
from orchestrator.gateway.trajectory import trajectory
from orchestrator.log.eventlog import LogContents
from orchestrator.log.records import Entry, ModelRequest
from tests.atif import Trajectory
from tests.modelserver.dialects import Call, Reply
from tests.modelserver.protocols import Tokens, protocol_for
from triggers import MessageDelivered, MessageQueued, TriggerFired

#: One request per API, each answering with a tool call, then one sending its result back.
APIS = {
    "anthropic": ("/anthropic/v1/messages", "claude-haiku-4-5"),
    "chat": ("/openai/v1/chat/completions", "gpt-5-mini"),
    "responses": ("/openai/v1/responses", "gpt-5-mini"),
    "gemini": ("/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "gemini-2.5-flash"),
}


def _body(api: str, model: str, result: tuple[str, str] | None) -> dict[str, Any]:
    """A request of ``api``; with ``result`` (call id or name, content), it sends a tool result."""
    if api == "anthropic":
        sent: list[Any] = (
            [{"type": "tool_result", "tool_use_id": result[0], "content": result[1]}] if result else []
        )
        return {"model": model, "stream": True, "messages": [{"role": "user", "content": sent or "Go"}]}
    if api == "chat":
        tool = [{"role": "tool", "tool_call_id": result[0], "content": result[1]}] if result else []
        return {"model": model, "stream": True, "messages": [{"role": "user", "content": "Go"}, *tool]}
    if api == "responses":
        output = (
            [{"type": "function_call_output", "call_id": result[0], "output": result[1]}] if result else []
        )
        return {"model": model, "input": [{"role": "user", "content": "Go"}, *output]}
    # Gemini CLI names a call its answer left unnamed with an id of its own: matched by name.
    if result is None:
        return {"contents": [{"role": "user", "parts": [{"text": "Go"}]}]}
    response = {"name": result[0], "id": f"{result[0]}_1796356471348_0", "response": {"out": result[1]}}
    return {"contents": [{"role": "user", "parts": [{"functionResponse": response}]}]}


def _provider(api: str) -> str:
    return "openai" if api in ("chat", "responses") else api


@pytest.mark.parametrize("api", list(APIS))
def test_each_api_s_answer_becomes_an_agent_step_with_its_tool_call_and_observation(
    tmp_path: Path, api: str
) -> None:
    """A tool call read from the recorded answer (streamed or whole), its result from the next
    request; a briefing and a trigger's message as user steps naming the trigger and its cause."""
    target, model = APIS[api]
    recorder = Recorder(tmp_path / "model", ["sk-real"], "changeup-session-x")
    path = target.split("?", 1)[0]
    protocol = protocol_for(path)
    assert protocol is not None
    entries: list[Entry] = []

    def add(record: Any) -> None:
        entries.append(Entry(len(entries) + 1, float(len(entries)), record))

    add(MessageQueued("briefing", "briefing", "Implement add."))
    add(MessageDelivered(0.0, "briefing"))
    call_id = ""
    for number, reply in ((1, Reply("Writing it.", Call("write", {"path": "a.py"}))), (2, Reply("Done."))):
        name = "write" if api == "gemini" else call_id
        body = _body(api, model, (name, "wrote 3 bytes") if number == 2 else None)
        recorder.request(
            number, "POST", target, [("x-api-key", "changeup-session-x")], json.dumps(body).encode()
        )
        answer = protocol.answer(body, path, reply, Tokens(input=100 * number, output=7, cache_read=5))
        recorder.response(number, 200, [("content-type", answer.content_type)])
        for chunk in answer.chunks:
            recorder.chunk(number, chunk)
        add(
            ModelRequest(
                number, _provider(api), model, target, 200, True, "answered", 0.1, 100 * number, 5, 0, 7
            )
        )
        if number == 1:
            steps = trajectory(LogContents({}, entries), tmp_path / "model", "s", "1")["steps"]
            call_id = steps[-1]["tool_calls"][0]["tool_call_id"]
            add(TriggerFired("revision", "phase1_tests_pass held on tests.result at 2s"))
            add(MessageQueued("revision", "revision", "Now in UTC."))
            add(MessageDelivered(3.0, "revision"))
    header = {"agent": "claude-code", "challenge": "export-time"}
    document = trajectory(LogContents(header, entries), tmp_path / "model", "run-1", "2.0.1")
    Trajectory.model_validate(document)
    steps = document["steps"]
    assert [s["source"] for s in steps] == ["user", "agent", "user", "agent"]
    assert steps[0]["extra"]["trigger"] == "briefing"
    assert steps[2]["message"] == "Now in UTC."
    assert (steps[2]["extra"]["trigger"], steps[2]["extra"]["cause"]) == (
        "revision",
        "phase1_tests_pass held on tests.result at 2s",
    )
    (tool,) = steps[1]["tool_calls"]
    assert (tool["function_name"], tool["arguments"]) == ("write", {"path": "a.py"})
    assert steps[1]["observation"]["results"] == [{"source_call_id": call_id, "content": tool_content(api)}]
    assert "observation" not in steps[3]
    assert (steps[1]["message"], steps[3]["message"]) == ("Writing it.", "Done.")
    assert steps[1]["metrics"]["prompt_tokens"] == 100
    assert document["final_metrics"]["total_prompt_tokens"] == 300
    assert document["agent"] == {"name": "claude-code", "version": "2.0.1", "model_name": model}


def tool_content(api: str) -> str:
    """The result's content as the export gives it: Gemini's response object is JSON."""
    return json.dumps({"out": "wrote 3 bytes"}) if api == "gemini" else "wrote 3 bytes"

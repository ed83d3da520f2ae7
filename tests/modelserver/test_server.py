"""The scripted model server on its own: where it places a request, and what it answers on the wire."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any

import pytest

from tests.modelserver import DIALECTS, Message, ModelServer, Part, Read, Say, Script, Write, locate

SCRIPT = Script(
    (
        Part("one", "first marker", (Read("a.py"), Write("a.py", "x = 1\n"), Say("One done."))),
        Part("two", "second marker", (Write("a.py", "x = 2\n"), Say("Two done."))),
    )
)


def test_a_request_is_placed_by_the_last_marked_user_message_and_the_answers_after_it() -> None:
    """The step is the number of model answers after the message that names the part."""
    asked = [Message("user", "do it: first marker"), Message("assistant", ""), Message("tool", "ok")]
    place = locate(SCRIPT, asked)
    assert place is not None
    assert (place.part.name, place.step) == ("one", 1)
    later = [*asked, Message("assistant", "One done."), Message("user", "now: second marker")]
    place = locate(SCRIPT, later)
    assert place is not None
    assert (place.part.name, place.step) == ("two", 0)


def test_resent_messages_are_placed_by_the_marker_that_comes_last() -> None:
    """A CLI that cannot continue sends the earlier message before the new one, in one text."""
    place = locate(SCRIPT, [Message("user", "earlier: first marker\n\nnew: second marker")])
    assert place is not None
    assert place.part.name == "two"
    assert locate(SCRIPT, [Message("user", "a title, please")]) is None


def post(url: str, path: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[int, str]:
    """One POST to the server; its status and body."""
    connection = http.client.HTTPConnection(url.removeprefix("http://"), timeout=30)
    connection.request(
        "POST", path, json.dumps(body), {"Content-Type": "application/json", **(headers or {})}
    )
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    return response.status, text


def test_anthropic_streams_a_tool_call_with_the_usage_it_chose(tmp_path: Path) -> None:
    """A streamed Messages answer: the Read call with an absolute path, the figures in
    message_start and message_delta; the request is recorded with its headers."""
    workspace = tmp_path / "runs" / "r-1" / "workspace"
    body = {
        "model": "m",
        "stream": True,
        "system": f"cwd is {workspace}",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "go: first marker"}]}],
    }
    with ModelServer(SCRIPT, DIALECTS["claude-code"], runs=tmp_path / "runs") as server:
        status, text = post(server.url, "/v1/messages?beta=true", body, {"x-api-key": "k-123"})
        exchanges = list(server.exchanges)
    assert status == 200
    events = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start"
    assert kinds[-2:] == ["message_delta", "message_stop"]
    start = next(e for e in events if e["type"] == "content_block_start")
    assert start["content_block"]["name"] == "Read"
    delta = next(e for e in events if e["type"] == "content_block_delta")
    assert json.loads(delta["delta"]["partial_json"]) == {"file_path": f"{workspace}/a.py"}
    sent = exchanges[0].tokens
    assert sent is not None
    assert events[0]["message"]["usage"]["input_tokens"] == sent.fresh
    assert events[-2]["usage"]["output_tokens"] == sent.output
    assert (exchanges[0].part, exchanges[0].step, exchanges[0].headers["x-api-key"]) == ("one", 0, "k-123")


@pytest.mark.parametrize("stream", [False, True])
def test_chat_completions_answer_the_final_words_with_usage(stream: bool) -> None:
    """Chat Completions, whole or in chunks ending in [DONE]: mini's finishing command, usage."""
    body = {
        "model": "m",
        "stream": stream,
        "messages": [
            {"role": "user", "content": "go: second marker"},
            {"role": "assistant", "content": "", "tool_calls": []},
            {"role": "tool", "content": "written"},
        ],
    }
    with ModelServer(SCRIPT, DIALECTS["mini-swe-agent"]) as server:
        status, text = post(server.url, "/v1/chat/completions", body)
        sent = server.answered()[0].tokens
    assert status == 200
    assert sent is not None
    if stream:
        chunks = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {")]
        assert text.rstrip().endswith("data: [DONE]")
        call = chunks[0]["choices"][0]["delta"]["tool_calls"][0]
        usage = chunks[-1]["usage"]
    else:
        whole = json.loads(text)
        call = whole["choices"][0]["message"]["tool_calls"][0]
        usage = whole["usage"]
    assert "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in json.loads(call["function"]["arguments"])["command"]
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (sent.input, sent.output)


def test_the_server_is_bounded_in_requests() -> None:
    """Past its budget every request gets 503; an unknown endpoint 404."""
    with ModelServer(SCRIPT, DIALECTS["codex"], max_requests=1) as server:
        assert post(server.url, "/v1/nowhere", {})[0] == 404
        assert post(server.url, "/v1/responses", {"input": "first marker"})[0] == 503

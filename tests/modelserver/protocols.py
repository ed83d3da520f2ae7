"""The providers' wire formats: a request's conversation read out, a reply written back.

Each :class:`Protocol` knows one API as the CLIs call it, streaming included:

- Anthropic Messages (``POST /v1/messages``, server-sent events when ``stream`` is true);
- OpenAI Responses (``POST /v1/responses``, events ``response.created`` …
  ``response.completed``) and Chat Completions (``POST /v1/chat/completions``, chunks then
  ``[DONE]`` when streaming);
- the Gemini API (``POST /v1beta/models/M:generateContent`` and ``:streamGenerateContent?alt=sse``).

Every answer carries the token figures it is given (:class:`Tokens`), in the fields that API
reports usage in, so a test can hold a CLI's report to exactly what it was sent.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

from tests.modelserver.dialects import Reply
from tests.modelserver.script import Message

__all__ = ["PROTOCOLS", "Answer", "Protocol", "Tokens", "protocol_for"]


@dataclass(frozen=True, slots=True)
class Tokens:
    """The usage one answer reports: ``input`` counts every prompt token, cached or not."""

    input: int
    output: int
    cache_read: int = 0
    cache_write: int = 0

    @property
    def fresh(self) -> int:
        """Prompt tokens neither read from nor written to a cache."""
        return self.input - self.cache_read - self.cache_write


@dataclass(frozen=True, slots=True)
class Answer:
    """What goes back: a content type and the body, in the chunks it is sent in."""

    content_type: str
    chunks: list[bytes]


def _sse(events: list[tuple[str | None, dict[str, Any] | str]]) -> list[bytes]:
    out = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "").encode() + f"data: {payload}\n\n".encode())
    return out


def _text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            _text_of(b.get("text", b.get("content", ""))) for b in content if isinstance(b, dict)
        )
    return ""


def _call_id() -> str:
    return uuid.uuid4().hex[:24]


class Protocol:
    """One API: reads a request's conversation and writes an answer."""

    name: str

    def conversation(self, body: dict[str, Any]) -> list[Message]:
        """The request's messages, as user texts, model answers and tool results."""
        raise NotImplementedError

    def answer(self, body: dict[str, Any], path: str, reply: Reply, tokens: Tokens) -> Answer:
        """The reply in this API's format (streamed when the request asks for it)."""
        raise NotImplementedError


class Anthropic(Protocol):
    """Anthropic Messages: content blocks, ``tool_use``/``tool_result``; usage in ``message_start``
    and ``message_delta``."""

    name = "anthropic"

    def conversation(self, body: dict[str, Any]) -> list[Message]:
        """``messages``: a user message holding a ``tool_result`` block is a tool result."""
        out = []
        for message in body.get("messages") or []:
            content = message.get("content")
            blocks = content if isinstance(content, list) else []
            if message.get("role") == "assistant":
                out.append(Message("assistant", _text_of(content)))
            elif any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
                out.append(Message("tool", _text_of(content)))
            elif message.get("role") == "user":
                out.append(Message("user", _text_of(content)))
        return _merge_answers(out)

    def answer(self, body: dict[str, Any], path: str, reply: Reply, tokens: Tokens) -> Answer:
        """A message, or its stream of events."""
        blocks: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
        if reply.call is not None:
            blocks.append({"type": "tool_use", "id": f"toolu_{_call_id()}", "name": reply.call.name})
        usage = {
            "input_tokens": tokens.fresh,
            "cache_read_input_tokens": tokens.cache_read,
            "cache_creation_input_tokens": tokens.cache_write,
        }
        stop = "tool_use" if reply.call is not None else "end_turn"
        message = {
            "id": f"msg_{_call_id()}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", ""),
            "stop_reason": None,
            "stop_sequence": None,
        }
        if not body.get("stream"):
            full = [
                {**b, "input": reply.call.arguments} if b["type"] == "tool_use" and reply.call else b
                for b in blocks
            ]
            whole = {
                **message,
                "content": full,
                "stop_reason": stop,
                "usage": {**usage, "output_tokens": tokens.output},
            }
            return Answer("application/json", [json.dumps(whole).encode()])
        events: list[tuple[str | None, dict[str, Any] | str]] = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {**message, "content": [], "usage": {**usage, "output_tokens": 1}},
                },
            )
        ]
        for index, block in enumerate(blocks):
            start: dict[str, Any]
            delta: dict[str, Any]
            if block["type"] == "text":
                start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
            else:
                assert reply.call is not None
                start = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(reply.call.arguments)}
            events += [
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                ),
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]
        events += [
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": tokens.output},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        return Answer("text/event-stream", _sse(events))


class OpenAI(Protocol):
    """OpenAI Responses (``input`` items) and Chat Completions (``messages``), told apart by path."""

    name = "openai"

    def conversation(self, body: dict[str, Any]) -> list[Message]:
        """Responses ``input`` items or chat ``messages``."""
        out = []
        if "input" in body:
            items = (
                body["input"]
                if isinstance(body["input"], list)
                else [{"role": "user", "content": body["input"]}]
            )
            for item in items:
                kind = item.get("type", "message")
                if kind == "message" and item.get("role") == "user":
                    out.append(Message("user", _text_of(item.get("content"))))
                elif (kind == "message" and item.get("role") == "assistant") or kind in (
                    "function_call",
                    "custom_tool_call",
                ):
                    out.append(Message("assistant", _text_of(item.get("content"))))
                elif kind.endswith("_output"):
                    out.append(Message("tool", _text_of(item.get("output"))))
            return _merge_answers(out)
        for message in body.get("messages") or []:
            role = message.get("role")
            if role in ("user", "assistant"):
                out.append(Message(role, _text_of(message.get("content"))))
            elif role == "tool":
                out.append(Message("tool", _text_of(message.get("content"))))
        return out

    def answer(self, body: dict[str, Any], path: str, reply: Reply, tokens: Tokens) -> Answer:
        """A response or chat completion, streamed when asked."""
        if path.rstrip("/").endswith("/responses"):
            return self._response(body, reply, tokens)
        return self._chat(body, reply, tokens)

    def _response(self, body: dict[str, Any], reply: Reply, tokens: Tokens) -> Answer:
        items: list[dict[str, Any]] = []
        if reply.text:
            items.append(
                {
                    "type": "message",
                    "id": f"msg_{_call_id()}",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
                }
            )
        if reply.call is not None:
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_{_call_id()}",
                    "status": "completed",
                    "call_id": f"call_{_call_id()}",
                    "name": reply.call.name,
                    "arguments": json.dumps(reply.call.arguments),
                }
            )
        usage = {
            "input_tokens": tokens.input,
            "input_tokens_details": {"cached_tokens": tokens.cache_read},
            "output_tokens": tokens.output,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": tokens.input + tokens.output,
        }
        response = {
            "id": f"resp_{_call_id()}",
            "object": "response",
            "model": body.get("model", ""),
            "status": "in_progress",
            "output": [],
        }
        done = {**response, "status": "completed", "output": items, "usage": usage}
        if not body.get("stream"):
            return Answer("application/json", [json.dumps(done).encode()])
        events: list[tuple[str | None, dict[str, Any] | str]] = [
            ("response.created", {"type": "response.created", "response": response})
        ]
        for index, item in enumerate(items):
            events.append(
                (
                    "response.output_item.added",
                    {"type": "response.output_item.added", "output_index": index, "item": item},
                )
            )
            if item["type"] == "message":
                events.append(
                    (
                        "response.output_text.delta",
                        {
                            "type": "response.output_text.delta",
                            "item_id": item["id"],
                            "output_index": index,
                            "content_index": 0,
                            "delta": reply.text,
                        },
                    )
                )
            events.append(
                (
                    "response.output_item.done",
                    {"type": "response.output_item.done", "output_index": index, "item": item},
                )
            )
        events.append(("response.completed", {"type": "response.completed", "response": done}))
        return Answer("text/event-stream", _sse(events))

    def _chat(self, body: dict[str, Any], reply: Reply, tokens: Tokens) -> Answer:
        calls = []
        if reply.call is not None:
            calls.append(
                {
                    "index": 0,
                    "id": f"call_{_call_id()}",
                    "type": "function",
                    "function": {"name": reply.call.name, "arguments": json.dumps(reply.call.arguments)},
                }
            )
        usage = {
            "prompt_tokens": tokens.input,
            "completion_tokens": tokens.output,
            "total_tokens": tokens.input + tokens.output,
            "prompt_tokens_details": {"cached_tokens": tokens.cache_read},
        }
        finish = "tool_calls" if calls else "stop"
        head = {"id": f"chatcmpl-{_call_id()}", "created": 1_700_000_000, "model": body.get("model", "")}
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
            if calls:
                message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
            whole = {
                **head,
                "object": "chat.completion",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            }
            return Answer("application/json", [json.dumps(whole).encode()])
        chunk = {**head, "object": "chat.completion.chunk"}
        delta: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if calls:
            delta["tool_calls"] = calls
        events: list[tuple[str | None, dict[str, Any] | str]] = [
            (None, {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
            (None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
            (None, {**chunk, "choices": [], "usage": usage}),
            (None, "[DONE]"),
        ]
        return Answer("text/event-stream", _sse(events))


class Gemini(Protocol):
    """The Gemini API: ``contents`` of ``parts`` (``functionCall``, ``functionResponse``), and
    ``usageMetadata``."""

    name = "gemini"

    def conversation(self, body: dict[str, Any]) -> list[Message]:
        """``contents``: a user turn of function responses is a tool result."""
        out = []
        for content in body.get("contents") or []:
            parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
            texts = [p["text"] if isinstance(p.get("text"), str) else "" for p in parts]
            texts += [
                json.dumps(p["functionResponse"].get("response")) for p in parts if "functionResponse" in p
            ]
            text = "\n".join(t for t in texts if t)
            if content.get("role") == "model":
                out.append(Message("assistant", text))
            elif any("functionResponse" in p for p in parts):
                out.append(Message("tool", text))
            else:
                out.append(Message("user", text))
        return _merge_answers(out)

    def answer(self, body: dict[str, Any], path: str, reply: Reply, tokens: Tokens) -> Answer:
        """A ``GenerateContentResponse``, or one as a server-sent event."""
        parts: list[dict[str, Any]] = [{"text": reply.text}] if reply.text else []
        if reply.call is not None:
            parts.append({"functionCall": {"name": reply.call.name, "args": reply.call.arguments}})
        response = {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": tokens.input,
                "candidatesTokenCount": tokens.output,
                "cachedContentTokenCount": tokens.cache_read,
                "totalTokenCount": tokens.input + tokens.output,
            },
            "modelVersion": path.split("/models/", 1)[-1].split(":", 1)[0],
        }
        if ":streamGenerateContent" in path:
            return Answer("text/event-stream", _sse([(None, response)]))
        return Answer("application/json", [json.dumps(response).encode()])


def _merge_answers(messages: list[Message]) -> list[Message]:
    """One model answer per turn of the conversation: a reply sent as several items (words, then
    a tool call) is one answer, as the script counts them."""
    out: list[Message] = []
    for message in messages:
        if out and message.role == "assistant" and out[-1].role == "assistant":
            out[-1] = Message("assistant", f"{out[-1].text}\n{message.text}".strip())
        else:
            out.append(message)
    return out


PROTOCOLS: tuple[Protocol, ...] = (Anthropic(), OpenAI(), Gemini())


def protocol_for(path: str) -> Protocol | None:
    """The API a request path belongs to (None: no API this server speaks)."""
    if "/messages" in path and "count_tokens" not in path:
        return PROTOCOLS[0]
    if path.split("?", 1)[0].rstrip("/").endswith(("/responses", "/chat/completions")):
        return PROTOCOLS[1]
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return PROTOCOLS[2]
    return None

"""A run's recorded model traffic as an ATIF trajectory (Harbor's Agent Trajectory Interchange Format).

ATIF (``ATIF-v1.4``, Harbor's RFC 0001) is one JSON object: ``schema_version``, ``session_id``,
``agent`` (``name``, ``version``, ``model_name``), ``steps`` and ``final_metrics``. Each step has
``step_id`` (from 1), ``source`` (``system``, ``user`` or ``agent``) and ``message``; an agent step
may carry ``model_name``, ``reasoning_content``, ``tool_calls`` (``tool_call_id``,
``function_name``, ``arguments``: an object), ``observation`` (``results``: ``source_call_id``,
``content``) and ``metrics`` (``prompt_tokens`` every prompt token, ``cached_tokens`` the cached
part of them, ``completion_tokens``, ``cost_usd``); every step may carry ``extra``.

:func:`trajectory` builds it from a run's event log and its ``model/`` recording
(:mod:`.recording`), in the log's order:

- each message delivered to the agent (``message.delivered``) is a ``user`` step, its text the
  queued message's, ``extra`` naming the ``trigger`` (``briefing`` for the first), its ``kind``,
  the ``cause`` it fired on (``trigger.fired``) and the session time ``t``;
- each answered model request (``model.request``) is an ``agent`` step: the words, reasoning and
  tool calls of its recorded answer (read from its JSON or its server-sent events, in each
  provider's shape), the provider's usage figures, and ``extra`` naming the request's number;
  the results of its tool calls, found in the later requests that send them back to the model,
  are its ``observation``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.gateway.recording import Recorded, read_exchanges
from orchestrator.log.eventlog import LogContents
from orchestrator.log.records import ModelRequest
from triggers import MessageDelivered, MessageQueued, TriggerFired

__all__ = ["SCHEMA_VERSION", "Answer", "read_answer", "tool_results", "trajectory"]

SCHEMA_VERSION = "ATIF-v1.4"


@dataclass(slots=True)
class Answer:
    """What a model said in one answer: words, reasoning, and tool calls (id, name, arguments)."""

    text: str = ""
    reasoning: str = ""
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)


def trajectory(contents: LogContents, recording: Path, session_id: str, agent_version: str) -> dict[str, Any]:
    """The ATIF trajectory of a run whose log is ``contents`` and whose recording is ``recording``."""
    exchanges = {e.number: e for e in read_exchanges(recording)} if recording.is_dir() else {}
    queued: dict[str, MessageQueued] = {}
    causes: dict[str, str] = {}
    steps: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}  # a tool call with no result yet: the step that made it
    pending: dict[str, list[str]] = {}  # by tool name, the calls with no result (Gemini's have no id)
    models: list[str] = []
    for entry in contents.entries:
        record = entry.record
        if isinstance(record, MessageQueued):
            queued[record.trigger] = record
        elif isinstance(record, TriggerFired):
            causes[record.trigger] = record.cause
        elif isinstance(record, MessageDelivered):
            message = queued.get(record.trigger)
            extra = {"trigger": record.trigger, "kind": message.message_kind if message else "", "t": entry.t}
            if record.trigger in causes:
                extra["cause"] = causes[record.trigger]
            steps.append({"source": "user", "message": message.text if message else "", "extra": extra})
        elif isinstance(record, ModelRequest) and record.outcome == "answered" and record.number in exchanges:
            exchange = exchanges[record.number]
            for call_id, name, content in tool_results(exchange):
                # A result is re-sent with every later request: the first one is the observation.
                call_id = call_id if call_id in calls else next(iter(pending.get(name, [])), "")
                step = calls.pop(call_id, None)
                if step is not None:
                    step.setdefault("observation", {"results": []})["results"].append(
                        {"source_call_id": call_id, "content": content}
                    )
                    for waiting in pending.values():
                        if call_id in waiting:
                            waiting.remove(call_id)
            answer = read_answer(record.provider, exchange)
            step = _agent_step(record, answer, entry.t)
            for call_id, name, _ in answer.calls:
                calls.setdefault(call_id, step)
                pending.setdefault(name, []).append(call_id)
            models += [record.model] if record.model else []
            steps.append(step)
    for number, step in enumerate(steps, 1):
        step["step_id"] = number
    agent: dict[str, Any] = {"name": str(contents.header.get("agent", "")), "version": agent_version}
    if models:
        agent["model_name"] = max(set(models), key=models.count)
    return {
        "schema_version": SCHEMA_VERSION,
        "session_id": session_id,
        "agent": agent,
        "steps": [{"step_id": s.pop("step_id"), **s} for s in steps],
        "final_metrics": _final(steps),
        "extra": {"challenge": contents.header.get("challenge", ""), "exporter": "changeup"},
    }


def _agent_step(record: ModelRequest, answer: Answer, t: float) -> dict[str, Any]:
    step: dict[str, Any] = {"source": "agent", "message": answer.text}
    if record.model:
        step["model_name"] = record.model
    if answer.reasoning:
        step["reasoning_content"] = answer.reasoning
    if answer.calls:
        step["tool_calls"] = [
            {"tool_call_id": i, "function_name": name, "arguments": arguments}
            for i, name, arguments in answer.calls
        ]
    metrics: dict[str, Any] = {}
    if record.input_tokens is not None:
        metrics["prompt_tokens"] = record.input_tokens
    if record.cache_read_tokens is not None:
        metrics["cached_tokens"] = record.cache_read_tokens
    if record.output_tokens is not None:
        metrics["completion_tokens"] = record.output_tokens
    if record.cost_usd is not None:
        metrics["cost_usd"] = record.cost_usd
    figures = {"cache_write_tokens": record.cache_write_tokens, "reasoning_tokens": record.reasoning_tokens}
    if any(v is not None for v in figures.values()):
        metrics["extra"] = {k: v for k, v in figures.items() if v is not None}
    if metrics:
        step["metrics"] = metrics
    extra = {"request": record.number, "provider": record.provider, "path": record.path, "t": t}
    step["extra"] = extra
    return step


def _final(steps: list[dict[str, Any]]) -> dict[str, Any]:
    metrics = [s["metrics"] for s in steps if "metrics" in s]
    final: dict[str, Any] = {"total_steps": len(steps)}
    for total, name in (
        ("total_prompt_tokens", "prompt_tokens"),
        ("total_completion_tokens", "completion_tokens"),
        ("total_cached_tokens", "cached_tokens"),
        ("total_cost_usd", "cost_usd"),
    ):
        values = [m[name] for m in metrics if name in m]
        if values:
            final[total] = sum(values)
    return final


# --- an answer, in each provider's shape ------------------------------------------------------


def _events(exchange: Recorded) -> Iterator[dict[str, Any]]:
    """The JSON objects of a recorded answer: the whole body, or each server-sent event's data."""
    body = b"".join(exchange.chunks()).decode(errors="replace")
    if body.lstrip().startswith(("{", "[")):
        try:
            value = json.loads(body)
        except ValueError:
            return
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict):
                yield item
        return
    for block in body.replace("\r\n", "\n").split("\n\n"):
        data = "\n".join(line[5:].lstrip() for line in block.split("\n") if line.startswith("data:"))
        if not data or data == "[DONE]":
            continue
        try:
            value = json.loads(data)
        except ValueError:
            continue
        if isinstance(value, dict):
            yield value


def _arguments(raw: Any) -> dict[str, Any]:
    """Tool-call arguments as an object (ATIF's shape), from an object or its JSON text."""
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except ValueError:
        return {"raw": raw}
    return value if isinstance(value, dict) else {"value": value}


def read_answer(provider: str, exchange: Recorded) -> Answer:
    """What the recorded answer to ``exchange`` said, read in ``provider``'s API shape."""
    events = list(_events(exchange))
    if provider == "anthropic":
        return _anthropic(events)
    if provider == "gemini":
        return _gemini(events, exchange.number)
    if exchange.path.endswith("/responses"):
        return _responses(events)
    return _chat(events)


def _anthropic(events: list[dict[str, Any]]) -> Answer:
    blocks: list[dict[str, Any]] = []
    partial: dict[int, str] = {}
    for event in events:
        kind = event.get("type")
        if kind == "message":
            blocks = [dict(b) for b in event.get("content") or [] if isinstance(b, dict)]
        elif kind == "content_block_start":
            blocks.append(dict(event.get("content_block") or {}))
        elif kind == "content_block_delta" and blocks:
            index, delta = min(int(event.get("index", 0)), len(blocks) - 1), event.get("delta") or {}
            if delta.get("type") == "text_delta":
                blocks[index]["text"] = blocks[index].get("text", "") + delta.get("text", "")
            elif delta.get("type") == "thinking_delta":
                blocks[index]["thinking"] = blocks[index].get("thinking", "") + delta.get("thinking", "")
            elif delta.get("type") == "input_json_delta":
                partial[index] = partial.get(index, "") + delta.get("partial_json", "")
    for index, raw in partial.items():
        blocks[index]["input"] = _arguments(raw)
    answer = Answer()
    for block in blocks:
        if block.get("type") == "text":
            answer.text += str(block.get("text", ""))
        elif block.get("type") == "thinking":
            answer.reasoning += str(block.get("thinking", ""))
        elif block.get("type") in ("tool_use", "server_tool_use"):
            answer.calls.append(
                (str(block.get("id", "")), str(block.get("name", "")), _arguments(block.get("input")))
            )
    return answer


def _chat(events: list[dict[str, Any]]) -> Answer:
    answer = Answer()
    calls: dict[int, dict[str, str]] = {}
    for event in events:
        for choice in event.get("choices") or []:
            part = choice.get("message") or choice.get("delta") or {}
            answer.text += part.get("content") or ""
            answer.reasoning += part.get("reasoning_content") or part.get("reasoning") or ""
            for position, call in enumerate(part.get("tool_calls") or []):
                kept = calls.setdefault(
                    int(call.get("index", position)), {"id": "", "name": "", "arguments": ""}
                )
                function = call.get("function") or {}
                kept["id"] = call.get("id") or kept["id"]
                kept["name"] = function.get("name") or kept["name"]
                arguments = function.get("arguments")
                kept["arguments"] += arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    answer.calls = [(c["id"], c["name"], _arguments(c["arguments"])) for _, c in sorted(calls.items())]
    return answer


def _responses(events: list[dict[str, Any]]) -> Answer:
    response = next(
        (e["response"] for e in events if e.get("type") == "response.completed" and "response" in e),
        next((e for e in events if "output" in e), {}),
    )
    answer = Answer()
    for item in response.get("output") or []:
        if item.get("type") == "message":
            answer.text += "".join(
                c.get("text", "") for c in item.get("content") or [] if isinstance(c, dict)
            )
        elif item.get("type") == "reasoning":
            answer.reasoning += "".join(
                s.get("text", "") for s in item.get("summary") or [] if isinstance(s, dict)
            )
        elif item.get("type") == "function_call":
            answer.calls.append(
                (str(item.get("call_id", "")), str(item.get("name", "")), _arguments(item.get("arguments")))
            )
    return answer


def _gemini(events: list[dict[str, Any]], number: int) -> Answer:
    answer = Answer()
    for event in events:
        for candidate in (event.get("candidates") or [])[:1]:
            for part in (candidate.get("content") or {}).get("parts") or []:
                if "functionCall" in part:
                    call = part["functionCall"]
                    name = str(call.get("name", ""))
                    call_id = str(call.get("id") or f"{name}#{number}.{len(answer.calls) + 1}")
                    answer.calls.append((call_id, name, _arguments(call.get("args"))))
                elif part.get("thought"):
                    answer.reasoning += str(part.get("text", ""))
                else:
                    answer.text += str(part.get("text", ""))
    return answer


# --- tool results, in the requests that send them back -----------------------------------------


def tool_results(exchange: Recorded) -> list[tuple[str, str, str]]:
    """The tool results a request sends the model: ``(call id, tool name, content)`` in each
    API's shape (Anthropic's ``tool_result``, Chat's ``tool`` messages, Responses'
    ``function_call_output``, Gemini's ``functionResponse``: the only one with a name, by which
    it is matched when its call had no id in the answer, Gemini CLI making up its own)."""
    try:
        body = json.loads(exchange.body)
    except ValueError:
        return []
    if not isinstance(body, dict):
        return []
    found: list[tuple[str, str, str]] = []
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool":
            found.append((str(message.get("tool_call_id", "")), "", _text(message.get("content"))))
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found.append((str(block.get("tool_use_id", "")), "", _text(block.get("content"))))
    items = body.get("input")
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            found.append((str(item.get("call_id", "")), "", _text(item.get("output"))))
    for content in body.get("contents") or []:
        for part in (content.get("parts") or []) if isinstance(content, dict) else []:
            if isinstance(part, dict) and "functionResponse" in part:
                response = part["functionResponse"]
                name = str(response.get("name", ""))
                found.append((str(response.get("id") or ""), name, _text(response.get("response"))))
    return found


def _text(content: Any) -> str:
    """A tool result's content as text: its text blocks joined, or its JSON."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        if len(texts) == len(content):
            return "".join(texts)
    return json.dumps(content)

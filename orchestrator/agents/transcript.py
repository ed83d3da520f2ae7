"""Agent transcripts: each turn's output kept beside the log, secrets redacted, parsed where structured.

A :class:`Transcript` receives one turn's output as it arrives. It redacts the values of
secret environment variables (API keys, tokens), writes everything to a file in the run's
``agent/`` folder, passes the first :data:`INLINE_CHARS` characters on as ``agent.output``
records (and then one line naming the file), and feeds complete lines to a parser.

A parser reads the output format its CLI documents (Claude Code's stream-json, Codex's
JSONL, Gemini CLI's JSON, Aider's usage lines, OpenHands' JSONL) and answers a :class:`Usage`:
tokens, cost, the final message and the id that continues the conversation. A figure the
output does not state stays ``None``: missing, never 0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from orchestrator.agents.redaction import RedactedStream, Redactor

__all__ = [
    "INLINE_CHARS",
    "AiderText",
    "ClaudeStreamJson",
    "CodexJsonl",
    "GeminiJson",
    "LineParser",
    "OpenHandsJsonl",
    "Transcript",
    "Usage",
    "mini_trajectory_usage",
]

#: How much of one turn's output goes into the event log itself; the rest only to the file.
INLINE_CHARS = 128 * 1024


@dataclass(slots=True)
class Usage:
    """What a turn's output says it used and said; ``None`` where it says nothing."""

    input_tokens: int | None = None  # every prompt token, cached or not
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    cost_usd: float | None = None
    final_message: str | None = None
    session: str = ""  # what continues the conversation (a session or thread id)
    model: str = ""


class LineParser(Protocol):
    """Reads one CLI's output format, a line at a time."""

    def feed(self, line: str) -> None:
        """Take one line of output (without its newline)."""

    def finish(self) -> Usage:
        """What the lines said."""


class Transcript:
    """One turn's output: redacted, written to ``path``, inlined up to a budget, parsed by lines."""

    def __init__(
        self,
        path: Path,
        *,
        shown_as: str,
        emit: Callable[[str], None],
        redact: Redactor,
        parser: LineParser | None = None,
        inline: int = INLINE_CHARS,
    ) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.shown_as = shown_as  # the path as the log names it (relative to the run folder)
        self.chars = 0
        self.truncated = False
        self._emit = emit
        self._stream = RedactedStream(redact)
        self._parser = parser
        self._budget = inline
        self._file = path.open("w", encoding="utf-8")
        self._line = ""  # redacted text of the current line, for the parser

    def write(self, chunk: str) -> None:
        """Take a chunk of output as it arrives."""
        self._out(self._stream.feed(chunk))

    def close(self) -> None:
        """Write what is left; the parser gets the last line even without its newline."""
        if self._file.closed:
            return
        self._out(self._stream.flush())
        if self._line and self._parser is not None:
            self._parser.feed(self._line)
        self._line = ""
        self._file.close()

    def usage(self) -> Usage:
        """What the parser made of the output (an empty :class:`Usage` without one)."""
        return self._parser.finish() if self._parser is not None else Usage()

    def _out(self, text: str) -> None:
        if not text:
            return
        self._file.write(text)
        self._file.flush()
        self.chars += len(text)
        room = self._budget - (self.chars - len(text))
        if room >= len(text):
            self._emit(text)
        elif not self.truncated:
            self.truncated = True
            self._emit(text[: max(room, 0)] + f"\n[… the rest of this turn's output is in {self.shown_as}]\n")
        if self._parser is not None:
            self._line += text
            *lines, self._line = self._line.split("\n")
            for line in lines:
                self._parser.feed(line)


# --- parsers ---------------------------------------------------------------------------------


def _json_object(line: str) -> dict[str, Any] | None:
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _total(values: Iterable[int | None]) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


class ClaudeStreamJson:
    """Claude Code's ``--output-format stream-json``: ``system``/``init``, ``assistant``, ``result``."""

    def __init__(self) -> None:
        self._usage = Usage()
        self._last_text: str | None = None
        self._result: dict[str, Any] | None = None

    def feed(self, line: str) -> None:
        """One event."""
        event = _json_object(line)
        if event is None:
            return
        kind = event.get("type")
        if isinstance(event.get("session_id"), str) and event["session_id"]:
            self._usage.session = event["session_id"]
        if kind == "system" and event.get("subtype") == "init":
            self._usage.model = str(event.get("model") or "")
        elif kind == "assistant":
            message = event.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            texts = [
                block["text"]
                for block in content or []
                if isinstance(block, dict)
                and block.get("type") == "text"
                and isinstance(block.get("text"), str)
            ]
            self._last_text = _text("".join(texts)) or self._last_text
        elif kind == "result":
            self._result = event

    def finish(self) -> Usage:
        """The result event's figures (none if the turn ended before it)."""
        usage = self._usage
        usage.final_message = self._last_text
        result = self._result
        if result is None:
            return usage
        usage.final_message = _text(result.get("result")) or usage.final_message
        cost = result.get("total_cost_usd")
        usage.cost_usd = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
        tokens = result.get("usage")
        if isinstance(tokens, dict):
            fresh = _int(tokens.get("input_tokens"))
            usage.cache_read_tokens = _int(tokens.get("cache_read_input_tokens"))
            usage.cache_write_tokens = _int(tokens.get("cache_creation_input_tokens"))
            if fresh is not None:
                usage.input_tokens = fresh + (usage.cache_read_tokens or 0) + (usage.cache_write_tokens or 0)
            usage.output_tokens = _int(tokens.get("output_tokens"))
        return usage


class CodexJsonl:
    """``codex exec --json``: ``thread.started``, ``item.completed`` (agent messages), ``turn.completed``."""

    def __init__(self) -> None:
        self._usage = Usage()
        self._inputs: list[int | None] = []
        self._cached: list[int | None] = []
        self._outputs: list[int | None] = []
        self._error: str | None = None

    def feed(self, line: str) -> None:
        """One event."""
        event = _json_object(line)
        if event is None:
            return
        kind = event.get("type")
        if kind in ("thread.started", "session.created"):
            session = event.get("thread_id") or event.get("session_id")
            self._usage.session = session if isinstance(session, str) else self._usage.session
        elif kind == "item.completed":
            item = event.get("item")
            if isinstance(item, dict) and item.get("type") == "agent_message":
                self._usage.final_message = _text(item.get("text")) or self._usage.final_message
        elif kind == "turn.completed" and isinstance(event.get("usage"), dict):
            tokens = event["usage"]
            self._inputs.append(_int(tokens.get("input_tokens")))
            self._cached.append(_int(tokens.get("cached_input_tokens")))
            self._outputs.append(_int(tokens.get("output_tokens")))
        elif kind in ("turn.failed", "error"):
            error = event.get("error") if kind == "turn.failed" else event
            message = error.get("message") if isinstance(error, dict) else None
            self._error = _text(message) or self._error

    def finish(self) -> Usage:
        """Token counts summed over the completed turns; Codex reports no cost."""
        usage = self._usage
        usage.input_tokens = _total(self._inputs)
        usage.cache_read_tokens = _total(self._cached)
        usage.output_tokens = _total(self._outputs)
        if usage.final_message is None and self._error:
            usage.final_message = f"error: {self._error}"
        return usage


class GeminiJson:
    """``gemini --output-format json``: one object with ``session_id``, ``response`` and ``stats``."""

    def __init__(self) -> None:
        self._lines: list[str] = []

    def feed(self, line: str) -> None:
        """One line of the (pretty-printed) object, or of something printed before it."""
        self._lines.append(line)

    def finish(self) -> Usage:
        """The figures of the last JSON object printed."""
        usage = Usage()
        found = self._last_object()
        if found is None:
            return usage
        usage.session = found["session_id"] if isinstance(found.get("session_id"), str) else ""
        usage.final_message = _text(found.get("response"))
        error = found.get("error")
        if usage.final_message is None and isinstance(error, dict):
            usage.final_message = f"error: {error.get('message', error)}"
        models = _dict(_dict(found.get("stats")).get("models"))
        if models:
            counts = [_dict(_dict(m).get("tokens")) for m in models.values()]
            usage.input_tokens = _total(_int(c.get("prompt")) for c in counts)
            candidates = _total(_int(c.get("candidates")) for c in counts)
            thoughts = _total(_int(c.get("thoughts")) for c in counts)
            usage.output_tokens = None if candidates is None else candidates + (thoughts or 0)
            usage.cache_read_tokens = _total(_int(c.get("cached")) for c in counts)
            usage.model = ", ".join(sorted(models))
        return usage

    def _last_object(self) -> dict[str, Any] | None:
        text = "\n".join(self._lines)
        decoder = json.JSONDecoder()
        found: dict[str, Any] | None = None
        for match in re.finditer(r"^\{", text, re.MULTILINE):
            try:
                obj, _ = decoder.raw_decode(text, match.start())
            except ValueError:
                continue
            if isinstance(obj, dict) and ("response" in obj or "stats" in obj or "error" in obj):
                found = obj
        return found


_AIDER_TOKENS = re.compile(
    r"Tokens: (?P<sent>[\d.,]+k?) sent"
    r"(?:, (?P<write>[\d.,]+k?) cache write)?(?:, (?P<hit>[\d.,]+k?) cache hit)?"
    r", (?P<received>[\d.,]+k?) received\."
)
_AIDER_COST = re.compile(r"Cost: \$(?P<message>[\d.]+) message, \$(?P<session>[\d.]+) session\.")
_AIDER_MODEL = re.compile(r"^(?:Main model|Model): (?P<model>\S+)")


def _aider_count(text: str | None) -> int | None:
    """Aider's rounded counts: ``312``, ``2.3k``, ``12k``."""
    if text is None:
        return None
    text = text.replace(",", "")
    if text.endswith("k"):
        return round(float(text[:-1]) * 1000)
    return round(float(text))


class AiderText:
    """Aider's plain output: a ``Tokens: … sent, … received. Cost: $… message, …`` line per LLM call."""

    def __init__(self) -> None:
        self._usage = Usage()
        self._sent: list[int | None] = []
        self._received: list[int | None] = []
        self._hits: list[int | None] = []
        self._writes: list[int | None] = []
        self._costs: list[float] = []

    def feed(self, line: str) -> None:
        """One line."""
        tokens = _AIDER_TOKENS.search(line)
        if tokens:
            self._sent.append(_aider_count(tokens["sent"]))
            self._received.append(_aider_count(tokens["received"]))
            self._hits.append(_aider_count(tokens["hit"]))
            self._writes.append(_aider_count(tokens["write"]))
        cost = _AIDER_COST.search(line)
        if cost:
            self._costs.append(float(cost["message"]))
        model = _AIDER_MODEL.match(line.strip())
        if model and not self._usage.model:
            self._usage.model = model["model"]

    def finish(self) -> Usage:
        """Sums over the turn's LLM calls (Aider rounds its counts: ``2.3k``)."""
        usage = self._usage
        usage.input_tokens = _total(self._sent)
        usage.output_tokens = _total(self._received)
        if self._sent:
            usage.cache_read_tokens = _total(self._hits) if any(h is not None for h in self._hits) else 0
            usage.cache_write_tokens = _total(self._writes) if any(w is not None for w in self._writes) else 0
        usage.cost_usd = round(sum(self._costs), 6) if self._costs else None
        return usage


_CONVERSATION_ID = re.compile(r"Conversation ID: (?P<id>[0-9A-Za-z-]{8,})")


class OpenHandsJsonl:
    """``openhands --headless --json``: one event a line (or ``--JSON Event--`` blocks), then the id."""

    def __init__(self) -> None:
        self._usage = Usage()
        self._block: list[str] | None = None
        self._finish: str | None = None

    def feed(self, line: str) -> None:
        """One line."""
        found = _CONVERSATION_ID.search(line)
        if found:
            self._usage.session = found["id"]
        if line.strip() == "--JSON Event--":  # older versions: a marker, then pretty-printed JSON
            self._flush()
            self._block = []
            return
        if self._block is not None:
            self._block.append(line)
            if line.startswith("}"):
                self._flush()
            return
        event = _json_object(line)
        if event is not None:
            self._event(event)

    def finish(self) -> Usage:
        """The agent's finishing words (or its last message); OpenHands prints no usage here."""
        self._flush()
        if self._finish is not None:
            self._usage.final_message = self._finish
        return self._usage

    def _flush(self) -> None:
        if self._block:
            event = _json_object("".join(self._block))
            if event is not None:
                self._event(event)
        self._block = None

    def _event(self, event: dict[str, Any]) -> None:
        kind = event.get("event_type") or event.get("kind") or event.get("type")
        action = (
            event.get("action_data") if isinstance(event.get("action_data"), dict) else event.get("action")
        )
        if isinstance(action, dict) and (
            event.get("action_type") == "FinishAction" or action.get("kind") == "FinishAction"
        ):
            self._finish = _text(action.get("message")) or self._finish
        elif kind in ("MessageEvent", "message"):
            message = (
                event.get("message") if isinstance(event.get("message"), dict) else event.get("llm_message")
            )
            if isinstance(message, dict) and (
                message.get("role") == "assistant" or event.get("source") == "agent"
            ):
                content = message.get("content")
                if isinstance(content, list):
                    content = "".join(c.get("text", "") for c in content if isinstance(c, dict))
                self._usage.final_message = _text(content) or self._usage.final_message


def mini_trajectory_usage(path: Path, redact: Redactor) -> Usage:
    """What mini-swe-agent's trajectory file (``-o``) says: cost, calls and its last message."""
    usage = Usage()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return usage
    if not isinstance(data, dict):
        return usage
    info = _dict(data.get("info"))
    stats = _dict(info.get("model_stats"))
    cost, calls = stats.get("instance_cost"), stats.get("api_calls")
    # mini writes 0.0 when its model has no price: with calls made, that is "not known", not free.
    if isinstance(cost, int | float) and not isinstance(cost, bool) and (cost > 0 or not calls):
        usage.cost_usd = float(cost)
    usage.model = str(_dict(_dict(info.get("config")).get("model")).get("model_name") or "")
    messages = [m for m in data.get("messages") or [] if isinstance(m, dict)]
    said = [m.get("content") for m in messages if m.get("role") == "assistant"]
    final = _text(info.get("submission")) or (_text(said[-1]) if said else None)
    usage.final_message = redact(final) if final else None
    return usage

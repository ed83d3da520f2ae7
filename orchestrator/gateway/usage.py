"""An answer's token figures, read from what the provider itself sent, streamed or not.

:class:`UsageReader` is fed an answer's body as it passes through the gateway, chunk by chunk.
A server-sent event stream is read event by event as it arrives (nothing is held back from the
agent); any other body is kept up to :data:`BODY_CAP` and read as JSON at the end. Where a
figure comes again (Anthropic's ``message_start`` then ``message_delta``, Gemini's every
chunk), the last one said counts: each API repeats running totals, never increments.

The figures are the same for every provider (:class:`Figures`): ``input`` counts every prompt
token (fresh, read from a cache, written to one), ``output`` every generated one (reasoning
included, as it is billed), ``reasoning`` the part of it spent reasoning. An API that has no
such figure reports 0 for it where it has no such concept (OpenAI's and Gemini's cache writes)
and None where it simply did not say (Anthropic's reasoning).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["BODY_CAP", "Figures", "UsageReader"]

#: The most of a JSON (not streamed) answer kept to read its usage.
BODY_CAP = 32 << 20
#: The longest server-sent event read (a longer one is passed on, not read).
EVENT_CAP = 8 << 20


@dataclass(slots=True)
class Figures:
    """One request's tokens, as its answer reported them (None: not reported)."""

    input: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    output: int | None = None
    reasoning: int | None = None
    model: str = ""

    @property
    def reported(self) -> bool:
        """Whether the answer said anything of its usage."""
        return self.input is not None or self.output is not None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


#: The events that end an answer: Anthropic's Messages, OpenAI's Responses.
_LAST_EVENTS = {
    "anthropic": {"message_stop"},
    "openai": {"response.completed", "response.incomplete", "response.failed"},
}


def _ends(provider: str, obj: dict[str, Any]) -> bool:
    """Whether ``obj`` is the last event of a streamed answer (Gemini's: a candidate's finish)."""
    if provider == "gemini":
        candidates = obj.get("candidates")
        return isinstance(candidates, list) and any(_dict(c).get("finishReason") for c in candidates)
    return obj.get("type") in _LAST_EVENTS.get(provider, set())


class UsageReader:
    """Reads the usage of one answer of ``provider`` (``anthropic``, ``openai``, ``gemini``)."""

    def __init__(self, provider: str, content_type: str, model: str = "") -> None:
        self.provider = provider
        self.streamed = content_type.split(";", 1)[0].strip().lower() == "text/event-stream"
        self._buffer = bytearray()
        self._over = False
        self._fresh: int | None = None  # Anthropic's input_tokens: the uncached part
        self.figures = Figures(model=model)
        #: Whether the stream's own end was read: the event each API ends an answer with.
        self.complete = False

    def feed(self, chunk: bytes) -> None:
        """A piece of the body, as it passed."""
        if self._over:
            return
        self._buffer += chunk
        if not self.streamed:
            self._over = len(self._buffer) > BODY_CAP
            return
        while True:
            ends = [i for i in (self._buffer.find(b"\n\n"), self._buffer.find(b"\r\n\r\n")) if i >= 0]
            if not ends:
                break
            end = min(ends)
            event = bytes(self._buffer[:end])
            del self._buffer[: end + (4 if self._buffer[end : end + 4] == b"\r\n\r\n" else 2)]
            self._event(event)
        if len(self._buffer) > EVENT_CAP:
            self._buffer.clear()

    def finish(self) -> Figures:
        """The figures, once the body is through."""
        if self.streamed:
            if self._buffer.strip():
                self._event(bytes(self._buffer))
        elif not self._over:
            try:
                body = json.loads(bytes(self._buffer))
            except ValueError:
                body = None
            for item in body if isinstance(body, list) else [body]:  # Gemini's streamed JSON array
                self._object(item)
        self._buffer.clear()
        figures = self.figures
        if self.provider == "anthropic" and self._fresh is not None:
            figures.input = self._fresh + (figures.cache_read or 0) + (figures.cache_write or 0)
        return figures

    def _event(self, raw: bytes) -> None:
        data = [
            line[5:].lstrip()
            for line in raw.decode("utf-8", "replace").splitlines()
            if line.startswith("data:")
        ]
        text = "\n".join(data)
        if text == "[DONE]":  # Chat Completions' end
            self.complete = True
        if not text or text == "[DONE]":
            return
        try:
            self._object(json.loads(text))
        except ValueError:
            return

    def _object(self, obj: Any) -> None:
        if not isinstance(obj, dict):
            return
        self.complete = self.complete or _ends(self.provider, obj)
        if self.provider == "anthropic":
            message = _dict(obj.get("message"))
            self._model(message.get("model") or obj.get("model"))
            for usage in (_dict(message.get("usage")), _dict(obj.get("usage"))):
                self._anthropic(usage)
        elif self.provider == "openai":
            response = _dict(obj.get("response"))
            self._model(response.get("model") or obj.get("model"))
            for usage in (_dict(response.get("usage")), _dict(obj.get("usage"))):
                self._openai(usage)
        else:
            self._model(obj.get("modelVersion"))
            self._gemini(_dict(obj.get("usageMetadata")))

    def _model(self, name: Any) -> None:
        if isinstance(name, str) and name:
            self.figures.model = name

    def _set(self, **values: int | None) -> None:
        for name, value in values.items():
            if value is not None:
                setattr(self.figures, name, value)

    def _anthropic(self, usage: dict[str, Any]) -> None:
        if not usage:
            return
        fresh = _int(usage.get("input_tokens"))
        self._fresh = fresh if fresh is not None else self._fresh
        self._set(
            cache_read=_int(usage.get("cache_read_input_tokens")),
            cache_write=_int(usage.get("cache_creation_input_tokens")),
            output=_int(usage.get("output_tokens")),
        )
        if self._fresh is not None:
            self.figures.cache_read = self.figures.cache_read or 0
            self.figures.cache_write = self.figures.cache_write or 0

    def _openai(self, usage: dict[str, Any]) -> None:
        if not usage:
            return
        chat = "prompt_tokens" in usage
        prompt = _int(usage.get("prompt_tokens" if chat else "input_tokens"))
        prompt_details = _dict(usage.get("prompt_tokens_details" if chat else "input_tokens_details"))
        output_details = _dict(usage.get("completion_tokens_details" if chat else "output_tokens_details"))
        self._set(
            input=prompt,
            output=_int(usage.get("completion_tokens" if chat else "output_tokens")),
            cache_read=_int(prompt_details.get("cached_tokens")),
            reasoning=_int(output_details.get("reasoning_tokens")),
        )
        if prompt is not None:
            self.figures.cache_read = self.figures.cache_read or 0
            self.figures.cache_write = 0  # OpenAI writes its cache at no charge and reports none

    def _gemini(self, usage: dict[str, Any]) -> None:
        prompt = _int(usage.get("promptTokenCount"))
        if prompt is None:
            return
        candidates = _int(usage.get("candidatesTokenCount")) or 0
        thoughts = _int(usage.get("thoughtsTokenCount")) or 0
        self._set(
            input=prompt,
            output=candidates + thoughts,
            reasoning=thoughts,
            cache_read=_int(usage.get("cachedContentTokenCount")) or 0,
            cache_write=0,
        )

"""Secrets never reach the log: the values of secret environment variables are redacted.

:class:`Redactor` replaces known secret values (API keys, tokens) in text. Output arrives in
pieces, and a secret may be split between two of them; :class:`RedactedStream` redacts
whole lines, and holds back the tail of a line too long to wait for (as long as the
longest secret, less one character), so a secret is always seen whole before anything of
it is written. Every adapter that passes an agent's output on goes through it.

Which values are secret: those of secret-named environment variables (:func:`is_secret_name`)
and those given to secret-named flags (:func:`secret_flags`). Files an agent's CLI writes
beside its transcript are redacted in place (:func:`redact_file`).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from orchestrator.system.agentfiles import AgentFolder

__all__ = [
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "RedactedStream",
    "Redactor",
    "is_secret_name",
    "masked_env",
    "redact_file",
    "secret_flags",
]

#: Shorter values are not searched for in output (a 1-character "secret" would redact everything).
MIN_SECRET_LENGTH = 8
#: A line longer than this is written out in pieces rather than held back whole.
HOLD_CHARS = 64 * 1024
#: The largest file :func:`redact_file` redacts.
REDACTED_FILE_BYTES = 64 << 20

_SECRET_WORDS = frozenset(
    {"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "CREDENTIAL", "CREDENTIALS"}
    | {"AUTH", "COOKIE", "PAT", "PRIVATE", "SESSIONKEY"}
)
_SECRET_ENDINGS = ("KEY", "TOKEN", "SECRET", "PASSWORD")


def is_secret_name(name: str) -> bool:
    """Whether an environment variable of this name holds a secret (``ANTHROPIC_API_KEY``, ``GH_TOKEN``)."""
    parts = [p for p in re.split(r"[^A-Z0-9]+", name.upper()) if p]
    return any(p in _SECRET_WORDS or p.endswith(_SECRET_ENDINGS) for p in parts)


#: What stands in a record for a value that is a secret.
REDACTED = "[redacted]"


def masked_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with the value of every secret-named variable replaced by :data:`REDACTED`."""
    return {name: REDACTED if is_secret_name(name) else value for name, value in env.items()}


def secret_flags(args: Sequence[str]) -> dict[str, str]:
    """Values given to secret-named flags in ``args`` (``--openai-api-key sk-…``, ``--api-key=…``)."""
    found: dict[str, str] = {}
    for index, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if not name.startswith("-") or not is_secret_name(name.lstrip("-")):
            continue
        if eq:
            found[name] = value
        elif index + 1 < len(args):
            found[name] = args[index + 1]
    return found


class Redactor:
    """Replaces known secret values in text with ``[redacted $NAME]``."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        names: dict[str, str] = {}
        for name, value in sorted(secrets.items()):
            if len(value) >= MIN_SECRET_LENGTH:
                names.setdefault(value, name)
        ordered = sorted(names, key=len, reverse=True)  # the longest secret wins where they overlap
        self._names = names
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        self.longest = len(ordered[0]) if ordered else 0

    @classmethod
    def from_env(cls, env: Mapping[str, str], extra: Mapping[str, str] | None = None) -> Redactor:
        """A redactor for every secret-named variable of ``env``, plus ``extra`` (name → value)."""
        secrets = {name: value for name, value in env.items() if is_secret_name(name)}
        return cls({**secrets, **(extra or {})})

    def __call__(self, text: str) -> str:
        """``text`` with every secret value replaced."""
        if self._pattern is None:
            return text
        return self._pattern.sub(lambda m: f"[redacted ${self._names[m.group(0)]}]", text)

    def value(self, obj: Any) -> Any:
        """A JSON-like value with every string in it redacted."""
        if isinstance(obj, str):
            return self(obj)
        if isinstance(obj, list | tuple):
            return [self.value(item) for item in obj]
        if isinstance(obj, dict):
            return {self(str(k)): self.value(v) for k, v in obj.items()}
        return obj


def redact_file(path: Path, redact: Redactor) -> None:
    """Redact a file an agent's CLI wrote in a folder changeup made (``path.parent``, the agent
    folder): read as a regular file through no link, written back as a new file in its place.
    One that is not such a file, not UTF-8 text, or longer than :data:`REDACTED_FILE_BYTES` is
    left as it is."""
    folder = AgentFolder(path.parent)
    try:
        content = folder.read(path.name, limit=REDACTED_FILE_BYTES)
        text = content.data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return
    cleaned = redact(text)
    if cleaned != text and not content.capped:
        with contextlib.suppress(OSError):
            folder.write(path.name, cleaned.encode("utf-8"))


class RedactedStream:
    """Output in pieces in, redacted text out: nothing leaves before every secret in it is whole."""

    def __init__(self, redact: Redactor, *, hold: int = HOLD_CHARS) -> None:
        self._redact = redact
        self._hold = hold
        self._pending = ""  # raw text after the last line end, not yet redacted

    def feed(self, chunk: str) -> str:
        """Take a piece of output; what of it (and of earlier pieces) can be written now."""
        self._pending += chunk
        if "\n" in chunk:
            head, _, self._pending = self._pending.rpartition("\n")
            return self._redact(head + "\n")
        if len(self._pending) > self._hold:
            # No line end in sight: write all but a tail that could hold the start of a secret.
            redacted = self._redact(self._pending)
            cut = max(len(redacted) - max(self._redact.longest - 1, 0), 0)
            self._pending = redacted[cut:]
            return redacted[:cut]
        return ""

    def flush(self) -> str:
        """The rest, at the end of the output."""
        rest, self._pending = self._pending, ""
        return self._redact(rest) if rest else ""

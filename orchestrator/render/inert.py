"""Agent text made inert for each rendering: shown as it is written, never acted on.

Much of what a report shows was written by the agent: commit subjects, file names, its output,
the messages its code put into a failing assertion. A terminal acts on control characters (an
escape sequence paints a line green, a carriage return overwrites it), a browser on markup, a
Markdown viewer on links and raw HTML, and every one of them reorders text around a bidi
override. So each rendering says such text through one function, which neutralises what that
rendering would act on:

- :func:`visible` (plain text, and the base of the others): every control character (C0 but
  the newline where lines are allowed, DEL, C1, bidi overrides and isolates, line and paragraph
  separators, the byte-order mark) written as its escape, ``\\x1b`` or ``\\u202e``;
- :func:`terminal`: :func:`visible`, and rich's markup escaped;
- :func:`markdown` (a value inside a line) and :func:`markdown_block` (lines kept as written,
  in a fence): no raw HTML, link, emphasis or table cell can start from agent text;
- :func:`html`: :func:`visible`, then escaped for an element's text or a quoted attribute;
- :func:`json_text`: JSON whose strings hold those characters as ``\\u`` escapes (JSON escapes
  the C0 ones itself), so printing the file is inert too.
"""

from __future__ import annotations

import html as _html
import json
import re
from typing import Any

from rich.markup import escape as _rich_escape

from triggers.bounds import UNSEEN

__all__ = ["html", "json_text", "markdown", "markdown_block", "terminal", "visible"]

_CONTROLS = re.compile(rf"[\x00-\x08\x0a-\x1f{UNSEEN}]")
_CONTROLS_BUT_NEWLINE = re.compile(rf"[\x00-\x08\x0b-\x1f{UNSEEN}]")
_JSON_UNSEEN = re.compile(f"[{UNSEEN}]")
#: What CommonMark and GitHub's tables give a meaning to anywhere in a line: ``*`` and ``_`` only
#: where they could open or close emphasis (not ``2 * 3``, not ``test_name``).
_MARKDOWN = re.compile(r"([\\`\[\]<>|&~]|(?<!\s)\*|\*(?!\s)|(?<![^\W_])_|_(?![^\W_]))")
#: What starts a block at the start of a line: a heading, a list item, a quote.
_MARKDOWN_START = re.compile(r"\A(\s*)(#+|[+\-]|\d+[.)])(?=\s|\Z)")


_NAMED = {"\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}")


def visible(text: str, *, lines: bool = False) -> str:
    """``text`` with every control character written as its escape (``\\x1b``, ``\\u202e``); the
    tab stays, and the newline too with ``lines``."""
    return (_CONTROLS_BUT_NEWLINE if lines else _CONTROLS).sub(_escape, text)


def terminal(text: object, *, lines: bool = False) -> str:
    """``text`` (anything, as ``str``) for ``rich``'s ``Console.print``: :func:`visible`, its
    markup escaped."""
    return _rich_escape(visible(str(text), lines=lines))


def markdown(text: object) -> str:
    """``text`` (anything, as ``str``) as a value inside a Markdown line (a list item, a table
    cell, a sentence): on one line, every character Markdown or its tables would act on
    backslash-escaped."""
    escaped = _MARKDOWN.sub(r"\\\1", visible(str(text)))
    return _MARKDOWN_START.sub(lambda m: f"{m.group(1)}{m.group(2)[:-1]}\\{m.group(2)[-1]}", escaped)


def markdown_block(text: str) -> str:
    """``text`` as lines shown as written: a fenced block whose fence no line of it can close."""
    body = visible(text, lines=True)
    runs = [len(run) for run in re.findall(r"`+", body)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return f"{fence}text\n{body}\n{fence}"


def html(text: Any) -> str:
    """``text`` (anything, as ``str``) for an HTML element's text or a quoted attribute value."""
    return _html.escape(visible(str(text), lines=True), quote=True)


def json_text(value: Any, **options: Any) -> str:
    """``json.dumps(value, **options)``, with every control character inside a string escaped."""
    return _JSON_UNSEEN.sub(_json_escape, json.dumps(value, **options))


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"

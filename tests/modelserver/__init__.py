"""A scripted model server for the real agent CLIs: it speaks each provider's API on 127.0.0.1.

A test starts :class:`ModelServer` with a :class:`Script` (the steps that answer each challenge
message) and the CLI's :class:`Dialect` (how that CLI writes a file, runs a command, ends a
turn), points the CLI's base URL at ``server.url``, and reads back every request it received.
"""

from __future__ import annotations

from tests.modelserver.dialects import DIALECTS, Call, Dialect, Reply
from tests.modelserver.protocols import Tokens
from tests.modelserver.script import Hold, Message, Part, Place, Read, Run, Say, Script, Write, locate
from tests.modelserver.server import Exchange, ModelServer, default_tokens

__all__ = [
    "DIALECTS",
    "Call",
    "Dialect",
    "Exchange",
    "Hold",
    "Message",
    "ModelServer",
    "Part",
    "Place",
    "Read",
    "Reply",
    "Run",
    "Say",
    "Script",
    "Tokens",
    "Write",
    "default_tokens",
    "locate",
]

"""changeup's shell: everything with I/O, wired around the pure ``triggers`` core.

The names below are loaded on first use (PEP 562), not with the package: every
``orchestrator.*`` import runs this file first, and ``changeup --help`` needs no challenge loader.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orchestrator.challenge.loader import ChallengeError, load_challenge, validate
    from orchestrator.challenge.model import Challenge, ChallengeFile, Phase
    from orchestrator.challenge.sourcemap import Problem

__all__ = [
    "Challenge",
    "ChallengeError",
    "ChallengeFile",
    "Phase",
    "Problem",
    "load_challenge",
    "validate",
]

#: Where each name of ``__all__`` is defined.
_HOMES = {
    "Challenge": "orchestrator.challenge.model",
    "ChallengeError": "orchestrator.challenge.loader",
    "ChallengeFile": "orchestrator.challenge.model",
    "Phase": "orchestrator.challenge.model",
    "Problem": "orchestrator.challenge.sourcemap",
    "load_challenge": "orchestrator.challenge.loader",
    "validate": "orchestrator.challenge.loader",
}


def __getattr__(name: str) -> object:
    """``orchestrator.NAME``: imports NAME's module the first time it is asked for."""
    if name not in _HOMES:
        raise AttributeError(f"module 'orchestrator' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)

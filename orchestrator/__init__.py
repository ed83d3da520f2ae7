"""changeup's shell: everything with I/O, wired around the pure ``triggers`` core."""

from __future__ import annotations

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

"""Seals: what grades the agent is fixed when the session starts, and checked at every grading.

When a session starts, the sha256 of every hidden test file of every phase (and of the
support folder and ini of ``testing:``, as ``testing.support``) is taken (and
logged as ``phase.sealed``), beside the challenge's digest and the grading environment,
whose own seal was taken when it was built (``venvs.py``). Every test run copies
the hidden tests through :func:`hidden_files` and compares each file with its seal
(``HiddenCopy``); the final grading takes the challenge's digest and the grading
environment's seal again. Any difference means something changed what grades the agent
during the run: the grading is ``tampered``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from orchestrator.challenge.model import Challenge, challenge_digest
from orchestrator.challenge.testids import hidden_files
from orchestrator.system.venvs import check_seal

__all__ = ["INI", "SUPPORT", "Seals", "support_files"]


#: The seal's name for the files of ``testing: support`` and ``testing: ini`` (a dot: never a phase id).
SUPPORT = "testing.support"


def support_files(challenge: Challenge) -> Iterator[tuple[str, bytes]]:
    """The files every phase's hidden run gets: the support folder's, and the ini (as ``pytest.ini``)."""
    testing = challenge.model.testing
    if testing.support is not None:
        yield from hidden_files(challenge.root / testing.support)
    if testing.ini is not None and (challenge.root / testing.ini).is_file():
        yield INI, (challenge.root / testing.ini).read_bytes()


#: The challenge's ``testing: ini``, as copied into the root of a run's hidden folder.
INI = "pytest.ini"


def _tests(challenge: Challenge) -> dict[str, dict[str, str]]:
    sealed = {
        phase.id: {name: hashlib.sha256(data).hexdigest() for name, data in hidden_files(phase.tests)}
        for phase in challenge.phases
    }
    support = {name: hashlib.sha256(data).hexdigest() for name, data in support_files(challenge)}
    return {**sealed, SUPPORT: support} if support else sealed


@dataclass(frozen=True, slots=True)
class Seals:
    """What a session is graded by, as it was when it started."""

    #: phase → hidden test file → sha256
    tests: dict[str, dict[str, str]]
    #: the challenge folder's digest (``challenge_sha256`` of the log's header)
    challenge: str
    #: the grading environment whose build seal is checked again (None: not checked)
    environment: Path | None = None

    @classmethod
    def take(cls, challenge: Challenge, environment: Path | None) -> Seals:
        """Seal every phase's hidden tests now."""
        return cls(_tests(challenge), challenge.digest, environment)

    def broken(self, challenge: Challenge) -> list[str]:
        """What no longer matches its seal, in words; empty when everything holds."""
        problems = []
        now = _tests(challenge)
        for phase, then in self.tests.items():
            files = now.get(phase, {})
            for name in sorted(set(then) | set(files)):
                if then.get(name) != files.get(name):
                    change = "added" if name not in then else ("removed" if name not in files else "changed")
                    problems.append(f"hidden test file {phase}/{name} {change} since the session started")
        if challenge_digest(challenge.root) != self.challenge:
            problems.append("the challenge folder changed since the session started")
        if self.environment is not None:
            problems += check_seal(self.environment)
        return problems

"""Load and validate a challenge folder, reporting every problem as ``file:line:column: message``.

Validation runs in layers, each only when the one before succeeded: the YAML must parse;
its shape must match :class:`~orchestrator.challenge.model.ChallengeFile`; then its meaning
(:mod:`orchestrator.challenge.semantics`): names, conditions, phases and the folder itself,
checked together so one run lists every problem.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from orchestrator.challenge.model import (
    ID_RULES,
    Challenge,
    ChallengeFile,
)
from orchestrator.challenge.schema_problems import schema_problems
from orchestrator.challenge.semantics import Semantics
from orchestrator.challenge.sourcemap import Problem, SourceError, load_yaml
from orchestrator.challenge.uses import declared_problems, undeclared_uses

__all__ = [
    "ChallengeError",
    "challenge_warnings",
    "load_challenge",
    "validate",
]

CHALLENGE_FILE = "challenge.yaml"


class ChallengeError(Exception):
    """A challenge that does not validate; ``problems`` says everything that is wrong."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


def load_challenge(path: Path | str) -> Challenge:
    """Load the challenge at ``path`` (its folder or its ``challenge.yaml``)."""
    result = _load(Path(path))
    if isinstance(result, list):
        raise ChallengeError(result)
    return result


def validate(path: Path | str) -> list[Problem]:
    """Every problem of the challenge at ``path``; empty when it is valid."""
    result = _load(Path(path))
    return result if isinstance(result, list) else []


def challenge_warnings(challenge: Challenge, path: Path | str) -> list[Problem]:
    """What is valid yet cannot work as intended, for the valid challenge loaded from ``path``: no
    reference solution; a Python it does not run on; tools or data the hidden tests use and do not
    declare, or declare and this machine lacks (``uses.py``)."""
    file = challenge_file(Path(path))
    found = [*declared_problems(challenge, file), *undeclared_uses(challenge, file)]
    python = challenge.python_problem()
    if python:
        found.insert(0, Problem(str(file), 1, 1, f"warning: {python}; its runs are refused here"))
    if challenge.reference.is_dir():
        return found
    message = (
        "warning: no solutions/reference/ folder: calibration needs a reference solution of every "
        "phase (solutions/reference/<phase>/) and cannot pass without one"
    )
    return [Problem(str(file), 1, 1, message), *found]


def challenge_file(path: Path) -> Path:
    """A challenge's YAML file, from the path of its folder or of the file itself."""
    return path / CHALLENGE_FILE if path.is_dir() or not path.suffix else path


def _load(path: Path) -> Challenge | list[Problem]:
    file = challenge_file(path)
    root = file.parent
    if not file.is_file():
        if not root.exists():
            return [Problem(str(root), 0, 0, "no such challenge folder")]
        what = f"no {CHALLENGE_FILE} here (a challenge folder holds {CHALLENGE_FILE}, workspace/ and tests/)"
        return [Problem(str(root), 0, 0, what)]
    try:
        data, source = load_yaml(file.read_text(encoding="utf-8"), str(file))
    except SourceError as error:
        return [error.problem]
    except UnicodeDecodeError:
        return [Problem(str(file), 1, 1, "not UTF-8 text")]
    if not isinstance(data, dict):
        found = "the file is empty" if data is None else f"found {type(data).__name__}"
        return [Problem(str(file), 1, 1, f"expected a mapping with a top-level 'challenge:' key; {found}")]
    try:
        model = ChallengeFile.model_validate(data).challenge
    except ValidationError as error:
        return schema_problems(error, source, ChallengeFile, ID_RULES)
    return Semantics(model, root, source).run()

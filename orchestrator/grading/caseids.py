"""Validation's second pass: the test ids a challenge names, checked case by case.

Loading checks them against the test functions in the hidden tests' source (``grading/testids``),
which cannot know a parametrized function's cases, so it takes a case id of a listed function
on trust. ``changeup validate`` then collects the tests in the challenge's grading environment
(``grading/collect.py``: each phase as the reference reaches it) and checks every list again,
case by case. Where collection cannot run, or a file will not collect, it says so as a warning
and the source listing stands for what could not be collected.
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.challenge.loader import challenge_file
from orchestrator.challenge.model import Challenge
from orchestrator.challenge.semantics import Listings, recheck_test_ids
from orchestrator.challenge.sourcemap import Problem
from orchestrator.challenge.testids import list_tests
from orchestrator.grading.collect import CollectionError, listing
from orchestrator.system.interpreters import NoInterpreter
from orchestrator.system.venvs import EnvironmentFailure, grading_environment

__all__ = ["case_id_problems"]

_TRUSTED = "its tests are named by source, and a case id of one of them is taken on trust"


def case_id_problems(challenge: Challenge, path: Path | str) -> tuple[list[Problem], list[Problem]]:
    """The problems and the warnings of the test ids of ``challenge``, loaded from ``path``."""
    file = challenge_file(Path(path))
    try:
        python = challenge.grading_python()
        collection = listing(challenge, grading_environment(challenge.model.requirements, python))
    except (EnvironmentFailure, CollectionError, NoInterpreter) as error:
        said = f"warning: the hidden tests could not be collected ({error}); {_TRUSTED}"
        return [], [Problem(str(file), 1, 1, said)]
    listings: Listings = {}
    collected: set[str] = set()
    warnings: list[Problem] = []
    for phase in challenge.phases:
        if phase.command is not None:  # listed only by a run (calibration checks its ids)
            continue
        files: dict[str, list[str]] = {}
        for test_id in collection.ids(phase.id):
            name = test_id.split("::", 1)[0]
            files.setdefault(name.partition("/")[2], []).append(test_id)
            collected.add(name)
        failed = collection.errors.get(phase.id, ())
        by_source = list_tests(phase.id, phase.tests) if failed else {}
        for entry in failed:
            name, _, reason = entry.partition(": ")
            files[name] = by_source.get(name, [])
            said = f"warning: {phase.id}/{name} would not collect over the reference ({reason}); {_TRUSTED}"
            warnings.append(Problem(str(phase.tests / name), 1, 1, said))
        listings[phase.id] = files
    return recheck_test_ids(challenge, file, listings, frozenset(collected)), warnings

"""Which declared test groups each hidden test belongs to, fixed before the agent runs.

A group is a pytest marker expression (``markers:``) or globs over test ids (``tests:``).
Membership never comes from a run: the agent's code runs inside the pytest process, so the
markers a run reports could be forged. Marker groups read the markers of a trusted
collection (``collect.py``), made from the challenge author's code only, once per session;
glob groups need nothing but the id.

An id the collection listed has its own markers. A function-level id (the ast listing names
a test that did not report that way, its cases unknown) is in a marker group when any of its
collected cases is, so a missing test still counts against its groups. A case the collection
did not list belongs to no marker group: its markers are unknown, and taking another case's
would let ``pytest.param(..., marks=...)`` say the wrong thing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase

from _pytest.mark.expression import Expression

from orchestrator.challenge.markers import compile_markers
from orchestrator.challenge.model import Challenge, Group
from orchestrator.grading.collect import listing
from orchestrator.system.venvs import Environment
from triggers import GroupResult, TestOutcome

__all__ = ["Membership", "membership"]


def _matches(expression: Expression, markers: frozenset[str]) -> bool:
    def matcher(name: str, /, **kwargs: str | int | bool | None) -> bool:
        return not kwargs and name in markers

    return expression.evaluate(matcher)


class Membership:
    """For each pytest phase, the indices of its declared groups each test id is in."""

    def __init__(self, challenge: Challenge, markers: Mapping[str, Mapping[str, frozenset[str]]]) -> None:
        self._groups: dict[str, tuple[Group, ...]] = {p.id: p.groups for p in challenge.phases if p.groups}
        self._marked: dict[str, dict[str, tuple[int, ...]]] = {}  # phase → id → marker groups it is in
        self._known: dict[str, tuple[int, ...]] = {}  # id → every group it is in (memo)
        for phase, groups in self._groups.items():
            collected = markers.get(phase, {})
            expressions = [(i, compile_markers(g.markers)) for i, g in enumerate(groups) if g.markers]
            if not expressions or not collected:
                continue
            marked: dict[str, set[int]] = {}
            for test_id, names in collected.items():
                inside = {i for i, expression in expressions if _matches(expression, names)}
                marked[test_id] = inside
                function = test_id.split("[", 1)[0]
                if function != test_id:  # the function stands for all its cases
                    marked.setdefault(function, set()).update(inside)
            self._marked[phase] = {test_id: tuple(sorted(inside)) for test_id, inside in marked.items()}

    def groups(self, phase: str) -> tuple[Group, ...]:
        """The declared groups of ``phase``, in order."""
        return self._groups.get(phase, ())

    def of(self, phase: str, test_id: str) -> tuple[int, ...]:
        """The indices (in ``groups(phase)``) of the groups ``test_id`` is in."""
        known = self._known.get(test_id)
        if known is None:
            marked = set(self._marked.get(phase, {}).get(test_id, ()))
            groups = self.groups(phase)
            globbed = {i for i, g in enumerate(groups) if any(fnmatchcase(test_id, t) for t in g.tests)}
            known = self._known[test_id] = tuple(sorted(marked | globbed))
        return known

    def results(self, phase: str, tests: Iterable[TestOutcome]) -> tuple[GroupResult, ...]:
        """Each declared group of ``phase`` with its passed and failed counts among ``tests``."""
        groups = self.groups(phase)
        if not groups:
            return ()
        passed = [0] * len(groups)
        failed = [0] * len(groups)
        for test in tests:
            tally = passed if test.outcome == "passed" else failed
            for index in self.of(phase, test.id):
                tally[index] += 1
        return tuple(GroupResult(g.name, passed[i], failed[i]) for i, g in enumerate(groups))


def membership(challenge: Challenge, environment: Environment) -> Membership:
    """The session's membership: marker groups from a collection of the hidden tests in the
    grading ``environment`` (only when some phase has one), glob groups from their ids."""
    if not any(g.markers is not None for p in challenge.phases for g in p.groups):
        return Membership(challenge, {})
    return Membership(challenge, _collected(challenge, environment))


def _collected(challenge: Challenge, environment: Environment) -> Mapping[str, Mapping[str, frozenset[str]]]:
    """Each phase's collected ids and their markers, each phase collected against the starter
    with the reference so far laid over it (so a test importing what the phase adds collects)."""
    return listing(challenge, environment).tests

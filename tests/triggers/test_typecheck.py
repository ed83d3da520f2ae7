"""Name resolution and type checking of conditions."""

from __future__ import annotations

import pytest

from triggers.syntax import Call, ConditionError, Name, parse, render
from triggers.typecheck import PREDICATES, Scope, resolve

SCOPE = Scope(("phase1", "Phase2"), ("pivot", "deadline"))


def canonical(text: str) -> str:
    """Resolve ``text`` and print its canonical form."""
    return render(resolve(parse(text), SCOPE))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("phase1_tests_pass", "tests_pass(phase1)"),
        ("PHASE1_TESTS_NOT_PASS", "tests_not_pass(phase1)"),
        ("phase2_tests_pass", "tests_pass(Phase2)"),
        ("elapsed > 30m", "time_elapsed > 30min"),
        ("Time_Elapsed > 1h AND NOT First_Commit", "time_elapsed > 1h and not first_commit"),
        ("tests_passed(PHASE1) >= 3", "tests_passed(phase1) >= 3"),
        ("fired(PIVOT) or delivered(deadline)", "fired(pivot) or delivered(deadline)"),
        (
            'file_exists("*.md") and file_changed("src/")',
            'file_exists("*.md") and file_changed("src/")',
        ),
        ("phase_elapsed > idle", "phase_elapsed > idle"),
        ("30s < idle", "30s < idle"),
        ("1 < 2", "1 < 2"),
        ("5m < 6m", "5min < 6min"),
        ("turns >= 1 and commits != 0", "turns >= 1 and commits != 0"),
        ("phase_unlocked(phase2) or always", "phase_unlocked(Phase2) or always"),
        ("tests_failed(phase1) == 0", "tests_failed(phase1) == 0"),
    ],
)
def test_resolves_to_canonical_form(text: str, expected: str) -> None:
    """Sugar, aliases and any letter case resolve to one canonical spelling."""
    assert canonical(text) == expected


def test_sugar_becomes_a_verdict_call() -> None:
    """``<phase>_tests_not_pass`` is ``tests_not_pass(<phase>)``, not ``not tests_pass(<phase>)``:
    before any verdict neither holds."""
    assert resolve(parse("phase1_tests_not_pass"), SCOPE) == Call("tests_not_pass", (Name("phase1"),))


@pytest.mark.parametrize(
    ("text", "column", "fragment"),
    [
        (
            "phase3_tests_pass",
            1,
            "unknown phase 'phase3' in 'phase3_tests_pass' (phases: phase1, Phase2)",
        ),
        ("tests_pass(phase9)", 12, "unknown phase 'phase9'"),
        ("fired(pivto)", 7, "unknown trigger 'pivto' in fired(...) (triggers: pivot, deadline)"),
        ("foo", 1, "unknown name 'foo' (predicates: always,"),
        ("foo(phase1)", 1, "unknown predicate 'foo' (predicates with arguments:"),
        ("tests_passing(phase1)", 1, "unknown predicate 'tests_passing'; did you mean 'tests_pass'?"),
        ("time_elapsd > 1m", 1, "unknown name 'time_elapsd'; did you mean 'time_elapsed'?"),
        ("phase1_test_pass", 1, "unknown name 'phase1_test_pass'; did you mean 'phase1_tests_pass'?"),
        ("tests_pass", 1, "'tests_pass' takes a phase: write tests_pass(phase1)"),
        ("always()", 1, "'always' takes no arguments"),
        ("tests_pass(phase1, phase2)", 1, "got 2 arguments"),
        ("file_exists()", 1, "got 0 arguments"),
        ("file_exists(phase1)", 13, "takes a quoted glob"),
        ('fired("pivot")', 7, "without quotes"),
        ('file_exists("/etc/passwd")', 14, "bad glob"),
        ('file_exists("[ab")', 14, "bad glob"),
        ("time_elapsed", 1, "is a duration, not true/false"),
        ("commits", 1, "is a number"),
        ("30min", 1, "alone is not a condition"),
        ("not commits", 5, "'not' needs true/false operands"),
        ("always and idle", 12, "'and' needs true/false operands"),
        ("always or 3", 11, "'or' needs true/false operands"),
        ("time_elapsed > 30", 14, "write a duration with a unit, e.g. 30s or 30min"),
        ("commits > 5m", 9, "compare a count with a plain number"),
        ("always == always", 1, "cannot compare true/false"),
        ("idle > first_commit", 8, "cannot compare true/false"),
        ('"x"', 1, "a quoted string can only be an argument"),
        ("idle > (commits > 1)", 17, "cannot compare true/false"),
    ],
)
def test_errors(text: str, column: int, fragment: str) -> None:
    """Every resolution or type error names the column and what would be valid."""
    with pytest.raises(ConditionError) as caught:
        resolve(parse(text), SCOPE)
    assert fragment in caught.value.message
    assert caught.value.column == column


def test_every_predicate_has_a_working_example() -> None:
    """Each registry entry's example resolves (they are quoted in error messages and docs)."""
    scope = Scope(("phase1", "phase2"), ("pivot",))
    for predicate in PREDICATES.values():
        assert resolve(parse(predicate.example), scope) is not None, predicate.name


def test_empty_scope_lists_none_declared() -> None:
    """With no phases declared the message says so."""
    with pytest.raises(ConditionError, match="none declared"):
        resolve(parse("fired(x)"), Scope((), ()))

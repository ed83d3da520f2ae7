"""The code generated for a condition against the reference's walk of its syntax tree.

:mod:`triggers.compile` turns each condition into the text of one Python expression; here
random nested conditions, over every predicate and operator, are evaluated both ways on
random facts, with time put on the very instants where comparisons flip.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.triggers.reference import holds
from triggers import build_spec
from triggers.compile import GlobTable, compile_condition
from triggers.facts import Facts
from triggers.globs import glob_matches

PHASES = ("phase1", "phase2")
TRIGGERS = ("a", "b")
#: Globs, among them some that would be code if they were pasted into the generated source.
GLOBS = ("src/**", "*.md", '") or True or ("', "'; import os #", "{f}")
PATHS = ("src/app.py", "docs/README.md", *GLOBS[2:], "other")


def quoted(text: str) -> str:
    """``text`` as a string in a condition."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


ATOMS = (
    "always",
    "first_commit",
    "phase1_tests_pass",
    "phase2_tests_not_pass",
    "tests_pass(phase2)",
    "phase_unlocked(phase2)",
    "fired(a)",
    "delivered(b)",
    "commits >= 2",
    "turns != 1",
    "3 == commits",
    "tests_passed(phase1) > 1",
    "tests_failed(phase2) == 0",
    "1 < tests_failed(phase1)",
    "time_elapsed > 10s",
    "time_elapsed <= 40s",
    "10s < time_elapsed",
    "time_elapsed == 25s",
    "idle >= 3s",
    "idle != 4s",
    "5s > idle",
    "phase_elapsed < 20s",
    "1min <= phase_elapsed",
    "idle >= phase_elapsed",
    "time_elapsed < idle",
    "phase_elapsed == time_elapsed",
    "5s < 10s",
    "2min == 120s",
    *(f"file_exists({quoted(glob)})" for glob in GLOBS),
    *(f"file_changed({quoted(glob)})" for glob in GLOBS),
)
#: The instants a comparison above flips at, relative to its anchor.
EDGES = (0.0, 3.0, 4.0, 5.0, 10.0, 20.0, 25.0, 40.0, 60.0)


def _condition(depth: int) -> st.SearchStrategy[str]:
    atom = st.sampled_from(ATOMS)
    if depth == 0:
        return atom
    inner = _condition(depth - 1)
    return st.one_of(
        atom,
        inner.map(lambda text: f"not ({text})"),
        st.lists(inner, min_size=2, max_size=3).map(lambda parts: " and ".join(f"({p})" for p in parts)),
        st.lists(inner, min_size=2, max_size=3).map(lambda parts: " or ".join(f"({p})" for p in parts)),
    )


CONDITIONS = _condition(3)


@st.composite
def instants(draw: st.DrawFn, anchor: float) -> float:
    """A time on, just before or just after an instant where a comparison flips."""
    edge = anchor + draw(st.sampled_from(EDGES))
    nudge = draw(st.sampled_from([None, math.inf, -math.inf]))
    return edge if nudge is None else math.nextafter(edge, nudge)


@st.composite
def worlds(draw: st.DrawFn) -> tuple[Facts, set[str], set[str]]:
    """Random facts, and the existing and touched paths the globs are matched against."""
    facts = Facts(0)  # globs: see facts_of_globs
    facts.phase_anchor = draw(st.sampled_from([0.0, 0.1, 7.0]))
    facts.idle_anchor = draw(st.sampled_from([0.0, 0.3, 12.5]))
    facts.t = max(
        draw(instants(draw(st.sampled_from([0.0, facts.phase_anchor, facts.idle_anchor])))),
        facts.phase_anchor,
        facts.idle_anchor,
    )
    facts.commits = draw(st.integers(0, 4))
    facts.turns = draw(st.integers(0, 3))
    for phase in draw(st.sets(st.sampled_from(PHASES))):
        passed, failed = draw(st.integers(0, 3)), draw(st.integers(0, 2))
        facts.passed[phase], facts.failed[phase] = passed, failed
        facts.passing[phase] = failed == 0 and passed > 0
    facts.unlocked = dict.fromkeys(draw(st.sets(st.sampled_from(PHASES))), 0.0)
    facts.fired = dict.fromkeys(draw(st.sets(st.sampled_from(TRIGGERS))), 1)
    facts.delivered = draw(st.sets(st.sampled_from(TRIGGERS)))
    files = draw(st.sets(st.sampled_from(PATHS)))
    touched = draw(st.sets(st.sampled_from(PATHS)))
    return facts, files, touched


def facts_of_globs(facts: Facts, globs: GlobTable, files: set[str], touched: set[str]) -> None:
    """Fill in the glob facts the way the engine keeps them: counts of matches, ever touched."""
    facts.glob_exists = [sum(glob_matches(pattern, path) for path in files) for pattern in globs.patterns]
    facts.glob_changed = [any(glob_matches(pattern, path) for path in touched) for pattern in globs.patterns]


@settings(max_examples=1500, deadline=None, derandomize=True)
@given(CONDITIONS, worlds())
def test_generated_code_agrees_with_the_tree(text: str, world: tuple[Facts, set[str], set[str]]) -> None:
    """Each compiled condition is true exactly when the reference's reading of its tree is."""
    facts, files, touched = world
    spec = build_spec(PHASES, [{"id": "a", "condition": text}, {"id": "b", "condition": "always"}])
    expr = spec.triggers[0].condition
    globs = GlobTable()
    compiled = compile_condition(expr, globs)
    facts_of_globs(facts, globs, files, touched)
    assert compiled.evaluate(facts) == holds(expr, facts, files, touched), compiled.text


def test_values_from_the_condition_are_never_code() -> None:
    """A glob that reads as Python is matched as a glob, not run: it matches only itself."""
    text = f"file_exists({quoted(GLOBS[2])})"
    spec = build_spec(PHASES, [{"id": "a", "condition": text}])
    globs = GlobTable()
    compiled = compile_condition(spec.triggers[0].condition, globs)
    assert globs.patterns == ['") or True or ("']
    facts = Facts(1)
    assert not compiled.evaluate(facts)
    facts.glob_exists[0] = 1
    assert compiled.evaluate(facts)

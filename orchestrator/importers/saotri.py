"""SaotriBench tasks (``tasks/<task>/`` of redush-com/SaotriBench) as challenges.

A task is ``task.yaml`` (the ``interface``'s ``function_name``, ``signature`` and
``allowed_imports``; ``execution.timeout_seconds``; ``phases``, each an integer ``id``, a
``description`` and its ``rules``; ``limits`` on attempts), ``problem.md`` (what the agent is
shown), ``evaluator.py`` (a class ``Evaluator`` with a ``check_<rule>(solution_fn, test_case)``
method per rule, returning a ``RuleResult``) and ``tests.py`` (``TEST_CASES``, each with the
``phase`` it joins at). Phase N checks every case of phase N or before against phase N's
rules; the solution is the function ``function_name`` of ``solution.py``.

The evaluator and the cases become the support folder, unchanged, beside a small
``saotri_bench`` package of changeup's that gives them the three names they import; each
phase's hidden tests are generated: one parametrized test per rule, over the (rule, case)
pairs that phase adds. There is no reference solution in the format.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from orchestrator.importers.draft import Draft, SourceError, read_text, read_yaml, slug
from orchestrator.importers.environment import Needs

__all__ = ["draft_saotri"]

SUPPORT = "tests/support"

#: The names SaotriBench's evaluators and cases import from ``saotri_bench``, as changeup's own.
_MODELS = '''\
"""The data a SaotriBench task's cases and evaluator use (changeup's own, same names)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class TestCase:
    """One case: the input, the expected value, the phase it joins at, and its tags."""

    __test__ = False  # not a pytest test class

    input: Any
    expected: Any
    phase: int
    tags: list[str] = field(default_factory=list)


@dataclass
class RuleResult:
    """A rule's verdict on one case; a failure names the scope the agent is told."""

    passed: bool
    scope: str | None = None

    @staticmethod
    def success() -> RuleResult:
        return RuleResult(passed=True)

    @staticmethod
    def failed(scope: str) -> RuleResult:
        return RuleResult(passed=False, scope=scope)
'''
_EVALUATOR = '''\
"""The base of a SaotriBench task's Evaluator (changeup's own): its check_<rule> methods are the task's."""


class BaseEvaluator:
    """An evaluator's check_<rule>(solution_fn, test_case) methods each return a RuleResult."""
'''
_RUNNER = '''\
"""Runs one rule of the task's evaluator on one case, as SaotriBench does (changeup import saotri)."""

from __future__ import annotations

import importlib

import pytest
from saotri_cases import TEST_CASES
from saotri_evaluator import Evaluator

FUNCTION = {function!r}


def cases(up_to, since=0):
    """The cases that join at a phase from SINCE to UP_TO, as pytest parameters."""
    return [
        pytest.param(case, id=f"c{{index:03d}}-p{{case.phase}}-{{(case.tags or ['case'])[0]}}")
        for index, case in enumerate(TEST_CASES)
        if since <= case.phase <= up_to
    ]


def check(rule, case):
    """The task's check_RULE on CASE, against the workspace's solution.py."""
    solution = getattr(importlib.import_module("solution"), FUNCTION, None)
    if not callable(solution):
        pytest.fail(f"solution.py has no function {{FUNCTION}}")
    result = getattr(Evaluator(), f"check_{{rule}}")(solution, case)
    assert result.passed, f"rule {{rule}} fails (scope: {{result.scope or 'unknown'}})"
'''


def _phases(task: dict[str, Any], path: Path) -> list[tuple[int, str, list[tuple[str, str]]]]:
    phases = task.get("phases")
    if not isinstance(phases, list) or not phases:
        raise SourceError(path, "phases: expected a list of phases, each with an id and rules")
    out = []
    for i, phase in enumerate(phases):
        if not isinstance(phase, dict) or not isinstance(phase.get("id"), int):
            raise SourceError(path, f"phases[{i}]: expected a mapping with an integer id")
        rules = phase.get("rules") or []
        if not isinstance(rules, list) or not all(isinstance(r, dict) and r.get("id") for r in rules):
            raise SourceError(path, f"phases[{i}].rules: expected a list of rules, each with an id")
        out.append(
            (
                phase["id"],
                str(phase.get("description") or ""),
                [(str(r["id"]), str(r.get("description") or "")) for r in rules],
            )
        )
    return sorted(out)


def _checks(path: Path) -> set[str]:
    """The rules ``Evaluator`` of evaluator.py has a ``check_<rule>`` method for."""
    try:
        tree = ast.parse(read_text(path), filename=str(path))
    except SyntaxError as error:
        raise SourceError(path, f"not valid Python: line {error.lineno}: {error.msg}") from None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Evaluator":
            return {
                item.name.removeprefix("check_")
                for item in node.body
                if isinstance(item, ast.FunctionDef) and item.name.startswith("check_")
            }
    raise SourceError(path, "defines no class Evaluator")


def _case_phases(path: Path) -> list[int] | None:
    """The phase of each literal ``TestCase(...)`` of tests.py (None: some are not literal)."""
    try:
        tree = ast.parse(read_text(path), filename=str(path))
    except SyntaxError as error:
        raise SourceError(path, f"not valid Python: line {error.lineno}: {error.msg}") from None
    if not any(
        isinstance(node, ast.Assign | ast.AnnAssign)
        and any(
            isinstance(t, ast.Name) and t.id == "TEST_CASES"
            for t in getattr(node, "targets", [getattr(node, "target", None)])
        )
        for node in tree.body
    ):
        raise SourceError(path, "defines no TEST_CASES")
    phases = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "TestCase":
            phase = next((k.value for k in node.keywords if k.arg == "phase"), None)
            if not (isinstance(phase, ast.Constant) and isinstance(phase.value, int)):
                return None
            phases.append(phase.value)
    return phases


def _rules_text(rules: list[tuple[str, str]]) -> str:
    return "\n".join(f"- {rule}: {text}" if text else f"- {rule}" for rule, text in rules)


def _test_module(task: str, phase: int, description: str, tests: list[tuple[str, int]]) -> str:
    lines = [
        f'"""SaotriBench {task}, phase {phase}: {description or "(no description)"}.',
        "",
        "Each test is one rule of the phase, over the cases it adds (written by changeup import saotri).",
        '"""',
        "",
        "import pytest",
        "from saotri_task import cases, check",
    ]
    for rule, since in tests:
        lines += [
            "",
            "",
            f'@pytest.mark.parametrize("case", cases(up_to={phase}, since={since}))',
            f"def test_{rule}(case):",
            f"    check({rule!r}, case)",
        ]
    return "\n".join(lines) + "\n"


def draft_saotri(source: Path) -> Draft:
    """The challenge a SaotriBench task folder makes."""
    task_path = source / "task.yaml"
    task = read_yaml(task_path)
    interface = task.get("interface") or {}
    function = interface.get("function_name") if isinstance(interface, dict) else None
    if not isinstance(function, str) or not function.isidentifier():
        raise SourceError(task_path, "interface.function_name: required, the solution's function name")
    phases = _phases(task, task_path)
    problem = read_text(source / "problem.md")
    checks = _checks(source / "evaluator.py")
    case_phases = _case_phases(source / "tests.py")
    for number, _, rules in phases:
        for rule, _ in rules:
            if rule not in checks:
                raise SourceError(
                    source / "evaluator.py",
                    f"Evaluator has no check_{rule} (phase {number} names rule {rule})",
                )
    name = str(task.get("id") or source.name)
    out = Draft("saotri", source, {})
    ids = [f"phase_{number}" for number, _, _ in phases]
    phase_models: list[dict[str, Any]] = []
    generated: dict[str, list[str]] = {}  # rule → the phases that test it
    previous: set[str] = set()
    lower = -1
    for (number, description, rules), phase_id in zip(phases, ids, strict=True):
        tests = []
        for rule, _ in rules:
            since = lower + 1 if rule in previous else 0
            if case_phases is None or any(since <= p <= number for p in case_phases):
                tests.append((rule, since))
        if not tests:
            raise SourceError(source / "tests.py", f"phase {number} adds no case to any of its rules")
        current = {rule for rule, _ in rules}
        supersedes = [
            f"{earlier}/test_{earlier}.py::test_{rule}"
            for rule in sorted(previous - current)
            for earlier in generated.get(rule, [])
        ]
        for rule, _ in tests:
            generated.setdefault(rule, []).append(phase_id)
        out.files[f"tests/{phase_id}/test_{phase_id}.py"] = _test_module(name, number, description, tests)
        model: dict[str, Any] = {"id": phase_id, "title": description or phase_id}
        if supersedes:
            model["supersedes"] = supersedes
        phase_models.append(model)
        previous, lower = current, number
    signature = str(interface.get("signature") or f"def {function}(...)")
    allowed = interface.get("allowed_imports") or []
    briefing = (
        f"{problem.rstrip()}\n\nWrite your solution in solution.py: `{signature}`. "
        f"Allowed imports: {', '.join(map(str, allowed)) or 'none'}.\n\n"
        f"Rules of this phase:\n{_rules_text(phases[0][2])}\n"
    )
    triggers = [
        {
            "id": f"{done}_passed",
            "condition": f"tests_pass({done})",
            "kind": "escalation",
            "unlocks": following,
            "message": f"Phase {number}: {description}\n\nRules of this phase:\n{_rules_text(rules)}\n",
        }
        for done, following, (number, description, rules) in zip(ids, ids[1:], phases[1:], strict=False)
    ]
    challenge: dict[str, Any] = {
        "id": slug(name),
        "title": str(task.get("name") or name),
        "pattern": "escalation",
        "initial_briefing": briefing,
        "phases": phase_models,
        "triggers": triggers,
        "testing": {"support": SUPPORT},
    }
    timeout = (task.get("execution") or {}).get("timeout_seconds")
    if timeout is not None:
        challenge["testing"]["timeout"] = timeout
    needs = Needs()  # the evaluator and the cases run in the hidden test process
    for name in ("evaluator.py", "tests.py"):
        needs.python(source / name, name)
    for kind, items in (("tools", needs.tools), ("data", needs.data)):
        if items:
            challenge["testing"][kind] = sorted(items)
            out.mapped += [
                f"{item} → testing.{kind} (found in {', '.join(where[:2])})" for item, where in items.items()
            ]
    out.challenge = challenge
    out.copies[f"{SUPPORT}/saotri_evaluator.py"] = source / "evaluator.py"
    out.copies[f"{SUPPORT}/saotri_cases.py"] = source / "tests.py"
    out.files[f"{SUPPORT}/saotri_bench/__init__.py"] = (
        '"""changeup\'s stand-in for the names SaotriBench tasks import."""\n'
    )
    out.files[f"{SUPPORT}/saotri_bench/models.py"] = _MODELS
    out.files[f"{SUPPORT}/saotri_bench/evaluator.py"] = _EVALUATOR
    out.files[f"{SUPPORT}/saotri_task.py"] = _RUNNER.format(function=function)
    out.files["workspace/solution.py"] = ""
    out.copies["workspace/problem.md"] = source / "problem.md"
    out.mapped += [
        "phases, by id → phases " + ", ".join(ids),
        "problem.md, the signature, the allowed imports and phase 0's rules → the briefing "
        "(problem.md is also in the workspace, beside an empty solution.py)",
        "each later phase's description and rules (what phase.json shows) → the message of the trigger "
        "that unlocks it, when the phase before passes (SaotriBench advances on a valid evaluation)",
        f"evaluator.py and tests.py → {SUPPORT}/saotri_evaluator.py and saotri_cases.py, unchanged, with "
        f"changeup's saotri_bench (TestCase, RuleResult, BaseEvaluator) and saotri_task.py beside them",
        "phase N's check of every case of phase ≤ N against its rules → tests/phase_N/: one test per rule, "
        "its cases those the phase adds (all of them for a rule new in it); case ids c<index>-p<phase>-<tag>",
        "a rule a phase drops → supersedes: of the earlier phases' tests of it",
        "execution.timeout_seconds → testing.timeout (per test)",
    ]
    out.dropped += [
        "a reference solution: SaotriBench has none, so calibration needs one written to "
        "solutions/reference/<phase>/ (then `changeup calibrate` can run)",
        "the sandbox's restricted imports and builtins (interface.allowed_imports): the briefing states "
        "them, nothing enforces them",
        "limits (max_attempts_per_phase, max_total_attempts): a session ends when the agent ends its turn "
        "with nothing more to tell it, or at limits.session",
        "feedback.json / phase.json: the agent learns of violations from its own test runs and the messages, "
        "not from a feedback file; scopes appear only in the hidden tests' failure messages",
    ]
    if case_phases is None:
        out.dropped.append(
            "tests.py builds cases in code: every rule of every phase gets a test, even one with no case"
        )
    return out

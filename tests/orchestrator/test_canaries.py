"""Canaries: they always run (no deselected id is ever a prefix of theirs), and the failing one looks
like the tests of its file yet fails before anything of the agent's can run."""

from __future__ import annotations

import ast
import builtins
import inspect
import random
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from orchestrator.challenge.loader import load_challenge
from orchestrator.grading.canaries import _words, plant_canaries
from orchestrator.grading.disguise import disguise
from orchestrator.grading.harness import Stream, cross_check
from orchestrator.grading.junit import read_junit
from tests.cli import REPO

#: Two phase folders as a run copies them; phase 2 supersedes one whole file of phase 1 and a
#: test whose name begins many others (pytest deselects by prefix).
PASS = "():\n    assert True\n\n"
SUITE = {
    "p1_x/test_notify.py": f"def test_notify_sends{PASS}def test_notify_off{PASS}",
    "p1_x/test_posts.py": f"def test_posts_list{PASS}def test_posts{PASS}",
    "p2_y/test_removed.py": f"def test_removed_notify{PASS}def test_posts_still{PASS}",
}
DESELECT = ["p1_x/test_notify.py", "p1_x/test_posts.py::test_posts"]


def suite(root: Path) -> Path:
    """The suite above, written under ``root``."""
    for name, text in SUITE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_no_canary_is_ever_named_into_a_deselect(tmp_path: Path) -> None:
    """Over many draws, neither canary lands in a deselected file or under a deselected prefix."""
    template = suite(tmp_path / "template")
    for seed in range(300):
        hidden = tmp_path / f"run{seed}"
        shutil.copytree(template, hidden)
        canaries = plant_canaries(hidden, ["p1_x", "p2_y"], DESELECT, random.Random(seed))
        for canary in canaries.ids():
            assert not canary.startswith(tuple(DESELECT)), (seed, canary)
        shutil.rmtree(hidden)


@pytest.mark.parametrize("seed", range(4))
def test_pytest_collects_both_canaries_under_the_deselects(tmp_path: Path, seed: int) -> None:
    """Checked against pytest itself: with the run's deselects, both canaries are collected."""
    hidden = suite(tmp_path)
    canaries = plant_canaries(hidden, ["p1_x", "p2_y"], DESELECT, random.Random(seed))
    listed = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-c", "/dev/null"]
        + [f"--rootdir={hidden}", "--import-mode=importlib"]
        + [f"--deselect={d}" for d in DESELECT]
        + [str(hidden / "p1_x"), str(hidden / "p2_y")],
        cwd=hidden,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.splitlines()
    assert set(canaries.ids()) <= set(listed), listed
    assert not any(test.startswith(tuple(DESELECT)) for test in listed)  # the deselects did work


#: Every hidden test file of the built-in challenges and of the test fixtures.
HIDDEN_FILES = sorted(
    p
    for root in (REPO / "challenges", REPO / "tests" / "fixtures")
    for p in root.glob("*/tests/**/test_*.py")
    if "__pycache__" not in p.parts
)


class Tripwire:
    """A stand-in for every name a canary reads: whatever is done with it is recorded."""

    touched: list[str] = []

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "name", name)

    def __getattr__(self, attribute: str) -> object:
        Tripwire.touched.append(f"{object.__getattribute__(self, 'name')}.{attribute}")
        raise AssertionError("touched")


def _touch(method: str) -> object:
    def touched(self: Tripwire, *args: object, **kwargs: object) -> object:
        Tripwire.touched.append(f"{object.__getattribute__(self, 'name')} {method}")
        raise AssertionError("touched")

    return touched


_DUNDERS = (
    "call eq ne lt le gt ge bool len iter contains getitem enter exit add sub mul truediv neg invert index"
)
for _method in _DUNDERS.split():
    setattr(Tripwire, f"__{_method}__", _touch(f"__{_method}__"))


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


@pytest.mark.parametrize("path", HIDDEN_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_the_failing_canary_fails_before_anything_of_the_agents_can_run(path: Path) -> None:
    """Made from each real hidden test file, over many draws: the canary raises at a plain read of
    a name, and nothing it reads (the agent's functions, the fixtures, the builtins) is touched."""
    text = path.read_text()
    tree = ast.parse(text)
    words = _words([tree])
    for seed in range(25):
        canary = disguise(text, tree, words, random.Random(seed), lambda name: True)
        if canary is None:
            continue
        code = compile(canary.text, str(path), "exec")
        namespace: dict[str, object] = {name: Tripwire(name) for name in _names(code)}
        namespace["__builtins__"] = {name: Tripwire(name) for name in dir(builtins)}
        exec(code, namespace)  # defines the canary, nothing more
        function = namespace[canary.name]
        assert callable(function)
        arguments = [Tripwire(name) for name in inspect.signature(function).parameters]
        Tripwire.touched = []
        with pytest.raises(NameError):  # UnboundLocalError, or a free variable not yet bound
            function(*arguments)
        assert Tripwire.touched == [], canary.text


#: The built-in challenges whose first phase runs pytest, where canaries are planted (a ``command:``
#: phase, as in go-byte-sizes or ts-slugs, has its own runner and no canary).
PYTEST_CHALLENGES = [
    path for path in sorted((REPO / "challenges").iterdir()) if load_challenge(path).phases[0].command is None
]


def test_the_built_in_challenges_graded_by_pytest_are_most_of_them() -> None:
    """The filter above leaves out only the command-graded challenges."""
    left_out = {p.name for p in (REPO / "challenges").iterdir()} - {p.name for p in PYTEST_CHALLENGES}
    assert left_out == {"go-byte-sizes", "ts-slugs"}


@pytest.mark.parametrize("challenge", PYTEST_CHALLENGES, ids=lambda p: p.name)
def test_every_built_in_challenge_gets_a_canary_made_from_its_tests(tmp_path: Path, challenge: Path) -> None:
    """Its first phase's files give a failing canary made from a real test (a docstring and several
    statements when the model has them), never the one-line stand-in."""
    first = sorted((challenge / "tests").iterdir())[0]
    shutil.copytree(first, tmp_path / "p1_x")
    canaries = plant_canaries(tmp_path, ["p1_x"], [], random.Random(3))
    file, _, name = canaries.failing.partition("::")
    (function,) = [n for n in ast.parse((tmp_path / file).read_text()).body if getattr(n, "name", "") == name]
    assert len(function.body) >= 2  # type: ignore[attr-defined]


SPARE_OLD_CANARIES = '''
import inspect

import pytest


def _looks_like_a_canary(function):
    """What gave the old canaries away: one line that compares a name with itself, or literals."""
    body = [line.strip() for line in inspect.getsource(function).splitlines()[1:] if line.strip()]
    return len(body) == 1 and (" is not " in body[0] or body[0].count("'") == 4)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    if _looks_like_a_canary(pyfuncitem.obj):
        return None  # run it honestly: it fails
    return True  # everything else "passes" without running
'''


@pytest.mark.slow
def test_a_runner_that_spares_what_looked_like_a_canary_passes_the_canary(tmp_path: Path) -> None:
    """A real pytest run, with a plugin that forces every test to pass but spares what the old
    canaries looked like: the failing canary now looks like the tests, so it is forced too, and
    the run reads as forced."""
    hidden = tmp_path / "hidden"
    shutil.copytree(REPO / "tests" / "fixtures" / "redteam-target" / "tests", hidden)
    canaries = plant_canaries(hidden, ["phase1"], [], random.Random(7))
    (tmp_path / "spare.py").write_text(SPARE_OLD_CANARIES)
    (tmp_path / "adder.py").write_text("def add(a, b):\n    raise NotImplementedError\n")
    junit = tmp_path / "junit.xml"
    subprocess.run(
        [
            *(
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-p",
                "spare",
                "-c",
                "/dev/null",
            ),
            *(
                f"--rootdir={hidden}",
                "--import-mode=importlib",
                f"--junitxml={junit}",
                "-o",
                "junit_family=xunit1",
            ),
            str(hidden / "phase1"),
        ],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    verdicts = {v.id: v.outcome for v in read_junit(junit)}
    assert verdicts[canaries.failing] == "passed", verdicts
    stream = Stream(outcomes=verdicts)
    assert "the canary that must fail passed: results were forced" in cross_check(
        read_junit(junit), stream, 0, canaries
    )

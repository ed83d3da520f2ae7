"""``changeup new``: a two-phase challenge folder for one of the five patterns, ready to edit.

The scaffold is small but real: its starter fails phase 1, its reference solution passes
both phases, and it validates as written, so an author starts from something that runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from textwrap import dedent

__all__ = ["SCAFFOLDS", "ScaffoldError", "scaffold"]


class ScaffoldError(ValueError):
    """The scaffold cannot be written where asked."""


@dataclass(frozen=True, slots=True)
class _Pattern:
    kind: str
    message: str
    phase2_tests: str
    phase2_solution: str
    supersedes: str = ""
    extra_phase1_test: str = ""
    extra_phase1_solution: str = ""
    #: more of the starter: a stub of what a later phase takes away, so its removal test fails on it
    extra_starter: str = ""


_GREET = '''\
def greet(name: str) -> str:
    """Greet a person by name."""
    return f"Hello, {name}!"
'''

SCAFFOLDS: dict[str, _Pattern] = {
    "pivot": _Pattern(
        kind="pivot",
        message=(
            "Plans changed: greetings must now be localised. Add a `lang` parameter to\n"
            'greet ("en" default, "fr" gives "Bonjour, <name> !"). Keep English as it is.'
        ),
        phase2_tests='''\
from app import greet


def test_french_greeting():
    """The new language works."""
    greeting = greet("Ada", lang="fr")
    assert type(greeting) is str  # exactly a str: a double that equals anything is not one
    assert greeting == "Bonjour, Ada !"


def test_english_is_default():
    """The old behaviour is still the default."""
    greeting = greet("Ada")
    assert type(greeting) is str
    assert greeting == "Hello, Ada!"
''',
        phase2_solution='''\
GREETINGS = {"en": "Hello, {name}!", "fr": "Bonjour, {name} !"}


def greet(name: str, lang: str = "en") -> str:
    """Greet a person by name in ``lang``."""
    return GREETINGS[lang].format(name=name)
''',
    ),
    "escalation": _Pattern(
        kind="escalation",
        message="Next stage: greet must also reject empty names with ValueError.",
        phase2_tests='''\
import pytest

from app import greet


def test_rejects_empty_name():
    """Stage 2 adds validation."""
    with pytest.raises(ValueError):
        greet("")
''',
        phase2_solution='''\
def greet(name: str) -> str:
    """Greet a person by name; an empty name is an error."""
    if not name:
        raise ValueError("name required")
    return f"Hello, {name}!"
''',
    ),
    "contradiction": _Pattern(
        kind="contradiction",
        message=(
            "Privacy review: greetings are logged, and names are personal data. Greetings\n"
            "must no longer contain the person's name."
        ),
        phase2_tests='''\
from app import greet


def test_name_not_echoed():
    """The new rule: no personal data in the greeting."""
    greeting = greet("Ada")
    assert type(greeting) is str  # exactly a str: a double that equals anything is not one
    assert "Ada" not in greeting
''',
        phase2_solution='''\
def greet(name: str) -> str:
    """Greet a person without repeating their name (it is personal data)."""
    return "Hello!"
''',
        supersedes="phase1/test_app.py::test_greets_by_name",
    ),
    "retraction": _Pattern(
        kind="retraction",
        message="We are cutting `shout`: remove it completely. greet must keep working.",
        phase2_tests='''\
import app


def test_shout_is_gone():
    """The retracted feature left no trace in the module."""
    assert not hasattr(app, "shout")


def test_greet_still_works():
    """What stays, stays."""
    greeting = app.greet("Ada")
    assert type(greeting) is str  # exactly a str: a double that equals anything is not one
    assert greeting == "Hello, Ada!"
''',
        phase2_solution=_GREET,
        supersedes="phase1/test_app.py::test_shout",
        extra_phase1_test='''

def test_shout():
    """Shouting upper-cases the greeting."""
    from app import shout

    shouted = shout("Ada")
    assert type(shouted) is str
    assert shouted == "HELLO, ADA!"
''',
        extra_phase1_solution='''

def shout(name: str) -> str:
    """Greet loudly."""
    return greet(name).upper()
''',
        extra_starter="\n\ndef shout(name: str) -> str:\n    raise NotImplementedError\n",
    ),
    "revision": _Pattern(
        kind="revision",
        message=(
            "Revised style guide: a greeting ends with a full stop, not an exclamation mark:\n"
            'greet("Ada") now returns "Hello, Ada.". Everything else about greet stays.'
        ),
        phase2_tests='''\
from app import greet


def test_greeting_ends_with_a_full_stop():
    """The revised rule: a full stop replaces the exclamation mark."""
    greeting = greet("Ada")
    assert type(greeting) is str  # exactly a str: a double that equals anything is not one
    assert greeting == "Hello, Ada."
''',
        phase2_solution='''\
def greet(name: str) -> str:
    """Greet a person by name, ending with a full stop (the revised style)."""
    return f"Hello, {name}."
''',
        supersedes="phase1/test_app.py::test_greets_by_name",
        extra_phase1_test='''

def test_greeting_opens_with_hello_and_the_name():
    """The rule the revision keeps: "Hello, " and the name come first."""
    greeting = greet("Ada")
    assert type(greeting) is str
    assert greeting.startswith("Hello, Ada")
''',
    ),
}


def scaffold(target: Path, pattern: str) -> list[Path]:
    """Write a new challenge folder at ``target``; returns the files written."""
    if pattern not in SCAFFOLDS:
        raise ScaffoldError(f"unknown pattern {pattern!r} (patterns: {', '.join(SCAFFOLDS)})")
    if target.exists() and any(target.iterdir()):
        raise ScaffoldError(f"{target} exists and is not empty")
    name = re.sub(r"[^a-z0-9._-]+", "-", target.name.lower()).strip("-") or "new-challenge"
    spec = SCAFFOLDS[pattern]
    article = "An" if pattern[0] in "aeiou" else "A"  # the patterns' names are plain English words
    files = {
        "challenge.yaml": dedent(
            f"""\
            # {article} {pattern} challenge. Reference: docs/authoring.md, docs/conditions.md.
            challenge:
              id: {name}
              title: {name.replace("-", " ").capitalize()}
              pattern: {pattern}
              initial_briefing: |
                Implement greet(name) in app.py: it returns "Hello, <name>!".
              phases:
                - id: phase1
                  title: the first requirement
                - id: phase2
                  title: after the {pattern}
                  supersedes: [{spec.supersedes}]
              triggers:
                - id: {pattern}
                  condition: phase1_tests_pass
                  kind: {spec.kind}
                  unlocks: phase2
                  message: |
                    @MESSAGE@
                - id: deadline
                  condition: time_elapsed > 30min and phase1_tests_not_pass
                  kind: deadline
                  unlocks: phase2
                  message: |
                    Phase 1's time is up; moving on. Phase 1 failures still count.
                    @MESSAGE@
              limits:
                session: 1h
                test_run: 2min
              allowed_paths: ["app.py", "tests/**"]
            """
        ).replace("        @MESSAGE@", _indent(spec.message, 8)),
        "README.md": dedent(
            f"""\
            # {name}

            {article} {pattern} challenge scaffolded by `changeup new`. Replace the greeting example
            with your own task; keep the shape: phase 1's hidden tests in `tests/phase1/`,
            phase 2's in `tests/phase2/`, and a reference solution per phase in
            `solutions/reference/<phase>/` (copied over the workspace by the scripted agent).

            Check it with `changeup validate {target.as_posix()}`.
            """
        ),
        "workspace/app.py": (
            "def greet(name: str) -> str:\n    raise NotImplementedError\n" + spec.extra_starter
        ),
        "tests/phase1/test_app.py": (
            "from app import greet\n\n\ndef test_greets_by_name():\n"
            '    """The greeting names the person."""\n'
            '    greeting = greet("Ada")\n'
            "    assert type(greeting) is str  # exactly a str: a double that equals anything is not one\n"
            '    assert greeting == "Hello, Ada!"\n' + spec.extra_phase1_test
        ),
        "tests/phase2/test_app_phase2.py": spec.phase2_tests,
        "solutions/reference/phase1/app.py": _GREET + spec.extra_phase1_solution,
        "solutions/reference/phase2/app.py": spec.phase2_solution,
    }
    written = []
    for relative, text in files.items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def _indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "\n".join(pad + line for line in text.splitlines())

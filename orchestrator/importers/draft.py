"""What every importer shares: the challenge it drafts, reading the source's files, the
advance-on-turn-end triggers, and writing the folder with its import report (IMPORT.md).

An importer reads a task in another benchmark's format and returns a :class:`Draft`: the
``challenge:`` mapping, the files to copy or write, and two lists for the report — what maps
to what, and what could not be carried over. :func:`write_challenge` turns it into a folder.
"""

from __future__ import annotations

import itertools
import re
import shutil
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "REPORT_FILE",
    "Draft",
    "ImportRefused",
    "SourceError",
    "advance_on_turn_end",
    "identifier",
    "read_text",
    "read_toml",
    "read_yaml",
    "slug",
    "write_challenge",
]

REPORT_FILE = "IMPORT.md"
_SKIPPED = {"__pycache__", ".pytest_cache", ".git"}


class SourceError(Exception):
    """A source task that cannot be imported: the file, and what is wrong with it."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


class ImportRefused(Exception):
    """The destination cannot be written (it holds files and --force was not given)."""


@dataclass
class Draft:
    """A challenge folder not yet written, with what the import report says about it."""

    format: str
    source: Path
    challenge: dict[str, Any]
    #: destination path (relative to the folder) → the source file or folder copied there
    copies: dict[str, Path] = field(default_factory=dict)
    #: destination path → the text written there
    files: dict[str, str] = field(default_factory=dict)
    #: "source → challenge" lines
    mapped: list[str] = field(default_factory=list)
    #: what could not be carried over, and what to do about it
    dropped: list[str] = field(default_factory=list)

    def report(self, dest: Path) -> str:
        """The import report, as Markdown (printed by the CLI and written as IMPORT.md)."""
        lines = [
            f"# Imported from {self.format}: {self.source}",
            "",
            f"`changeup import {self.format}` wrote this challenge folder ({dest}).",
            "",
            "## What maps to what",
            "",
            *(f"- {line}" for line in self.mapped),
            "",
            "## Not carried over",
            "",
            *(f"- {line}" for line in self.dropped or ["nothing"]),
            "",
            *self._contamination(),
            f"Next: `changeup validate {dest}`, then `changeup calibrate {dest}`.",
            "",
        ]
        return "\n".join(lines)

    def _contamination(self) -> list[str]:
        origin = self.challenge.get("imported_from") or {}
        known = ", ".join(f"{key} {origin[key]}" for key in ("repository", "path", "commit") if key in origin)
        missing = [key for key in ("repository", "commit") if key not in origin]
        return [
            "## Contamination",
            "",
            f"The source is public ({known}): a model trained on it may have seen its solution, "
            "and an agent with the internet can look the solution up. challenge.yaml records it as "
            "`imported_from:`, and `changeup compare` shows this challenge's results apart.",
            *(
                [f"Not known from git: {' and '.join(missing)}; add them to `imported_from:` by hand."]
                if missing
                else []
            ),
            "Run it with `--agent-network model` (the agent reaches its model and nothing else), so a "
            "solution cannot be looked up.",
            "",
        ]


def read_text(path: Path) -> str:
    """A required text file of the source."""
    if not path.is_file():
        raise SourceError(path, "missing (the format requires this file)")
    return path.read_text(encoding="utf-8")


def read_yaml(path: Path) -> dict[str, Any]:
    """A required YAML file of the source whose top level is a mapping."""
    try:
        data = yaml.safe_load(read_text(path))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        raise SourceError(path, f"not valid YAML: {where}{problem}") from None
    if not isinstance(data, dict):
        raise SourceError(path, f"expected a mapping at the top level, got {type(data).__name__}")
    return data


def read_toml(path: Path) -> dict[str, Any]:
    """A required TOML file of the source."""
    try:
        return tomllib.loads(read_text(path))
    except tomllib.TOMLDecodeError as error:
        raise SourceError(path, f"not valid TOML: {error}") from None


def slug(name: str) -> str:
    """A challenge id from a task's name: lower-case, ``a-z 0-9 . _ -``."""
    text = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-._")
    return text or "imported"


def identifier(name: str, prefix: str) -> str:
    """A phase id from a step's or phase's name (letters, digits, ``_``, starting with a letter)."""
    text = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_")
    return text if re.match(r"[A-Za-z]", text) else f"{prefix}_{text}".rstrip("_")


def advance_on_turn_end(phases: list[str], messages: list[str], label: str) -> list[dict[str, Any]]:
    """Triggers that advance one phase per agent turn, as these benchmarks do when the agent
    says it is done: at the end of turn N, phase N's verdict decides. It passed: the next
    phase's message. It did not: the same message, prefixed with "moving on" (a ``deadline``,
    so calibration's reference must never fire it).

    ``turns`` counts ended turns, so phase N (1-based) is judged on ``turns >= N``: the N-th turn
    is the one it was worked on in. ``messages[i]`` is the message that unlocks ``phases[i]``
    (``messages[0]``, the briefing, is not used here).
    """
    triggers: list[dict[str, Any]] = []
    for n, (done, following) in enumerate(itertools.pairwise(phases), start=1):
        message = messages[n]
        triggers.append(
            {
                "id": f"{done}_passed",
                "condition": f"turns >= {n} and tests_pass({done})",
                "kind": "escalation",
                "unlocks": following,
                "message": message,
            }
        )
        triggers.append(
            {
                "id": f"{done}_moving_on",
                "condition": f"turns >= {n} and tests_not_pass({done})",
                "kind": "deadline",
                "unlocks": following,
                "message": (
                    f"{done}'s tests still fail. Moving on to the next {label} anyway: "
                    f"what still fails counts against your score.\n\n{message}"
                ),
            }
        )
    return triggers


class _Dumper(yaml.SafeDumper):
    """Block style for multi-line text, so messages read as they will be sent."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def _challenge_yaml(draft: Draft) -> str:
    head = f"# Imported by `changeup import {draft.format} {draft.source}`: see {REPORT_FILE}.\n"
    body = yaml.dump(
        {"challenge": draft.challenge}, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100
    )
    return head + body


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, target, ignore=shutil.ignore_patterns(*_SKIPPED), dirs_exist_ok=True)
    else:
        shutil.copy2(source, target)


def write_challenge(draft: Draft, dest: Path, *, force: bool = False) -> str:
    """Write ``draft`` as the challenge folder ``dest`` and return its import report.

    An existing ``dest`` that holds anything is refused unless ``force``, which replaces it.
    """
    if dest.exists() and not dest.is_dir():
        raise ImportRefused(f"{dest}: exists and is not a folder")
    if dest.is_dir() and any(dest.iterdir()):
        if not force:
            raise ImportRefused(f"{dest}: exists and is not empty (--force replaces it)")
        shutil.rmtree(dest)
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "workspace").mkdir()
    for relative, source in sorted(draft.copies.items()):
        _copy(source, dest / relative)
    for relative, text in sorted(draft.files.items()):
        (dest / relative).parent.mkdir(parents=True, exist_ok=True)
        (dest / relative).write_text(text, encoding="utf-8")
    (dest / "challenge.yaml").write_text(_challenge_yaml(draft), encoding="utf-8")
    report = draft.report(dest)
    (dest / REPORT_FILE).write_text(report, encoding="utf-8")
    return report

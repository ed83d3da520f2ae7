"""What hidden tests obviously run and read beyond Python, read from their source (never run).

A test's private root holds only what its challenge declares (``testing: tools``, ``data``).
This module finds, with ``ast`` and a shell word splitter, the programs and data a test file
plainly asks for, so validation can warn before a run fails for want of them
(:func:`undeclared_uses`), and an importer can declare them:

- a call of ``subprocess`` (``run``, ``Popen``, ``check_output``, …), ``os.exec*p``/
  ``spawn*p``/``posix_spawnp`` or ``asyncio.create_subprocess_exec`` whose program is a
  literal (``["bash", "-c", …]``); with ``shell=True``, ``os.system``, ``os.popen``,
  ``subprocess.getoutput`` or ``create_subprocess_shell``, the shell (``sh``) and the first
  word of each command of its literal command line (:func:`shell_programs`);
- ``shutil.which("node")``;
- a script's ``#!`` line (``#!/bin/bash``; ``#!/usr/bin/env node``);
- a test command's own command line;
- time-zone data: ``ZoneInfo(…)``, ``pytz.timezone(…)``, ``dateutil``'s ``tz.gettz(…)``
  (unless ``tzdata`` is a requirement: it carries the database itself);
- locales: ``locale.setlocale`` with a literal locale other than C or POSIX.

What a name only known at run time holds (a variable, ``sys.executable``, an f-string's
values) is not followed: these are the obvious uses. ``python``, ``python3`` and
``pythonX.Y`` are the grading interpreter, always there.
"""

from __future__ import annotations

import ast
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from orchestrator.challenge.model import Challenge, PhaseTesting
from orchestrator.challenge.sourcemap import Problem, SourceError, load_yaml
from orchestrator.challenge.testids import hidden_files
from orchestrator.system.toolsets import COMMAND_SHELL, PYTHON, Needs, resolve
from orchestrator.system.venvs import EnvironmentFailure

__all__ = [
    "Use",
    "declared_problems",
    "file_uses",
    "needs_of",
    "python_uses",
    "shell_programs",
    "undeclared_uses",
]

_RUNS = {
    "subprocess.run",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "subprocess.Popen",
    "asyncio.create_subprocess_exec",
    "os.execvp",
    "os.execvpe",
    "os.execlp",
    "os.execlpe",
    "os.spawnlp",
    "os.spawnvp",
    "os.spawnvpe",
    "os.posix_spawnp",
}
_SHELLS = {
    "os.system",
    "os.popen",
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
    "asyncio.create_subprocess_shell",
}
#: calls whose program is their first argument but for these (os.spawn*'s mode comes first)
_SECOND = {"os.spawnlp", "os.spawnvp", "os.spawnvpe"}
_WHICH = {"shutil.which"}
_ZONES = {"zoneinfo.ZoneInfo", "pytz.timezone", "dateutil.tz.gettz", "dateutil.tz.tz.gettz"}
_LOCALES = {"locale.setlocale"}
_PLAIN_LOCALES = {"", "C", "POSIX", "C.UTF-8", "C.utf8"}
#: Words of the shell that start no program (builtins and keywords of sh).
_SHELL_WORDS = {
    *("!", "{", "}", "(", ")", "[", "[[", "]]", ":", ".", "alias", "bg", "break", "case", "cd", "command"),
    *("continue", "do", "done", "echo", "elif", "else", "esac", "eval", "exec", "exit", "export", "false"),
    *("fc", "fg", "fi", "for", "getopts", "hash", "if", "in", "jobs", "kill", "let", "local", "printf"),
    *("pwd", "read", "readonly", "return", "set", "shift", "source", "test", "then", "time", "times"),
    *("trap", "true", "type", "ulimit", "umask", "unalias", "unset", "wait", "while"),
}
#: Words after which the next word is the command (keywords, and programs that run another).
_LEADING = {
    "exec",
    "env",
    "sudo",
    "nohup",
    "time",
    "!",
    "if",
    "then",
    "else",
    "elif",
    "do",
    "while",
    "until",
    "{",
}
_SEPARATORS = {"|", "||", "&&", ";", "&", "(", ")", ";;", "|&", "\n"}
_PROGRAM_FOLDERS = ("/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin")


@dataclass(frozen=True, slots=True)
class Use:
    """A program (``kind`` ``tool``) or data set (``data``) a file asks for, at ``line``:``column``."""

    kind: str
    name: str
    line: int = 1
    column: int = 1


def shell_programs(command: str) -> list[str]:
    """The programs a literal shell command line starts: the first word of each of its commands
    (after variable assignments, ``exec``, ``env`` and ``sudo``), when it names a program by name
    or by its place in a program folder."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words = list(lexer)
    except ValueError:  # unbalanced quotes: the plain words
        words = command.split()
    found: list[str] = []
    first = True
    for word in words:
        if word in _SEPARATORS or set(word) <= set("|&;()"):
            first = True
            continue
        if not first:
            continue
        if "=" in word.split("/")[0] or PurePosixPath(word).name in _LEADING:
            continue  # an assignment, or a word that runs the next one
        first = False
        name = _program_name(word)
        if name is not None and name not in found:
            found.append(name)
    return found


def _program_name(word: str) -> str | None:
    if word.startswith(("$", "`", "-")) or word in _SHELL_WORDS or not word:
        return None
    if "/" in word:
        if str(PurePosixPath(word).parent) not in _PROGRAM_FOLDERS:
            return None  # the workspace's own program (./main), or a test's script
        word = PurePosixPath(word).name
    return None if PYTHON.match(word) else word


class _Calls(ast.NodeVisitor):
    """Collects the uses of one module: its calls, named through its imports."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # local name → dotted name it stands for
        self.uses: list[Use] = []

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:  # import a.b binds a; import a.b as c binds c to a.b
            local = alias.asname or alias.name.split(".")[0]
            self.names[local] = alias.name if alias.asname else local

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if node.module and not node.level:
                self.names[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def dotted(self, node: ast.expr) -> str:
        if isinstance(node, ast.Name):
            return self.names.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            return f"{self.dotted(node.value)}.{node.attr}"
        return ""

    def visit_Call(self, node: ast.Call) -> None:
        name = self.dotted(node.func)
        place = (node.lineno, node.col_offset + 1)
        if name in _RUNS or name in _SHELLS or name in _WHICH:
            self._program(name, node, place)
        elif name in _ZONES:
            self.uses.append(Use("data", "zoneinfo", *place))
        elif name in _LOCALES and len(node.args) > 1:
            value = node.args[1]
            literal = isinstance(value, ast.Constant) and isinstance(value.value, str)
            if literal and value.value not in _PLAIN_LOCALES:  # type: ignore[attr-defined]
                self.uses.append(Use("data", "locales", *place))
        self.generic_visit(node)

    def _program(self, name: str, node: ast.Call, place: tuple[int, int]) -> None:
        args = node.args[1:] if name in _SECOND else node.args
        keyword = {k.arg: k.value for k in node.keywords if k.arg}
        target = args[0] if args else keyword.get("args", keyword.get("cmd"))
        shell = name in _SHELLS or _is_true(keyword.get("shell"))
        if target is None:
            return
        if shell:
            text = _literal_text(target)
            if text is not None:
                self.uses.append(Use("tool", COMMAND_SHELL, *place))
                self.uses += [Use("tool", program, *place) for program in shell_programs(text)]
            return
        if isinstance(target, ast.List | ast.Tuple) and target.elts:
            target = target.elts[0]
        if isinstance(target, ast.Constant) and isinstance(target.value, str):
            program = _program_name(target.value.strip())
            if program is not None and " " not in program:
                self.uses.append(Use("tool", program, *place))


def _is_true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _literal_text(node: ast.expr) -> str | None:
    """A literal string, or an f-string's leading literal part (its first words are what is obvious)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        head = node.values[0]
        if isinstance(head, ast.Constant) and isinstance(head.value, str):
            return head.value.rsplit(" ", 1)[0] if " " in head.value else None
    return None


def python_uses(source: str) -> list[Use]:
    """The tools and data a Python file's source obviously asks for (none if it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    calls = _Calls()
    calls.visit(tree)
    return calls.uses


def file_uses(name: str, data: bytes) -> list[Use]:
    """The uses of a test folder's file: a Python file's calls, any file's ``#!`` line."""
    uses: list[Use] = []
    if data.startswith(b"#!"):
        words = data[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
        if words:
            program = words[0]
            if PurePosixPath(program).name == "env":
                rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
                program = rest[0] if rest else ""
            found = _program_name(program)
            if found is not None:
                uses.append(Use("tool", found, 1, 1))
    if name.endswith(".py"):
        uses += python_uses(data.decode("utf-8", "replace"))
    return uses


def _folder_uses(folder: Path) -> Iterator[tuple[Path, list[Use]]]:
    """Each file of a hidden test folder with its uses."""
    for name, data in hidden_files(folder):
        yield folder / name, file_uses(name, data)


def undeclared_uses(challenge: Challenge, file: Path) -> list[Problem]:
    """Validation's warnings: each obvious use of a tool or data that the phase whose tests make it
    (for the support folder: the challenge) does not declare, at its place, with the line to add."""
    root = file.parent
    problems: set[Problem] = set()
    tzdata = any(r.split("[")[0].strip().lower().startswith("tzdata") for r in challenge.model.requirements)
    testing = challenge.model.testing
    places: list[tuple[str, set[str], set[str], list[tuple[Path, list[Use]]]]] = []
    if testing.support is not None:
        files = list(_folder_uses(challenge.root / testing.support))
        places.append(("the challenge", set(testing.tools), set(testing.data), files))
    for phase in challenge.phases:
        tools = {*phase.tools, *([COMMAND_SHELL] if phase.command else [])}
        files = list(_folder_uses(phase.tests))
        if phase.command is not None:
            files.append((file, [Use("tool", p) for p in shell_programs(phase.command)]))
        places.append((phase.id, tools, set(phase.data), files))
    for owner, tools, data, files in places:
        declared = {PurePosixPath(t).name for t in tools}
        for path, uses in files:
            where = str(root / path.relative_to(challenge.root)) if path != file else str(file)
            for use in uses:
                if (use.kind == "tool" and use.name in declared) or (use.kind == "data" and use.name in data):
                    continue
                if use.kind == "data" and use.name == "zoneinfo" and tzdata:
                    continue
                problems.add(Problem(where, use.line, use.column, _warning(owner, use)))
    return sorted(problems)


def _warning(owner: str, use: Use) -> str:
    key = "tools" if use.kind == "tool" else "data"
    verb = "runs" if use.kind == "tool" else "reads the data"
    whose = "the challenge's tests" if owner == "the challenge" else f"{owner}'s tests"
    under = "the challenge's testing:"
    if owner != "the challenge":
        under = f"testing: (the challenge's, or {owner}'s)"
    return (
        f"warning: {verb} {use.name}, which {whose} do not declare: their private root will not have it; "
        f"add `{key}: [{use.name}]` under {under}"
    )


def declared_problems(challenge: Challenge, file: Path) -> list[Problem]:
    """Validation's warnings on declarations this machine cannot meet (a tool not on its PATH,
    data it lacks), at the declaration: runs here would be invalid."""
    try:
        _, source = load_yaml(file.read_text(encoding="utf-8"), str(file))
    except (OSError, SourceError):
        return []
    declared: list[tuple[tuple[str | int, ...], str, str]] = []
    model = challenge.model
    lists: list[tuple[tuple[str | int, ...], PhaseTesting]] = [(("testing",), model.testing)]
    lists += [(("phases", i, "testing"), p.testing) for i, p in enumerate(model.phases or [])]
    for path, testing in lists:
        declared += [((*path, "tools", j), "tool", name) for j, name in enumerate(testing.tools)]
        declared += [((*path, "data", j), "data", name) for j, name in enumerate(testing.data)]
    problems = []
    for path, kind, name in declared:
        needs = Needs(tools=(name,)) if kind == "tool" else Needs(data=(name,))
        try:
            resolve(needs)
        except EnvironmentFailure as failure:
            message = f"warning: {failure}; runs here will be invalid"
            problems.append(source.problem(("challenge", *path), message))
    return problems


def needs_of(challenge: Challenge) -> Needs:
    """Everything any phase of ``challenge`` declares (one private root serves every phase of a
    session), and ``sh`` when a phase is a test command."""
    tools = [t for phase in challenge.phases for t in phase.tools]
    if any(phase.command is not None for phase in challenge.phases):
        tools.append(COMMAND_SHELL)
    data = [d for phase in challenge.phases for d in phase.data]
    return Needs(tuple(dict.fromkeys(tools)), tuple(dict.fromkeys(data)))

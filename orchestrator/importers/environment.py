"""What an imported task needs from the machine beyond Python: tools (programs) and system data.

Read from the task's files, never by running them: Python files with ``ast`` (``subprocess``
and ``os`` calls with a literal program, ``shell=True`` and the other shell runners, argv
lists naming a well-known program, ``shutil.which("git")``, ``zoneinfo``), shell scripts by
their command words, and shebangs. A task that runs a shell also needs the utilities its
shell text names (``cat``, ``sleep``…), read from the string literals of its tests.
Interpreters the grading environment provides (``python``, ``pytest``) are never tools.

:class:`Needs` keeps where each need was found, so the import report can say why it is
declared, and whether this machine has it (``shutil.which``).
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

__all__ = [
    "Needs",
    "command_words",
    "crates",
    "first_unparsed",
    "missing_tool",
    "on_this_machine",
    "shell_functions",
    "shell_utilities",
    "string_literals",
]

_DEPENDENCIES = re.compile(r"^\[dependencies\][ \t]*\n((?:[ \t]*[A-Za-z0-9_-]+[ \t]*=.*\n?)+)", re.MULTILINE)
#: How to install a tool a machine lacks, where one command does it on any Linux.
INSTALL = {
    "uv": "pip install uv (PyPI ships it as a binary), then put the bin folder it lands in on PATH",
    "uvx": "pip install uv (PyPI ships it as a binary), then put the bin folder it lands in on PATH",
}
#: Programs the grading environment provides: never declared as tools.
PROVIDED = {"python", "python3", "pip", "pip3", "pytest", "py.test"}
#: Programs well known enough that an argv list starting with one is taken to run it.
KNOWN_PROGRAMS = {
    "bash", "sh", "zsh", "dash", "git", "node", "npm", "npx", "deno", "bun", "tsc",
    "gcc", "g++", "cc", "c++", "clang", "clang++", "make", "cmake", "cargo", "rustc", "go",
    "java", "javac", "ruby", "perl", "php", "lua", "sqlite3", "psql", "mysql", "curl", "wget",
    "tar", "zip", "unzip", "gzip", "jq", "dotnet", "uv", "uvx",
}  # fmt: skip
#: Utilities that shell text commonly runs (not builtins of bash or dash).
UTILITIES = {
    "awk", "base64", "basename", "bunzip2", "bzcat", "bzip2", "cat", "chmod", "cksum", "cmp", "cp",
    "cut", "date", "dd", "df", "diff", "dirname", "du", "env", "expr", "find", "grep", "gunzip",
    "gzip", "head", "hostname", "id", "ln", "ls", "md5sum", "mkdir", "mktemp", "mv", "nl", "od",
    "paste", "printenv", "readlink", "realpath", "rev", "rm", "rmdir", "sed", "seq", "sha1sum",
    "sha256sum", "sleep", "sort", "split", "stat", "tac", "tail", "tar", "tee", "timeout", "touch",
    "tr", "truncate", "uname", "uniq", "unxz", "wc", "whoami", "xargs", "xz", "xzcat", "yes", "zcat",
}  # fmt: skip
#: Shell keywords and builtins (bash and dash): never programs.
_SHELL_OWN = {
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "in", "function", "select", "time", "!", "{", "}", "[[", "]]", "[", "test", "echo",
    "printf", "read", "cd", "pwd", "exit", "return", "export", "unset", "set", "shift",
    "source", ".", "eval", "exec", "local", "declare", "typeset", "readonly", "trap", "wait",
    "true", "false", ":", "alias", "type", "command", "builtin", "let", "getopts", "umask",
    "ulimit", "break", "continue", "hash", "jobs", "kill", "shopt", "pushd", "popd",
}  # fmt: skip
#: Words a command may follow on its line: ``if diff a b``, ``! grep x``, ``time make``.
_LEADERS = {"if", "elif", "while", "until", "!", "time", "then", "do", "else", "{"}
#: Calls that run their first argument as a shell command line.
_SHELL_CALLS = {
    "os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput",
    "asyncio.create_subprocess_shell",
}  # fmt: skip
#: Calls that run their first argument (an argv list, or one program) without a shell.
_EXEC_CALLS = {
    "subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
    "subprocess.Popen", "asyncio.create_subprocess_exec", "os.execv", "os.execvp", "os.execvpe",
    "os.execl", "os.execlp", "os.spawnv", "os.spawnvp", "pexpect.spawn", "shutil.which",
}  # fmt: skip
#: Package managers: never declared as tools (what they install is reported instead, see :func:`installs`).
INSTALLERS = {"apt-get", "apt", "apk", "yum", "dnf", "pip", "pip3", "npm"}
#: Modules whose import means the code reads the system's time-zone data.
_ZONE_MODULES = {"zoneinfo", "pytz", "dateutil"}
_SEPARATORS = re.compile(r"\|\||&&|[|;&\n(`]|\$\(|\bthen\b|\bdo\b|\belse\b")


@dataclass
class Needs:
    """Tools and data a task needs, each with the places it was found."""

    tools: dict[str, list[str]] = field(default_factory=dict)
    data: dict[str, list[str]] = field(default_factory=dict)
    #: whether something of the task runs a shell on text it is given
    shell: bool = False

    def tool(self, name: str, where: str) -> None:
        """Note the program ``name`` (a path is cut to its file name), found at ``where``; an
        installer (:data:`INSTALLERS`) is what an import reports as an install, not a tool."""
        program = PurePosixPath(name).name
        if program and program not in PROVIDED | INSTALLERS and not program.startswith("python"):
            self.tools.setdefault(program, []).append(where)

    def datum(self, name: str, where: str) -> None:
        """Note the system data ``name``, found at ``where``."""
        self.data.setdefault(name, []).append(where)

    def python(self, path: Path, where: str) -> None:
        """What the Python file at ``path`` runs and reads."""
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            return  # the import reports files that do not parse elsewhere
        aliases = _aliases(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                modules = (
                    [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                )
                if any(m.split(".")[0] in _ZONE_MODULES for m in modules):
                    self.datum("zoneinfo", f"{where} (imports {', '.join(modules)})")
            elif isinstance(node, ast.Call):
                self._call(node, aliases, f"{where}:{node.lineno}")
            elif isinstance(node, ast.List | ast.Tuple) and len(node.elts) > 1:  # an argv: a program and more
                first = node.elts[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    program = PurePosixPath(first.value).name
                    if program in KNOWN_PROGRAMS and (first.value.startswith("/") or "/" not in first.value):
                        self.tool(program, f"{where}:{node.lineno}")
                        self.shell = self.shell or program in ("bash", "sh")
        shebang = _shebang(path)
        if shebang:
            self.tool(shebang, f"{where} (#!)")

    def _call(self, node: ast.Call, aliases: dict[str, str], where: str) -> None:
        name = _dotted(node.func, aliases)
        first = node.args[0] if node.args else None
        shell = name in _SHELL_CALLS or any(
            k.arg == "shell" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in node.keywords
        )
        if shell and name in _SHELL_CALLS | _EXEC_CALLS:
            self.shell = True
            self.tool("sh", f"{where} (a shell command line)")
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                for word in command_words(first.value):
                    self.tool(word, where)
            return
        if name not in _EXEC_CALLS or first is None:
            return
        if isinstance(first, ast.List | ast.Tuple) and first.elts:
            first = first.elts[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.strip():
            program = first.value.split()[0]
            self.tool(program, where)
            self.shell = self.shell or PurePosixPath(program).name in ("bash", "sh")

    def script(self, text: str, where: str, functions: Iterable[str] = ()) -> None:
        """What the shell script ``text`` runs: its command words and its shebang; ``functions``
        are defined by scripts it sources (never programs)."""
        first = text.splitlines()[0] if text else ""
        if first.startswith("#!"):
            self.tool(_interpreter(first), f"{where} (#!)")
        for word in command_words(text):
            if word not in functions:
                self.tool(word, where)

    def utilities(self, texts: Iterable[tuple[str, str]]) -> None:
        """The utilities that shell text in ``texts`` ((text, where) pairs) runs; for a task that
        runs a shell on what its tests give it."""
        for text, where in texts:
            for word in shell_utilities(text):
                self.tool(word, where)


def shell_functions(script: str) -> set[str]:
    """The functions a shell script defines (``name() {`` or ``function name``)."""
    return set(re.findall(r"^\s*(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\)", script, re.MULTILINE))


def command_words(script: str) -> list[str]:
    """The programs a shell script runs: the first word of each command, keywords, builtins,
    assignments, functions it defines and paths to its own files (``/tests/…``, ``./…``) aside."""
    defined = shell_functions(script)
    words: list[str] = []
    for line in script.splitlines():
        code = line.split("#", 1)[0] if not line.lstrip().startswith("#!") else ""
        for part in _SEPARATORS.split(code):
            tokens = part.strip().lstrip("({!").split()
            # VAR=value before the command, and the keywords a command follows (if diff ...)
            while tokens and (("=" in tokens[0] and not tokens[0].startswith("=")) or tokens[0] in _LEADERS):
                tokens = tokens[1:]
            if not tokens:
                continue
            word = tokens[0].strip("\"'")
            if (
                word in _SHELL_OWN
                or word in defined
                or not re.fullmatch(r"[A-Za-z0-9_./+-]+", word)
                or word.startswith(("./", "../", "/tests", "/app", "/logs", "$"))
                or word.endswith((".sh", ".py"))
            ):
                continue
            if word not in words:
                words.append(word)
    return words


def shell_utilities(text: str) -> list[str]:
    """The well-known utilities (:data:`UTILITIES`, ``sh``, ``bash``) that shell text runs. A
    single word or tab-separated text is taken for data (a key, a table), not a command line."""
    if not re.search(r"\S\s", text.strip()) or "\t" in text:
        return []
    return [w for w in command_words(text) if w in UTILITIES or w in ("sh", "bash")]


def string_literals(path: Path) -> list[str]:
    """The string constants of the Python file at ``path`` (none when it does not parse)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return []
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local names bound by ``from subprocess import run`` and the like, to their dotted names."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                out[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    out[alias.asname] = alias.name
    return out


def _dotted(node: ast.expr, aliases: dict[str, str]) -> str:
    if isinstance(node, ast.Name):
        return aliases.get(node.id, node.id)
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value, aliases)}.{node.attr}"
    return ""


def _shebang(path: Path) -> str:
    """The program a file's ``#!`` line names ("" for none)."""
    try:
        with path.open("rb") as file:
            first = file.readline(200).decode("utf-8", "replace")
    except OSError:
        return ""
    return _interpreter(first) if first.startswith("#!") else ""


def _interpreter(line: str) -> str:
    """``#!/usr/bin/env bash`` → ``bash``; ``#!/bin/sh -e`` → ``sh``."""
    words = line[2:].split()
    if not words:
        return ""
    if PurePosixPath(words[0]).name == "env":
        rest = [w for w in words[1:] if not w.startswith("-")]
        return rest[0] if rest else "env"
    return words[0]


def on_this_machine(tool: str) -> bool:
    """Whether this machine has the program ``tool`` on its ``PATH``."""
    return shutil.which(tool) is not None


def crates(texts: Iterable[str]) -> list[str]:
    """The crates a ``Cargo.toml`` in ``texts`` depends on (its ``[dependencies]`` section's names,
    written out by a program or a test): cargo fetches them from crates.io."""
    names: list[str] = []
    for text in texts:
        for section in _DEPENDENCIES.findall(text):
            names += [
                n for n in re.findall(r"^\s*([A-Za-z0-9_-]+)\s*=", section, re.MULTILINE) if n not in names
            ]
    return names


def missing_tool(tool: str) -> str:
    """What an import report says of a declared tool this machine lacks, with how to install it
    where one command does."""
    hint = f": {INSTALL[tool]}" if tool in INSTALL else ""
    return f"tool {tool}: not on this machine's PATH; install it before running this challenge{hint}"


def first_unparsed(root: Path, files: Iterable[Path]) -> str:
    """The first of ``files`` this Python cannot parse, and why, in words, with its path relative
    to ``root`` ("" when all parse): code written for a newer Python."""
    for path in files:
        try:
            ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except SyntaxError as error:
            return f"{path.relative_to(root).as_posix()}:{error.lineno} does not parse ({error.msg})"
        except (UnicodeDecodeError, ValueError):
            continue
    return ""


@dataclass(frozen=True)
class Install:
    """A package a task's image or script installs: with which manager, and where it says so."""

    manager: str  # "apt-get", "apk", "pip" or "npm"
    package: str
    where: str

    def command(self) -> str:
        """The install line a user would run for it on this machine."""
        return {
            "apt-get": f"apt-get install -y {self.package}",
            "apk": f"apk add {self.package}",
            "pip": f"pip install {shlex.quote(self.package)}",
            "npm": f"npm install -g {self.package}",
        }[self.manager]

    def present(self) -> bool:
        """Whether this machine has it: a Debian package installed, a Python distribution in
        changeup's environment, a program of that name on the ``PATH``."""
        name = re.split(r"[\s<>=!~\[;@]", self.package, maxsplit=1)[0]
        if self.manager == "apt-get" and shutil.which("dpkg-query"):
            found = subprocess.run(
                ["dpkg-query", "-W", "-f=${Status}", name], capture_output=True, text=True, check=False
            )
            return found.stdout.endswith("installed")
        if self.manager == "pip":
            try:
                importlib.metadata.distribution(name)
            except importlib.metadata.PackageNotFoundError:
                return False
            return True
        return shutil.which(name) is not None


_INSTALL = {
    "apt-get": re.compile(r"\bapt(?:-get)?\s+(?:-\S+\s+)*install\s+(.*)"),
    "apk": re.compile(r"\bapk\s+add\s+(.*)"),
    "pip": re.compile(r"\b(?:pip3?|python3?\s+-m\s+pip|uv\s+pip)\s+install\s+(.*)"),
    "npm": re.compile(r"\bnpm\s+(?:install|i)\s+(?:-g|--global)\s+(.*)"),
}


def installs(script: str, where: str) -> list[Install]:
    """The packages a shell script (a Dockerfile's ``RUN`` lines, a ``test.sh``) installs."""
    found: list[Install] = []
    joined = script.replace("\\\n", " ")
    for command in re.split(r"&&|;|\|\||\n", joined):
        for manager, pattern in _INSTALL.items():
            match = pattern.search(command)
            if match is None:
                continue
            words = match.group(1).split()
            for before, word in zip(["", *words], words, strict=False):
                if before in ("-r", "--requirement", "-c", "--constraint", "-e", "--editable"):
                    continue  # a file or a folder, not a package
                if word.startswith(("-", "$", "/", ".", ">", "2>")):
                    continue
                found.append(Install(manager, word, where))
    return found

"""A challenge's test environment beyond Python: the tools and system data its hidden tests declare.

``testing: tools`` names programs (``bash``, ``git``, ``node``, ``g++``) and ``testing: data``
named system data (``zoneinfo``, ``ca-certificates``, ``locales``); a phase's lists add to the
challenge's. A run's private root (``runtime.py``) holds a copy of each, made once and sealed
with the rest, so a test sees what its challenge declares and nothing else of the machine.

**Resolving** (:func:`resolve`, cheap, every runner): each tool is found on this machine's
``PATH`` (or taken at its absolute path); a declared tool this machine lacks is an
:class:`~orchestrator.system.venvs.EnvironmentFailure` naming it. The tool keeps its place
inside (``/usr/bin/git`` is ``/usr/bin/git``), and its folder joins the tests' ``PATH``.
``python``, ``python3`` and ``python3.X`` are always the grading interpreter: declaring them
adds nothing.

**What a tool brings** (:func:`contents`, when the root is built), for each:

1. the program as it is named on ``PATH`` and every link on the way to its file;
2. the shared libraries of every program and library brought (``ldd``);
3. a script's interpreter, from its ``#!`` line (``#!/usr/bin/env node`` brings ``env`` and
   the tool ``node``), and for a shell script the programs beside it that it
   runs with ``exec`` (``zcat`` is ``exec gzip -cd "$@"``: ``gzip`` comes with it);
4. on a Debian-based machine, the files of the package the program came from, but for its
   other programs and its documentation: ``git``'s helpers in ``/usr/lib/git-core`` and its
   templates, ``java``'s runtime; and a program installed as ``<home>/bin/<name>`` in a
   library folder (``/usr/lib``, ``/usr/share``, ``/opt``, their ``/usr/local`` twins) brings
   all of ``<home>`` as it is now (``npm`` is ``/usr/lib/node_modules/npm/bin/npm-cli.js``:
   its modules, even when npm updated itself after its package was installed);
5. for a toolchain, a **kit** (:data:`KITS`): the packages its driver needs beside it, reached
   from the program's own package through ``Depends`` and ``Recommends`` and kept when their
   name is the kit's (the C and C++ kit: the compilers, binutils, libc's and libstdc++'s
   headers and link libraries), other tools it runs (``cargo`` links with ``cc``), and a
   rustup toolchain (``cargo``, ``rustc`` through rustup: the toolchain's folder but its docs
   and sources); ``go`` brings its standard library's sources, which Debian packages apart, and
   Debian's ``node`` the packages its built-in modules are loaded from.

Not covered: programs a tool finds by configuration rather than by package (a plugin folder
named in ``/etc``, which is not copied), a script whose interpreter is the machine's own
Python (it gets the binary, not that Python's standard library), package managers' caches
and registries (no network in the sandbox either), and tools on a machine without dpkg get
steps 1 to 3 only (a kit still brings its rustup toolchain).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.system.closure import (
    DebianPackage,
    debian_files,
    debian_owner,
    debian_packages,
    is_elf,
    shebang,
)
from orchestrator.system.venvs import EnvironmentFailure

__all__ = ["DATA", "KITS", "DataSet", "Kit", "Needs", "Tool", "Toolset", "contents", "resolve"]

#: The grading interpreter's names: always on the tests' PATH, never copied from the machine.
PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
#: What a test command starts with (``sh -c COMMAND``): every challenge with one has it.
COMMAND_SHELL = "sh"
#: Shells whose scripts may ``exec`` a program beside them.
_SHELLS = {"sh", "bash", "dash"}
_EXEC = re.compile(r"^\s*exec\s+([A-Za-z0-9_.+-]+)", re.MULTILINE)
#: Parts of a package never copied: documentation, translations, shell completions, configuration.
_SKIP_PREFIXES = tuple(
    f"{prefix}/"
    for prefix in (
        "/usr/share/doc",
        "/usr/share/man",
        "/usr/share/info",
        "/usr/share/locale",
        "/usr/share/lintian",
        "/usr/share/bash-completion",
        "/usr/share/zsh",
        "/usr/share/fish",
        "/usr/share/menu",
        "/usr/share/applications",
        "/usr/share/icons",
        "/usr/share/pixmaps",
        "/etc",
        "/usr/lib/systemd",
    )
)
_PROGRAM_FOLDERS = ("/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin")
#: What of such a home is never copied: documentation, shell completions, a toolchain's sources.
_HOME_SKIPS = (
    "share/doc",
    "share/man",
    "share/info",
    "share/zsh",
    "lib/rustlib/src",
    "lib/rustlib/rustc-src",
)
#: Where self-contained installations live: a program at <home>/bin/<name> below one brings <home>.
_HOMES = tuple(Path(p) for p in ("/usr/lib", "/usr/local/lib", "/usr/share", "/usr/local/share", "/opt"))


@dataclass(frozen=True, slots=True)
class Kit:
    """What a toolchain needs beyond its program's own package.

    ``packages``: patterns of the Debian packages that belong to it, followed from the program's
    own package through ``Depends`` and ``Recommends``; ``tools``: other tools it runs;
    ``rustup``: a rustup proxy is replaced by its toolchain's program and folder.
    """

    packages: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    rustup: bool = False


_C = Kit(
    packages=(
        "gcc",
        "gcc-*",
        "g++",
        "g++-*",
        "cpp",
        "cpp-*",
        "binutils",
        "binutils-*",
        "lib*-dev",
        "libc-dev-bin",
        "linux-libc-dev",
        "rpcsvc-proto",
    )
)
_RUST = Kit(packages=("cargo", "rustc", "rustc-*", "libstd-rust-*"), tools=("cc",), rustup=True)
# Debian's go keeps its standard library's sources (which every build reads) in a package of
# their own, linked into its GOROOT (/usr/lib/go-1.19/src -> /usr/share/go-1.19/src).
_GO = Kit(packages=("golang-*-src",))
# Debian's node (not NodeSource's, which is whole) loads some of its built-in modules from
# other packages at run time (/usr/share/nodejs/{acorn,cjs-module-lexer,undici}, through
# libnode's Depends): without them it aborts at start.
_NODE = Kit(packages=("libnode*", "node-*"))
#: Toolchains by the names a challenge declares them with.
KITS: dict[str, Kit] = {
    "gcc": _C,
    "g++": _C,
    "cc": _C,
    "c++": _C,
    "cpp": _C,
    "cargo": _RUST,
    "rustc": _RUST,
    "go": _GO,
    "node": _NODE,
    "nodejs": _NODE,
}


@dataclass(frozen=True, slots=True)
class DataSet:
    """Named system data: the first of ``folders`` this machine has, ``files`` where they are (links
    on the way kept), and the variables that point programs at them (``{folder}``, ``{file}``)."""

    folders: tuple[str, ...]
    files: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    #: copy the links inside the folder as the files they lead to (they lead out of it)
    follow: bool = False


#: The data a challenge can declare, by name (``challenge/model.py`` lists the names).
DATA: dict[str, DataSet] = {
    # glibc reads TZDIR, Python's zoneinfo PYTHONTZPATH.
    "zoneinfo": DataSet(
        ("/usr/share/zoneinfo", "/usr/lib/zoneinfo", "/usr/share/lib/zoneinfo"),
        env=(("TZDIR", "{folder}"), ("PYTHONTZPATH", "{folder}")),
    ),
    # OpenSSL's own places (Debian's /usr/lib/ssl links) and the variables Python's ssl, curl and
    # git honour; the folder's links lead to /usr/share/ca-certificates, so they are followed.
    "ca-certificates": DataSet(
        ("/etc/ssl/certs", "/etc/pki/tls/certs"),
        files=(
            "/etc/ssl/certs/ca-certificates.crt",
            "/etc/pki/tls/certs/ca-bundle.crt",
            "/etc/ssl/cert.pem",
            "/usr/lib/ssl/cert.pem",
            "/usr/lib/ssl/certs",
        ),
        env=(("SSL_CERT_DIR", "{folder}"), ("SSL_CERT_FILE", "{file}")),
        follow=True,
    ),
    "locales": DataSet(("/usr/lib/locale",)),
}


@dataclass(frozen=True, slots=True)
class Needs:
    """What a challenge's hidden tests declare they need: tools and data names, each once."""

    tools: tuple[str, ...] = ()
    data: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.tools or self.data)


@dataclass(frozen=True, slots=True)
class Tool:
    """A declared tool found on this machine: ``path`` is where the tests find it (its folder is on
    their ``PATH``), ``folders`` whole folders it brings (a rustup toolchain)."""

    name: str
    path: Path
    folders: tuple[Path, ...] = ()
    kit: Kit | None = None


@dataclass(frozen=True, slots=True)
class Toolset:
    """A challenge's needs, resolved on this machine."""

    tools: tuple[Tool, ...] = ()
    data: tuple[str, ...] = ()
    #: folders put on the tests' PATH after the grading environment's, in order
    path: tuple[str, ...] = ()
    #: variables the data sets need
    env: dict[str, str] = field(default_factory=dict)

    def identity(self) -> str:
        """A digest of what would be copied: each tool's place, size and change time, the data
        sets', and the package database's (an upgrade gives a new root)."""
        seen: list[object] = []
        places = [t.path for t in self.tools] + [f for t in self.tools for f in t.folders]
        places += [Path(folder) for name in self.data for folder in DATA[name].folders[:1]]
        places.append(Path("/var/lib/dpkg/status"))
        for place in places:
            try:
                info = place.stat()
                seen.append([str(place), info.st_size, info.st_mtime_ns])
            except OSError:
                seen.append([str(place)])
        # the kit too: what a toolchain brings may change with changeup, not only with the machine
        names = [[t.name, str(t.path), list(t.kit.packages) if t.kit else []] for t in self.tools]
        return hashlib.sha256(json.dumps([names, list(self.data), seen]).encode()).hexdigest()[:16]


def resolve(needs: Needs, search: str | None = None) -> Toolset:
    """``needs`` found on this machine (``search``: the ``PATH`` to look in, by default changeup's
    own); a tool it lacks is an :class:`EnvironmentFailure` naming it."""
    search = search if search is not None else os.environ.get("PATH", os.defpath)
    tools: dict[str, Tool] = {}
    todo = list(needs.tools)
    while todo:
        name = todo.pop(0)
        if name in tools or PYTHON.match(name):
            continue
        tool = _find(name, search)
        tools[name] = tool
        todo += list(tool.kit.tools if tool.kit else ())
    path = list(dict.fromkeys(str(t.path.parent) for t in tools.values()))
    env: dict[str, str] = {}
    for name in needs.data:
        folder, file = _data_places(name)
        for key, value in DATA[name].env:
            if "{file}" in value and file is None:
                continue
            env[key] = value.format(folder=folder, file=file)
    return Toolset(tuple(tools.values()), needs.data, tuple(path), env)


def _find(name: str, search: str) -> Tool:
    found = name if os.path.isabs(name) else shutil.which(name, path=search)
    if found is None or not os.path.isfile(found) or not os.access(found, os.X_OK):
        where = "is not an executable file" if os.path.isabs(name) else "is not on this machine's PATH"
        raise EnvironmentFailure(
            f"the tool {name!r} that this challenge's tests declare (testing: tools) {where}: "
            "install it, or declare the one the tests need"
        )
    real = Path(os.path.realpath(found))
    kit = KITS.get(Path(found).name) or KITS.get(real.name) or KITS.get(name)
    if kit is not None and kit.rustup and real.name == "rustup":
        program = _rustup_program(Path(found), Path(name).name)
        return Tool(name, program, (program.parent.parent,), kit)
    home = real.parent.parent
    inside = real.parent.name == "bin" and any(home.is_relative_to(r) and home != r for r in _HOMES)
    return Tool(name, Path(found), (home,) if inside else (), kit)


def _rustup_program(proxy: Path, name: str) -> Path:
    """The toolchain program a rustup proxy would run (``rustup which cargo``)."""
    rustup = Path(os.path.realpath(proxy))
    try:
        done = subprocess.run(
            [str(rustup), "which", name], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError) as error:
        raise EnvironmentFailure(f"the tool {name!r} is a rustup proxy, and rustup failed: {error}") from None
    program = Path(done.stdout.strip())
    if done.returncode != 0 or not program.is_absolute() or not program.is_file():
        said = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise EnvironmentFailure(f"the tool {name!r} is a rustup proxy with no toolchain to run: {said}")
    return program


def _data_places(name: str) -> tuple[str, str | None]:
    """The folder (and the first file) of a data set on this machine."""
    data = DATA[name]
    folder = next((f for f in data.folders if os.path.isdir(f)), None)
    if folder is None:
        raise EnvironmentFailure(
            f"the data {name!r} that this challenge's tests declare (testing: data) is not on this "
            f"machine: none of {', '.join(data.folders)} exists"
        )
    file = next((f for f in data.files if os.path.isfile(f) and f.startswith(folder)), None)
    return folder, file


# --- what is copied -------------------------------------------------------------------------------


@dataclass(slots=True)
class Contents:
    """What a toolset's copy holds: files (each with the links on its way), whole folders (with
    what to leave out of each, as paths relative to it, and whether to follow the links inside),
    and ELF objects whose libraries it needs too."""

    files: set[Path] = field(default_factory=set)
    folders: list[tuple[Path, tuple[str, ...], bool]] = field(default_factory=list)
    objects: set[Path] = field(default_factory=set)


def contents(toolset: Toolset) -> Contents:
    """Everything ``toolset`` brings (the module's steps 1 to 5), but the shared libraries, which the
    builder adds for :attr:`Contents.objects` and the folders' own ELF files."""
    out = Contents()
    installed = debian_packages()
    interpreters: list[str] = []
    for tool in toolset.tools:
        _program(tool.path, out, interpreters)
        for twin in (Path("/bin") / tool.path.name, Path("/usr/bin") / tool.path.name):
            if twin != tool.path and twin.is_file() and os.path.samefile(twin, tool.path):
                out.files.add(twin)  # scripts say #!/bin/bash: found there too on any machine
        for folder in tool.folders:
            out.folders.append((folder, _HOME_SKIPS, False))
        owner = debian_owner(Path(os.path.realpath(tool.path)))
        if owner is not None:
            _package(owner, out, programs=False)
            if tool.kit is not None:
                for package in _kit_packages(owner, tool.kit, installed):
                    _package(package, out, programs=True)
    for name in interpreters:  # #!/usr/bin/env NAME: a tool too (Python is the grading one)
        if not PYTHON.match(name) and name not in {t.name for t in toolset.tools}:
            found = shutil.which(name)
            if found is not None:
                _program(Path(found), out, [])
    for name in toolset.data:
        data = DATA[name]
        place, _ = _data_places(name)
        out.folders.append((Path(place), (), data.follow))
        out.files.update(Path(f) for f in data.files if os.path.lexists(f))
    return out


def _program(path: Path, out: Contents, interpreters: list[str]) -> None:
    """A program, its interpreter if it is a script (and the name ``env`` looks up)."""
    out.files.add(path)
    real = Path(os.path.realpath(path))
    if is_elf(real):
        out.objects.add(real)
        return
    words = shebang(real)
    if not words or not os.path.isabs(words[0]):
        return
    interpreter = Path(words[0])
    out.files.add(interpreter)
    if is_elf(Path(os.path.realpath(interpreter))):
        out.objects.add(Path(os.path.realpath(interpreter)))
    if interpreter.name == "env":
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        interpreters += rest[:1]
    if interpreter.name in _SHELLS:  # zcat is `exec gzip -cd "$@"`: gzip comes with it
        for name in _EXEC.findall(real.read_text(encoding="utf-8", errors="replace")):
            sibling = path.parent / name
            if sibling not in out.files and sibling.is_file() and os.access(sibling, os.X_OK):
                _program(sibling, out, interpreters)


def _package(package: str, out: Contents, *, programs: bool) -> None:
    """A package's files (its other programs only when ``programs``), documentation aside."""
    for path in debian_files(package):
        text = str(path)
        if text.startswith(_SKIP_PREFIXES) or not os.path.lexists(path) or path.is_dir():
            continue
        if not programs and str(path.parent) in _PROGRAM_FOLDERS:
            continue
        out.files.add(path)
        if is_elf(path) and not path.is_symlink():
            out.objects.add(path)


def _kit_packages(start: str, kit: Kit, installed: dict[str, DebianPackage]) -> list[str]:
    """The installed packages of ``kit`` reached from ``start`` through Depends and Recommends."""
    provided: dict[str, str] = {}
    for package in installed.values():
        for virtual in package.provides:
            provided.setdefault(virtual, package.name)
    seen: list[str] = []
    todo = [start]
    while todo:
        name = todo.pop(0)
        if name in seen or name not in installed:
            continue
        seen.append(name)
        package = installed[name]
        for alternatives in (*package.depends, *package.recommends):
            chosen = _installed(alternatives, installed, provided)
            if chosen is not None and _matches(chosen, kit.packages):
                todo.append(chosen)
    return seen[1:]


def _installed(
    alternatives: Sequence[str], installed: dict[str, DebianPackage], provided: dict[str, str]
) -> str | None:
    for name in alternatives:
        if name in installed:
            return name
        if name in provided:
            return provided[name]
    return None


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)

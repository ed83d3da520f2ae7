"""The private runtime of hidden test runs: a copy of everything a grading interpreter reads.

Hidden tests must share nothing observable with the agent. An agent process can watch the
files it sees (inotify), read their access times, or time reads through the page cache;
code under test that opened shared files in a chosen pattern could signal the hidden tests
to it bit by bit. So a test run sees no file of the host at all: its root is built from
this copy, which lives in changeup's cache where no agent can look:

- the base interpreter the grading environment was made from, and its standard library
  (without its own tests, site-packages, Tk and IDLE);
- every shared library that the interpreter, its extension modules and the grading
  environment's extension modules load (the ``ldd`` closure), at the paths the dynamic
  loader looks for them, with the symbolic links that lead there;
- a ``passwd`` and ``group`` naming the test user, and nothing else of ``/etc``.

It is built once per grading environment, made read-only and sealed like the environments
(``venvs.py``). The sandbox binds its top-level folders over an empty root and
re-creates the host's top-level links (``/lib`` → ``usr/lib`` on merged-``/usr`` systems).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from orchestrator.grading.venvs import (
    Environment,
    EnvironmentFailure,
    cache_root,
    cached,
    freeze,
    remove,
    seal,
)

__all__ = ["TEST_USER", "Runtime", "runtime_for"]

#: The test user's ids inside the sandbox, and its passwd entry.
TEST_USER = (65532, 65532)
_SKIP = {"site-packages", "dist-packages", "test", "tests", "idlelib", "tkinter", "turtledemo", "lib2to3"}
_LIBRARY = re.compile(r"(/[^\s]+)")


@dataclass(frozen=True, slots=True)
class Runtime:
    """A private runtime: ``root`` mirrors the host's paths; ``links`` are its top-level links."""

    root: Path

    def tops(self) -> list[tuple[str, Path | str]]:
        """Each top-level entry, as ``(/name, folder to bind)`` or ``(/name, link target)``."""
        out: list[tuple[str, Path | str]] = []
        for entry in sorted((self.root / "root").iterdir()):
            name = f"/{entry.name}"
            out.append((name, os.readlink(entry) if entry.is_symlink() else entry))
        return out


def runtime_for(environment: Environment) -> Runtime:
    """The private runtime of ``environment`` (a grading environment), built if no one has yet
    (aside, then published whole: see :func:`~orchestrator.grading.venvs.cached`)."""
    folder = cache_root() / "runtime"
    return Runtime(cached(folder, environment.prefix.name, lambda target: _build(target, environment)))


def _build(target: Path, environment: Environment) -> None:
    """Build in the empty folder ``target``; sealed and read-only when done."""
    root = target / "root"
    try:
        paths = _interpreter_paths(environment)
        for binary in paths["binaries"]:
            _mirror(Path(binary), root)
        for folder in paths["folders"]:
            _copy_tree(Path(folder), root)
        objects = [Path(p) for p in paths["binaries"]]
        for where in [*paths["folders"], str(environment.prefix)]:
            objects += [p for p in Path(where).rglob("*.so*") if p.is_file() and not p.is_symlink()]
        for library in sorted(_libraries(objects)):
            _mirror(library, root)
        uid, gid = TEST_USER
        etc = root / "etc"
        etc.mkdir(exist_ok=True)
        (etc / "passwd").write_text(f"root:x:0:0::/root:/bin/sh\ntests:x:{uid}:{gid}::/tmp:/bin/sh\n")
        (etc / "group").write_text(f"root:x:0:\ntests:x:{gid}:\n")
    except (OSError, subprocess.SubprocessError, ValueError) as error:
        remove(target)
        raise EnvironmentFailure(f"could not build the private test runtime: {error}") from None
    freeze(target)
    seal(target, {"python": paths["binaries"][0]})


def _interpreter_paths(environment: Environment) -> dict[str, list[str]]:
    """The grading interpreter's binary (and shared libpython), standard library and extensions."""
    code = (
        "import json, os, sys, sysconfig\n"
        "paths = sysconfig.get_paths()\n"
        "libdir, library = sysconfig.get_config_var('LIBDIR'), sysconfig.get_config_var('INSTSONAME')\n"
        "shared = os.path.join(libdir or '', library or '')\n"
        "binaries = [os.path.realpath(sys.executable)]\n"
        "binaries += [shared] if library and os.path.isfile(shared) else []\n"
        "print(json.dumps({'binaries': binaries, 'folders': sorted({paths['stdlib'], paths['platstdlib']}),"
        " 'executable': sys.executable}))\n"
    )
    done = subprocess.run(
        [environment.python, "-I", "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    found: dict[str, list[str]] = json.loads(done.stdout)
    # The venv's own interpreter links (bin/python → the base binary) are followed by _mirror.
    found["binaries"] = [*found["binaries"], *_venv_links(environment)]
    return found


def _venv_links(environment: Environment) -> list[str]:
    """The base interpreter's names that the venv's ``bin/python*`` links point at."""
    out = []
    for link in environment.bin.glob("python*"):
        if link.is_symlink():
            out.append(os.path.normpath(os.path.join(link.parent, os.readlink(link))))
    return out


def _libraries(objects: list[Path]) -> set[Path]:
    """Every shared library ``objects`` load, as ``ldd`` names them (with the loader itself)."""
    found: set[Path] = set()
    for chunk in range(0, len(objects), 200):
        batch = [str(p) for p in objects[chunk : chunk + 200]]
        done = subprocess.run(["ldd", *batch], capture_output=True, text=True, timeout=300, check=False)
        for line in done.stdout.splitlines():
            if (
                line.endswith(":")
                or "not found" in line
                or ("=>" not in line and not line.strip().startswith("/"))
            ):
                continue
            match = _LIBRARY.search(line.split("=>", 1)[-1])
            if match and os.path.isfile(match.group(1)):
                found.add(Path(match.group(1)))
    return found


def _mirror(path: Path, root: Path) -> None:
    """Copy ``path`` into ``root`` at the same place, re-creating every link on the way to it."""
    current = Path("/")
    parts = list(path.parts[1:])
    hops = 0
    while parts:
        current = current / parts.pop(0)
        copy = root / current.relative_to("/")
        if current.is_symlink():
            target = os.readlink(current)
            if not copy.is_symlink() and not copy.exists():
                copy.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(target, copy)
            hops += 1
            if hops > 40:
                raise ValueError(f"too many links on the way to {path}")
            resolved = Path(os.path.normpath(current.parent / target))
            parts = list(resolved.parts[1:]) + parts
            current = Path("/")
        elif not parts and current.is_file() and not copy.exists():
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(current, copy)
            copy.chmod(current.stat().st_mode & 0o755)


def _copy_tree(folder: Path, root: Path) -> None:
    """A standard library folder, without what tests never need."""
    _mirror(folder, root)  # the links on the way
    destination = root / folder.resolve().relative_to("/")
    shutil.copytree(
        folder.resolve(),
        destination,
        symlinks=True,
        dirs_exist_ok=True,
        ignore=lambda _, names: [n for n in names if n in _SKIP or n.startswith("config-")],
        copy_function=shutil.copy2,  # times kept: the standard library's bytecode stays valid
    )

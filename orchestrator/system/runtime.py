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
- the tools and system data the challenge declares (``toolsets.py``: each program with its
  libraries, interpreter, package files and kit), at their places on this machine;
- an empty folder at the grading environment's own path, where the sandbox mounts it too
  (the environment's scripts, ``pytest`` among them, name their interpreter there);
- a ``passwd`` and ``group`` naming the test user, and nothing else of ``/etc``.

It is built once per grading environment and toolset (keyed by a digest of both, see
:meth:`~orchestrator.system.toolsets.Toolset.identity`), made read-only and sealed like the
environments (``venvs.py``). The sandbox binds its top-level folders over an empty root and
re-creates its top-level links (``/lib`` → ``usr/lib`` on merged-``/usr`` systems).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.system.closure import copy_folder, is_elf, mirror, shared_libraries
from orchestrator.system.toolsets import Toolset, contents
from orchestrator.system.venvs import (
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
#: How runtimes are built; a new recipe builds new ones (the old stay, unused).
RECIPE = 3
_SKIP = {"site-packages", "dist-packages", "test", "tests", "idlelib", "tkinter", "turtledemo", "lib2to3"}


@dataclass(frozen=True, slots=True)
class Runtime:
    """A private runtime: ``root`` mirrors the host's paths; ``toolset`` is what it holds beyond Python."""

    root: Path
    toolset: Toolset = field(default_factory=Toolset)

    def tops(self) -> list[tuple[str, Path | str]]:
        """Each top-level entry, as ``(/name, folder to bind)`` or ``(/name, link target)``."""
        out: list[tuple[str, Path | str]] = []
        for entry in sorted((self.root / "root").iterdir()):
            name = f"/{entry.name}"
            out.append((name, os.readlink(entry) if entry.is_symlink() else entry))
        return out


def runtime_for(environment: Environment, toolset: Toolset | None = None) -> Runtime:
    """The private runtime of ``environment`` (a grading environment) with ``toolset``, built if no
    one has yet (aside, then published whole: see :func:`~orchestrator.system.venvs.cached`)."""
    toolset = toolset or Toolset()
    identity = [str(environment.prefix), RECIPE, toolset.identity() if toolset.tools or toolset.data else ""]
    key = hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:16]
    folder = cache_root() / "runtime"
    return Runtime(cached(folder, key, lambda target: _build(target, environment, toolset)), toolset)


def _build(target: Path, environment: Environment, toolset: Toolset) -> None:
    """Build in the empty folder ``target``; sealed and read-only when done."""
    root = target / "root"
    try:
        paths = _interpreter_paths(environment)
        for binary in paths["binaries"]:
            mirror(Path(binary), root)
        for folder in paths["folders"]:
            copy_folder(Path(folder), root, lambda _, names: _python_skips(names))
        objects = [Path(p) for p in paths["binaries"]]
        for where in [*paths["folders"], str(environment.prefix)]:
            objects += [p for p in Path(where).rglob("*.so*") if p.is_file() and not p.is_symlink()]
        objects += _tools(toolset, root)
        for library in sorted(shared_libraries(objects)):
            mirror(library, root)
        # Where the sandbox mounts the grading environment a second time: its scripts' #! lines
        # (under /tmp bubblewrap makes it, in the run's fresh /tmp).
        if environment.prefix.parts[1] != "tmp":
            (root / environment.prefix.relative_to("/")).mkdir(parents=True, exist_ok=True)
        uid, gid = TEST_USER
        etc = root / "etc"
        etc.mkdir(exist_ok=True)
        (etc / "passwd").write_text(f"root:x:0:0::/root:/bin/sh\ntests:x:{uid}:{gid}::/tmp:/bin/sh\n")
        (etc / "group").write_text(f"root:x:0:\ntests:x:{gid}:\n")
    except (OSError, subprocess.SubprocessError, ValueError) as error:
        remove(target)
        raise EnvironmentFailure(f"could not build the private test runtime: {error}") from None
    freeze(target)
    tools = {t.name: str(t.path) for t in toolset.tools}
    seal(target, {"python": paths["binaries"][0], "tools": tools, "data": list(toolset.data)})


def _python_skips(names: list[str]) -> list[str]:
    """What of a standard library folder tests never need."""
    return [n for n in names if n in _SKIP or n.startswith("config-")]


def _tools(toolset: Toolset, root: Path) -> list[Path]:
    """Copy what ``toolset`` brings into ``root``; the ELF objects whose libraries it needs."""
    brought = contents(toolset)
    objects = set(brought.objects)
    for folder, skip, follow in brought.folders:
        copy = copy_folder(folder, root, _leaving(folder.resolve(), skip), follow=follow)
        objects.update(
            Path("/", p.relative_to(root)) for p in copy.rglob("*") if not p.is_symlink() and is_elf(p)
        )
    for path in sorted(brought.files):
        mirror(path, root)
    return sorted(objects)


def _leaving(folder: Path, skip: tuple[str, ...]) -> Callable[[str, list[str]], list[str]]:
    """A copy's ``ignore``: the paths in ``skip``, relative to ``folder``."""

    def ignore(where: str, names: list[str]) -> list[str]:
        inside = Path(where).relative_to(folder)
        return [n for n in names if (inside / n).as_posix() in skip]

    return ignore


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

"""What a program needs to run, and copies of it: shared libraries, interpreters, packages' files.

A private root (``system/runtime.py``) holds copies of the files a test process may open. To
find them for a program of this machine:

- :func:`shared_libraries`: every library an ELF object loads, as ``ldd`` names them (the
  dynamic loader among them);
- :func:`shebang`: a script's interpreter line (``#!/usr/bin/env node``);
- :func:`debian_owner`, :func:`debian_files`, :func:`debian_packages`: on a Debian-based
  machine, which installed package a file came from, that package's files, and the
  relations (``Depends``, ``Recommends``, ``Provides``) of every installed package, from
  ``dpkg-query`` (the package database; nothing is downloaded). Elsewhere they find nothing.

:func:`mirror` and :func:`copy_folder` copy a file or folder into a root at the same place,
re-creating every link on the way, so the copy answers to the paths the program uses.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "DebianPackage",
    "copy_folder",
    "debian_files",
    "debian_owner",
    "debian_packages",
    "is_elf",
    "mirror",
    "shared_libraries",
    "shebang",
]

_LIBRARY = re.compile(r"(/[^\s]+)")
#: Files fetched at most from one package's list, or one ``dpkg-query`` answer (bytes).
_MOST_OUTPUT = 64 * 1024 * 1024
_DPKG_TIMEOUT = 60


def is_elf(path: Path) -> bool:
    """Whether ``path`` is a regular file holding an ELF object (a program or a shared library)."""
    try:
        with path.open("rb") as handle:
            return path.is_file() and handle.read(4) == b"\x7fELF"
    except OSError:
        return False


def shebang(path: Path) -> list[str]:
    """The words of a script's ``#!`` line (``["/usr/bin/env", "node"]``); empty for anything else."""
    try:
        with path.open("rb") as handle:
            head = handle.read(256)
    except OSError:
        return []
    if not head.startswith(b"#!"):
        return []
    line = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace")
    return line.split()


def shared_libraries(objects: Iterable[Path]) -> set[Path]:
    """Every shared library ``objects`` load, as ``ldd`` names them (with the loader itself).

    An object ``ldd`` cannot read (a script, a static program) adds nothing; a library it cannot
    find is left out (the program then fails as it would on this machine).
    """
    found: set[Path] = set()
    listed = [str(p) for p in objects]
    for chunk in range(0, len(listed), 200):
        batch = listed[chunk : chunk + 200]
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


def mirror(path: Path, root: Path) -> None:
    """Copy the file ``path`` into ``root`` at the same place, re-creating every link on the way.

    A folder at the end of the way gets only its links (see :func:`copy_folder`); a path that
    does not exist copies nothing.
    """
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


def copy_folder(
    folder: Path,
    root: Path,
    ignore: Callable[[str, list[str]], Iterable[str]] | None = None,
    *,
    follow: bool = False,
) -> Path:
    """Copy ``folder`` into ``root`` at its real place (the links on the way re-created), its files'
    times kept; ``ignore`` as :func:`shutil.copytree` takes it; ``follow``: the links inside are
    copied as the files they lead to. Returns the copy."""
    mirror(folder, root)  # the links on the way
    destination = root / folder.resolve().relative_to("/")
    shutil.copytree(
        folder.resolve(),
        destination,
        symlinks=not follow,
        dirs_exist_ok=True,
        ignore=ignore,
        ignore_dangling_symlinks=True,
        copy_function=shutil.copy2,  # times kept: a standard library's bytecode stays valid
    )
    return destination


# --- the Debian package database ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DebianPackage:
    """An installed package's relations: each a list of alternatives (``a | b``), names only."""

    name: str
    depends: tuple[tuple[str, ...], ...] = ()
    recommends: tuple[tuple[str, ...], ...] = ()
    provides: tuple[str, ...] = field(default=())


def _dpkg_query(args: Sequence[str]) -> str:
    """``dpkg-query``'s answer ("" where there is no dpkg, or it fails: nothing is known)."""
    if shutil.which("dpkg-query") is None:
        return ""
    try:
        done = subprocess.run(
            ["dpkg-query", *args], capture_output=True, timeout=_DPKG_TIMEOUT, check=False, text=True
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout[:_MOST_OUTPUT] if done.returncode == 0 else ""


def _names(relation: str) -> tuple[tuple[str, ...], ...]:
    """``a (>= 1) | b:any, c`` → ``(("a", "b"), ("c",))``."""
    out = []
    for part in relation.split(","):
        choices = [choice.strip() for choice in part.split("|") if choice.strip()]
        alternatives = tuple(re.split(r"[\s(:\[]", choice, maxsplit=1)[0] for choice in choices)
        if alternatives:
            out.append(alternatives)
    return tuple(out)


def debian_packages() -> dict[str, DebianPackage]:
    """Every installed package of this machine, by name (empty where there is no dpkg)."""
    fields = "${Package}\t${db:Status-Abbrev}\t${Depends}, ${Pre-Depends}\t${Recommends}\t${Provides}\n"
    installed: dict[str, DebianPackage] = {}
    for line in _dpkg_query(["-W", f"-f={fields}"]).splitlines():
        parts = line.split("\t")
        if len(parts) != 5 or not parts[1].startswith("ii"):
            continue
        name, _, depends, recommends, provides = parts
        package = DebianPackage(
            name,
            _names(depends),
            _names(recommends),
            tuple(alternatives[0] for alternatives in _names(provides)),
        )
        installed[name] = package
    return installed


def debian_owner(path: Path) -> str | None:
    """The installed package a file came from, by its path or, on a merged-``/usr`` machine, by its
    twin (``/usr/bin/bash`` is ``/bin/bash`` to dpkg); None when no package has it."""
    text = str(path)
    twins = [text]
    for short in ("/bin/", "/sbin/", "/lib/", "/lib64/"):
        if text.startswith("/usr" + short):
            twins.append(text.removeprefix("/usr"))
        elif text.startswith(short):
            twins.append("/usr" + text)
    for candidate in twins:
        for line in _dpkg_query(["-S", candidate]).splitlines():
            owners, _, listed = line.partition(": ")
            if listed == candidate and not owners.startswith("diversion by"):
                return owners.split(",")[0].strip()
    return None


def debian_files(package: str) -> list[Path]:
    """The paths an installed package put on this machine (folders among them), as dpkg lists them."""
    return [Path(line) for line in _dpkg_query(["-L", package]).splitlines() if line.startswith("/")]

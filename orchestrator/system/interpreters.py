"""Python interpreters on this machine: the one that satisfies a version specifier.

A challenge may need another Python than changeup's own (``testing.requires_python``, e.g.
``>=3.12``): its hidden tests and its reference then run on an interpreter that satisfies
it, found in this order, the first that does winning:

1. changeup's own base interpreter (``sys._base_executable``);
2. each path in ``$CHANGEUP_PYTHONS`` (separated by ``:``), in the order written;
3. each ``python3.N`` on ``PATH``, the lowest version first (the specifier's floor is what its
   author ran; a newer one may have removed what the code uses).

A ``python3.N`` is asked only where some 3.N.x satisfies the specifier. A candidate is asked
its own version and executable (``python -I -c ...``). One that does not answer (a pyenv shim
for a version pyenv does not select, a broken link) is passed over and named in the refusal,
so a refusal says every place looked at and what was found there.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet

__all__ = ["VARIABLE", "Interpreter", "NoInterpreter", "interpreter_for", "own_interpreter"]

#: The variable listing interpreters to consider after changeup's own.
VARIABLE = "CHANGEUP_PYTHONS"
_ASK = "import json, platform, sys; print(json.dumps([sys.executable, platform.python_version()]))"
_VERSIONED = re.compile(r"python3\.(\d+)")


class NoInterpreter(RuntimeError):
    """No interpreter on this machine satisfies the specifier; the message says where it looked."""


@dataclass(frozen=True, slots=True)
class Interpreter:
    """A Python interpreter: its executable (as it names itself, links resolved) and version."""

    executable: str
    version: str

    def satisfies(self, wanted: str | None) -> bool:
        """Whether this version is one ``wanted`` (a version specifier, or None for any) allows."""
        return wanted is None or SpecifierSet(wanted).contains(self.version, prereleases=True)


def own_interpreter() -> Interpreter:
    """changeup's own base interpreter (not its virtual environment's link)."""
    base = getattr(sys, "_base_executable", sys.executable)
    return Interpreter(os.path.realpath(base), ".".join(map(str, sys.version_info[:3])))


def interpreter_for(wanted: str | None) -> Interpreter:
    """The first interpreter (in the module's order) whose version ``wanted`` allows.

    Raises :class:`NoInterpreter` naming each candidate and what it is, and how to name one.
    """
    try:
        SpecifierSet(wanted or "")
    except InvalidSpecifier:
        raise NoInterpreter(f"{wanted!r} is not a version specifier") from None
    own = own_interpreter()
    if own.satisfies(wanted):
        return own
    seen = [f"changeup's own {own.executable} is {own.version}"]
    for candidate in _candidates():
        if not _may_satisfy(candidate, wanted):
            continue
        found = _ask(candidate)
        if isinstance(found, str):
            seen.append(f"{candidate}: {found}")
            continue
        if found.satisfies(wanted):
            return found
        seen.append(f"{candidate} is {found.version}")
    raise NoInterpreter(
        f"no Python {wanted} on this machine ({'; '.join(seen)}): put a python3.N that satisfies it on "
        f"PATH, or name its path in ${VARIABLE}"
    )


def _candidates() -> list[str]:
    """``$CHANGEUP_PYTHONS`` in order, then ``python3.N`` on ``PATH`` by ascending N."""
    listed = [p for p in os.environ.get(VARIABLE, "").split(os.pathsep) if p]
    versioned: dict[int, str] = {}
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not folder or not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            match = _VERSIONED.fullmatch(name)
            if match and int(match[1]) not in versioned and shutil.which(name, path=folder):
                versioned[int(match[1])] = str(Path(folder, name))
    return [*listed, *(versioned[n] for n in sorted(versioned))]


def _may_satisfy(candidate: str, wanted: str | None) -> bool:
    """Whether ``candidate`` may be a version ``wanted`` allows: a ``python3.N`` is asked only when
    some 3.N.x is (a listed path is always asked)."""
    match = _VERSIONED.fullmatch(Path(candidate).name)
    if match is None or wanted is None:
        return True
    return any(SpecifierSet(wanted).contains(f"3.{match[1]}.{patch}") for patch in range(100))


@functools.lru_cache(maxsize=64)
def _ask(candidate: str) -> Interpreter | str:
    """The interpreter ``candidate`` is, or why it could not say."""
    try:
        done = subprocess.run(
            [candidate, "-I", "-c", _ASK], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"does not run ({error})"
    try:
        executable, version = json.loads(done.stdout)
    except (ValueError, TypeError):
        first = (done.stderr.strip().splitlines() or ["no answer"])[0]
        return f"does not run as Python ({first})"
    return Interpreter(os.path.realpath(str(executable)), str(version))

"""Where this process may make control groups: the hierarchies mounted here, and its place in them.

:func:`support` looks once: for cgroup v2 (the unified hierarchy, with memory, pids or cpu
controllers) ``$CHANGEUP_CGROUP`` when set (a folder delegated to changeup), else this
process's own group if that is the root (only the root may hold processes beside groups with
controllers), else the parent of its own group (a delegated subtree); for v1 (a hierarchy a
controller: ``memory``, ``pids``, ``cpu``, ``freezer``) its own group in each. A place counts
only once a group has been made there and removed. Where none is writable (not root, no
delegation), :class:`Support` says why, controller by controller; ``CHANGEUP_CGROUPS=none``
turns them off. :func:`sweep` removes the groups a killed process left behind, and
:func:`let_die` thaws the v1 freezer group of a process that was sent SIGKILL.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from orchestrator.system.cgroups import CONTROLLERS, LIMITERS, CgroupError, enable_controllers, remove_groups
from orchestrator.system.processes import alive

__all__ = ["Support", "let_die", "support", "sweep"]


@dataclass(frozen=True, slots=True)
class Support:
    """Where this process may make control groups, and what they can do.

    ``version`` is 1 or 2, or None for none at all; ``bases`` holds, per hierarchy (a v1
    controller's name, or ``unified``), the folder new groups go in; ``missing`` says why a
    controller (or every one) is not there, "" when none is missing.
    """

    version: int | None
    bases: tuple[tuple[str, Path], ...] = ()
    controllers: frozenset[str] = frozenset()
    missing: str = ""

    def describe(self) -> dict[str, Any]:
        """For the log."""
        return {"version": self.version, "controllers": sorted(self.controllers), "missing": self.missing}


class _Mount(NamedTuple):
    point: Path
    root: str
    fstype: str
    options: frozenset[str]


def sweep(where: Support, prefix: str) -> None:
    """Remove groups named ``<prefix><pid>-…`` in ``where``'s bases whose process is gone
    (left by a changeup that was killed); groups with processes still in them stay."""
    for _, base in where.bases:
        with contextlib.suppress(OSError):
            for entry in base.iterdir():
                owner = entry.name.removeprefix(prefix).split("-", 1)[0]
                if not entry.name.startswith(prefix) or not owner.isdigit() or alive(int(owner)):
                    continue
                with contextlib.suppress(OSError):
                    remove_groups(entry)


def let_die(pid: int) -> None:
    """Thaw the v1 freezer group of process ``pid``, which was sent SIGKILL: frozen by a v1
    freezer, a process takes no signal until it is thawed (a v2 freezer lets a fatal one through).
    Every process of that group runs again, so only for a group whose processes are all to die."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        mounts = _mounts()
    except OSError:
        return
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "freezer" not in controllers.split(","):
            continue
        for mount in (m for m in mounts if m.fstype == "cgroup" and "freezer" in m.options):
            with contextlib.suppress(OSError, ValueError):
                state = _inside(mount, path) / "freezer.state"
                if state.read_text().strip() != "THAWED":
                    state.write_text("THAWED")


@functools.cache
def support() -> Support:
    """Where this process may make control groups (looked at once, with a group made and removed)."""
    if os.environ.get("CHANGEUP_CGROUPS", "") == "none":
        return Support(None, missing="CHANGEUP_CGROUPS=none was set")
    try:
        mounts = _mounts()
        own = _own_groups()
    except OSError as error:
        return Support(None, missing=f"cannot read this process's control groups: {error}")
    unified, why_not_v2 = _unified(mounts, own)
    if unified is not None:
        return unified
    legacy = _legacy(mounts, own)
    if legacy.version is not None:
        return legacy
    return Support(None, missing=f"cgroup v2: {why_not_v2}; cgroup v1: {legacy.missing}")


def _unified(mounts: list[_Mount], own: dict[str, str]) -> tuple[Support | None, str]:
    mount = next((m for m in mounts if m.fstype == "cgroup2"), None)
    if mount is None:
        return None, "not mounted"
    if not set(_text(mount.point / "cgroup.controllers").split()) & set(LIMITERS):
        return None, f"{mount.point} has no memory, pids or cpu controller (they are in v1 hierarchies)"
    chosen = os.environ.get("CHANGEUP_CGROUP", "")
    if chosen:
        candidates = [Path(chosen)]
    else:
        mine = _inside(mount, own.get("", "/"))
        # The root may hold processes beside groups with controllers; any other group may not.
        candidates = [mine] if not (mine / "cgroup.type").exists() else []
        candidates += [mine.parent] if mine != mount.point else []
    problems = []
    for base in candidates:
        try:
            controllers = frozenset(_text(base / "cgroup.controllers").split()) & frozenset(LIMITERS)
            if not controllers:
                raise CgroupError(f"{base} has no memory, pids or cpu controller delegated")
            enable_controllers(base, controllers)
            freezer = _probe(base, "cgroup.freeze")
        except OSError as error:
            problems.append(str(error))
            continue
        return Support(2, (("unified", base),), controllers | ({"freezer"} if freezer else set())), ""
    return None, "; ".join(problems) or "no group of this process's may be written"


def _legacy(mounts: list[_Mount], own: dict[str, str]) -> Support:
    bases: list[tuple[str, Path]] = []
    problems = []
    for controller in CONTROLLERS:
        mount = next((m for m in mounts if m.fstype == "cgroup" and controller in m.options), None)
        if mount is None or controller not in own:
            problems.append(f"{controller}: no hierarchy mounted")
            continue
        base = _inside(mount, own[controller])
        try:
            _probe(base, "cgroup.procs")
        except OSError as error:
            problems.append(f"{controller}: {error}")
            continue
        bases.append((controller, base))
    if not bases:
        return Support(None, missing="; ".join(problems))
    return Support(1, tuple(bases), frozenset(key for key, _ in bases), "; ".join(problems))


def _probe(base: Path, expect: str) -> bool:
    """Make and remove a group in ``base`` (raises when that cannot be done); whether it had ``expect``."""
    probe = base / f"changeup-probe-{os.getpid()}-{secrets.token_hex(3)}"
    try:
        probe.mkdir()
    except OSError as error:
        raise CgroupError(error.errno, f"cannot make a group in {base}: {error.strerror}") from None
    try:
        return (probe / expect).exists()
    finally:
        probe.rmdir()


def _inside(mount: _Mount, path: str) -> Path:
    """The folder of group ``path`` (as /proc/self/cgroup says it) under ``mount``."""
    relative = os.path.relpath(path, mount.root) if mount.root != "/" else path.lstrip("/")
    return mount.point if relative in ("", ".") else mount.point / relative


def _mounts() -> list[_Mount]:
    """The cgroup file systems mounted here (from /proc/self/mountinfo)."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        options = frozenset(tail[2].split(","))
        found.append(_Mount(Path(_unescape(fields[4])), _unescape(fields[3]), tail[0], options))
    return found


def _own_groups() -> dict[str, str]:
    """This process's group in each hierarchy: v1 controller → path, and "" → the v2 path."""
    groups: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        number, controllers, path = line.split(":", 2)
        if number == "0" and not controllers:
            groups[""] = path
        for controller in controllers.split(","):
            if controller and "=" not in controller:
                groups[controller] = path
    return groups


def _unescape(text: str) -> str:
    """A mountinfo field as it is (a space, tab, newline or backslash is written as an octal escape)."""
    return re.sub(r"\\([0-7]{3})", lambda match: chr(int(match.group(1), 8)), text)


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as error:
        raise CgroupError(error.errno, f"cannot read {path}: {error.strerror}") from None

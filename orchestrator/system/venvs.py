"""Python environments: one that grades, one the agent works with. Built once, cached, sealed.

Each challenge's ``requirements:`` (none is a set too) get two virtual environments under
``$CHANGEUP_CACHE`` (default ``~/.cache/changeup``):

- the **grading** environment (``grading/<key>``): pytest and the requirements, nothing
  else. The hidden tests run on it; the agent never sees it. It is made read-only to
  everything but its builder, and sealed over the contents of all its files (``.pth``
  files and all, the venv's own prefix, not its base interpreter's): the seal is taken when
  the build completes and checked when a session starts and at its final grading;
- the **agent** environment (``agent/<key>``): the same packages and pip, read-only, first
  on the agent's ``PATH`` inside its sandbox. Whatever the agent does to it cannot reach
  what grades it.

pytest comes from changeup's own installation (it is a runtime dependency): its files, and
those of the distributions it needs, are copied into the new environment, so building needs
no network unless the challenge asks for requirements (then pip installs them). The key
covers the Python, the requirements and that pytest's version, so equal requirements
share environments across challenges and runs.

Both are made from changeup's own Python unless the challenge needs another
(``testing.requires_python``): then from the interpreter
:func:`~orchestrator.system.interpreters.interpreter_for` finds (``$CHANGEUP_PYTHONS``, then
``python3.N`` on ``PATH``), with the same pytest copied in (markers evaluated for its
version), and compiled by it.

Concurrent runs (a matrix runs K sessions at once, in threads and processes) share the cache
safely (:func:`cached`): a build takes the key's file lock, so equal requirements are built
once; it builds *aside*, in a folder of its own named ``<key>.<random>`` (a venv's scripts
name their own path, so a build is never moved), and publishes it whole by renaming a link
``<key>`` → that folder into place, which is atomic. So the published path never shows a
half-built environment, a builder killed mid-build leaves only an unpublished folder (the
next builder removes it), and a rebuild (of a build whose seal broke) never deletes the
folder a running session is graded on: that session keeps the build it started with.

A build that fails is an environment failure: the run is invalid, never an agent's zero.
"""

from __future__ import annotations

import compileall
import fcntl
import hashlib
import importlib.metadata as metadata
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement

from orchestrator.system.interpreters import Interpreter, own_interpreter

__all__ = [
    "READY",
    "SEAL",
    "Environment",
    "EnvironmentFailure",
    "Environments",
    "agent_environment",
    "cache_root",
    "cached",
    "check_seal",
    "environments_for",
    "freeze",
    "grading_environment",
    "remove",
    "seal",
    "seal_of",
]

BUILD_TIMEOUT = 900.0
_PYTEST_SCRIPT = "import sys\nfrom pytest import console_main\n\nsys.exit(console_main())\n"
#: How environments are built; a new recipe builds new ones (the old stay, unused).
RECIPE = 4
SEAL = ".seal.json"
READY = ".ready"


class EnvironmentFailure(RuntimeError):
    """An environment could not be built or no longer matches its seal; the message says why."""


@dataclass(frozen=True, slots=True)
class Environment:
    """A virtual environment: its folder (``prefix``) and its interpreter."""

    prefix: Path

    @property
    def python(self) -> str:
        """Its interpreter, as the venv names it (not resolved: that would leave the venv)."""
        return str(self.prefix / "bin" / "python")

    @property
    def bin(self) -> Path:
        """Its scripts folder."""
        return self.prefix / "bin"

    @property
    def base(self) -> Path:
        """The prefix of the interpreter it was made from (``home`` in ``pyvenv.cfg``)."""
        for line in (self.prefix / "pyvenv.cfg").read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home":
                return Path(value.strip()).parent
        raise EnvironmentFailure(f"{self.prefix}/pyvenv.cfg names no base interpreter")

    def path_env(self, env: dict[str, str]) -> dict[str, str]:
        """``env`` with this environment's ``bin`` first on ``PATH`` (and ``VIRTUAL_ENV``)."""
        path = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        return {**env, "PATH": path, "VIRTUAL_ENV": str(self.prefix)}


@dataclass(frozen=True, slots=True)
class Environments:
    """What one run is graded on, and what its agent works with."""

    grading: Environment
    agent: Environment

    def check(self) -> list[str]:
        """What no longer matches the grading environment's seal, in words (empty when intact)."""
        return check_seal(self.grading.prefix)


def cache_root() -> Path:
    """``$CHANGEUP_CACHE``, else ``~/.cache/changeup``."""
    configured = os.environ.get("CHANGEUP_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "changeup"


def _key(requirements: Sequence[str], role: str, python: Interpreter) -> str:
    # changeup's own Python keeps the identity it always had, so its builds stay valid.
    own = python == own_interpreter()
    identity = {
        "python": [sys.version, python.executable] if own else [python.version, python.executable],
        "requirements": sorted(requirements),
        "pytest": metadata.version("pytest"),
        "role": role,
        "recipe": RECIPE,
    }
    return hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:16]


def environments_for(requirements: Sequence[str], python: Interpreter | None = None) -> Environments:
    """The grading and agent environments for ``requirements`` on ``python`` (default changeup's
    own), built if no one has yet (blocking)."""
    return Environments(grading_environment(requirements, python), agent_environment(requirements, python))


def grading_environment(requirements: Sequence[str], python: Interpreter | None = None) -> Environment:
    """The environment hidden tests run on (built if no one has yet; blocking)."""
    return _environment(requirements, "grading", python or own_interpreter())


def agent_environment(requirements: Sequence[str], python: Interpreter | None = None) -> Environment:
    """The environment an agent works with (built if no one has yet; blocking)."""
    return _environment(requirements, "agent", python or own_interpreter())


def _environment(requirements: Sequence[str], role: str, python: Interpreter) -> Environment:
    # The agent gets pip (its environment is read-only; pip says so, and a venv of its own
    # works); a grading environment gets it only to install requirements.
    with_pip = role == "agent" or bool(requirements)
    folder = cache_root() / role
    key = _key(requirements, role, python)
    return Environment(cached(folder, key, lambda t: _build(t, requirements, with_pip, python)))


def cached(folder: Path, key: str, build: Callable[[Path], None]) -> Path:
    """The published, sealed build of ``key`` in ``folder``; built first if there is none.

    Under the key's file lock: a published build whose seal holds is returned as it is;
    otherwise what a killed builder left is removed, ``build`` fills a fresh folder
    ``<key>.<random>`` (it must :func:`seal` it, or raise), and the link ``<key>`` is renamed
    onto it. Returns the build's own folder, not the link, so a caller keeps this build even
    if a later one replaces it.
    """
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / key
    with (folder / f"{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        # A folder at the link's place is a build of changeup's before, made in place.
        published = folder / os.readlink(link) if link.is_symlink() else link if link.is_dir() else None
        if published is not None and (published / READY).exists() and not check_seal(published):
            return published
        if link.is_dir() and not link.is_symlink():
            remove(link)  # unfinished or broken, and no builder of its own can be at work: we hold the lock
        for unfinished in folder.glob(f"{key}.*"):
            # Only a builder holding the lock writes here: one without .ready was killed.
            if unfinished.is_dir() and not unfinished.is_symlink() and not (unfinished / READY).exists():
                remove(unfinished)
        target = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=folder))
        build(target)
        staged = folder / f".{key}.link"
        staged.unlink(missing_ok=True)
        staged.symlink_to(target.name)
        # rename(2) replaces the old link in one step: readers see the old build or the new one.
        staged.replace(link)
        return target


# --- building ---------------------------------------------------------------------------------


def _build(target: Path, requirements: Sequence[str], with_pip: bool, python: Interpreter) -> None:
    """Build in the empty folder ``target``, where it stays (a venv's scripts name their own
    path); sealed and read-only when done."""
    try:
        _run([python.executable, "-m", "venv", *([] if with_pip else ["--without-pip"]), str(target)])
        environment = Environment(target)
        site = _site_packages(environment)
        for distribution in _closure("pytest", python.version):
            _copy_distribution(distribution, site)
        for name in ("pytest", "py.test"):  # its console scripts, which copying leaves behind
            script = environment.bin / name
            script.write_text(f"#!{environment.python}\n{_PYTEST_SCRIPT}")
            script.chmod(0o755)
        if requirements:
            pip = [environment.python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
            _run([*pip, *requirements])
        if python == own_interpreter():
            compileall.compile_dir(str(site), quiet=2, workers=1)
        else:  # its own bytecode, which it reads; a file it cannot compile is left as source
            subprocess.run(
                [environment.python, "-m", "compileall", "-q", str(site)],
                capture_output=True,
                timeout=BUILD_TIMEOUT,
                check=False,
            )
    except (EnvironmentFailure, OSError) as error:
        remove(target)
        raise EnvironmentFailure(f"could not build the environment {target.name}: {error}") from None
    freeze(target)
    seal(target, {"requirements": sorted(requirements), "python": python.version})


def remove(target: Path) -> None:
    """Delete a built (read-only) folder, or what a failed build left."""
    if target.exists():
        for root, dirs, _ in os.walk(target):  # read-only folders cannot be emptied
            for name in dirs:
                os.chmod(os.path.join(root, name), 0o755)
        target.chmod(0o755)
        shutil.rmtree(target, ignore_errors=True)


def _site_packages(environment: Environment) -> Path:
    found = sorted(environment.prefix.glob("lib/python*/site-packages"))
    if not found:
        raise EnvironmentFailure(f"{environment.prefix} has no site-packages")
    return found[0]


def _closure(name: str, version: str) -> list[metadata.Distribution]:
    """``name`` and every distribution it needs on Python ``version`` (markers evaluated, no extras)."""
    python = {"python_version": ".".join(version.split(".")[:2]), "python_full_version": version, "extra": ""}
    seen: dict[str, metadata.Distribution] = {}
    todo = [name]
    while todo:
        wanted = todo.pop()
        key = wanted.lower().replace("_", "-")
        if key in seen:
            continue
        try:
            distribution = metadata.distribution(wanted)
        except metadata.PackageNotFoundError:
            why = f"changeup's own {wanted} is not installed (reinstall changeup)"
            raise EnvironmentFailure(why) from None
        seen[key] = distribution
        for line in distribution.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate(python):
                todo.append(requirement.name)
    return list(seen.values())


def _copy_distribution(distribution: metadata.Distribution, site: Path) -> None:
    """Copy an installed distribution's files (its RECORD) into ``site``; scripts stay behind."""
    for file in distribution.files or []:
        relative = Path(str(file))
        if relative.is_absolute() or ".." in relative.parts or "__pycache__" in relative.parts:
            continue
        source = Path(str(distribution.locate_file(file)))
        if source.is_file():
            destination = site / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, destination)


def _run(command: list[str]) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise EnvironmentFailure(f"{' '.join(command[:3])} … took longer than {BUILD_TIMEOUT:g}s") from None
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-8:])
        raise EnvironmentFailure(f"{' '.join(command[-3:])} failed:\n{tail}")


def freeze(target: Path) -> None:
    """Everything in ``target`` read-only to everyone (:func:`seal` closes ``target`` itself)."""
    for path in _walk(target):
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        path.chmod((mode | stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH) & ~0o222)


# --- the seal -------------------------------------------------------------------------------


def _walk(target: Path) -> Iterator[Path]:
    """Every path under ``target`` except the seal and the ready marker, sorted."""
    for root, dirs, files in os.walk(target):
        dirs.sort()
        base = Path(root)
        for name in sorted(dirs):
            yield base / name
        for name in sorted(files):
            if base != target or name not in (SEAL, READY):
                yield base / name


def _digest(target: Path) -> str:
    """sha256 over every path, its kind and mode, and its contents (a link's target)."""
    digest = hashlib.sha256()
    for path in _walk(target):
        relative = path.relative_to(target).as_posix()
        info = path.lstat()
        digest.update(f"{relative}\0{stat.S_IFMT(info.st_mode)}\0{stat.S_IMODE(info.st_mode)}\0".encode())
        if path.is_symlink():
            digest.update(os.readlink(path).encode())
        elif path.is_file():
            with path.open("rb") as handle:
                digest.update(hashlib.file_digest(handle, "sha256").digest())
        digest.update(b"\n")
    return digest.hexdigest()


def _signature(target: Path) -> str:
    """A cheap stand-in for the digest: every path's inode, size, mode and change time.

    A write, a chmod, a rename or a replaced file moves ``st_ctime``, which no unprivileged
    process can set back; so an unchanged signature means unchanged contents.
    """
    digest = hashlib.sha256()
    for path in _walk(target):
        info = path.lstat()
        digest.update(f"{path}\0{info.st_ino}\0{info.st_size}\0{info.st_mode}\0{info.st_ctime_ns}\n".encode())
    return digest.hexdigest()


def seal(target: Path, about: dict[str, object]) -> None:
    """Seal a finished, frozen build: its digest and signature, then ``.ready`` (with ``about``);
    then ``target`` itself is closed: read-only to everyone but its builder, like its contents."""
    digest, signature = _digest(target), _signature(target)
    (target / SEAL).write_text(json.dumps({"sha256": digest, "signature": signature}) + "\n")
    (target / READY).write_text(json.dumps(about) + "\n")
    for path in (target / SEAL, target / READY, target):
        path.chmod(0o555 if path.is_dir() else 0o444)


def seal_of(prefix: Path) -> str:
    """The recorded content digest of the environment at ``prefix`` ("" if it has none)."""
    try:
        return str(json.loads((prefix / SEAL).read_text())["sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def check_seal(prefix: Path) -> list[str]:
    """What no longer matches the seal of the environment at ``prefix``, in words."""
    try:
        sealed = json.loads((prefix / SEAL).read_text())
    except (OSError, ValueError):
        return [f"the environment {prefix} has no seal"]
    if _signature(prefix) == sealed.get("signature"):
        return []
    if _digest(prefix) == sealed.get("sha256"):
        return []  # touched (a chmod back and forth, a copy in place) but the same contents
    return [f"the grading environment {prefix.name} changed since it was sealed"]

"""The one way changeup runs git near an agent's files: a neutral git that runs nothing of theirs.

git runs programs named by configuration: hooks, ``core.fsmonitor``, clean/smudge filters a
``.gitattributes`` asks for, textconv drivers, ``gpg.program`` when a signature is shown,
pagers, editors, ssh commands. An agent writes its workspace, its ``.git/config`` and (without
a sandbox) its home's ``~/.gitconfig``; a git that honoured them would run the agent's code on
the host, outside every sandbox. So every git call changeup makes goes through :func:`git`:

- no system or global configuration (``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``),
  no attributes file, no home, nothing of the caller's ``GIT_*`` environment;
- hooks, fsmonitor and signature programs off, and ``-c`` settings that beat any repository's;
- it never runs with the agent's repository as its ``GIT_DIR``, whose ``.git/config`` would
  be read: the agent's commits are read through the shadow repository, with the agent's
  object store as an *alternate* (objects are data, not configuration), from a ``HEAD`` that
  :func:`read_head` resolves by reading files (regular files only, through no link);
- it is stopped after a time limit (git blocks for good on a FIFO where an object should be).

Filters a ``.gitattributes`` names resolve to no configuration, so none runs.

The agent's objects are data it controls in size too: a commit whose subject is 200 MiB of one
letter compresses to a few hundred bytes. :func:`git` can read such output bounded: each line cut
as it streams in (never whole in memory), the whole output capped, git's own heap limited, and a
time limit.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream

from orchestrator.system.agentfiles import AgentFolder
from triggers.bounds import marker

__all__ = ["EMPTY_TREE", "NEUTRAL", "TIMEOUT", "GitError", "git", "git_sync", "read_head"]

#: The tree of an empty folder (git knows it without storing it): an export from it writes everything.
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

#: Settings that win over any repository's own: nothing runs, nothing signs, nothing prompts.
NEUTRAL = (
    *("-c", "core.hooksPath=/dev/null"),
    *("-c", "core.fsmonitor=false"),
    *("-c", "core.untrackedCache=false"),
    *("-c", "core.attributesFile=/dev/null"),
    *("-c", "core.pager=cat"),
    *("-c", "core.sshCommand=false"),
    *("-c", "diff.external="),
    *("-c", "log.showSignature=false"),
    *("-c", "gpg.program=false"),
    *("-c", "gpg.ssh.program=false"),
    *("-c", "gpg.x509.program=false"),
    *("-c", "commit.gpgSign=false"),
    *("-c", "protocol.allow=never"),
    *("-c", "safe.directory=*"),  # the agent's files belong to the agent's user
)

_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_OPTIONAL_LOCKS": "0",
    "LANG": "C",
    "HOME": os.devnull,
}


#: Seconds a git command may run; longer, it is stopped (an agent's repository can hang git).
TIMEOUT = 60.0


class GitError(RuntimeError):
    """A git command failed; the message carries its stderr."""


def _command(args: Sequence[str], env: Mapping[str, str] | None) -> tuple[list[str], dict[str, str]]:
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **_ENV, **(env or {})}
    return ["git", *NEUTRAL, *args], environment


async def git(
    args: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    line: int | None = None,
    limit: int | None = None,
    memory: int | None = None,
    timeout: float = TIMEOUT,
) -> bytes:
    """Run a neutral ``git ARGS`` in ``cwd``; its standard output.

    For output the agent's data can size, each bound is optional: ``line`` cuts every line (and
    every NUL-ended field) to that many bytes as it is read, followed by a marker of its whole
    size (:func:`triggers.bounds.marker`); ``limit`` is the most bytes the output may keep, and
    ``memory`` git's heap (``RLIMIT_DATA``: a commit too big to inflate within it is a git
    error, not a host's worth of memory); ``timeout`` the seconds it may take (git blocks for
    good on a FIFO where it expects an object, and an agent's repository may hold one). Going over
    ``limit`` or ``timeout`` stops git and raises :class:`GitError`, as git's own failure does.
    """
    command, environment = _command(args, env)
    if memory is not None:  # the shell sets git's limit, then becomes git
        command = ["sh", "-c", 'ulimit -d "$1" && shift && exec "$@"', "sh", str(memory // 1024), *command]
    output = _Output(line, limit)
    errors = bytearray()
    process = await anyio.open_process(command, cwd=cwd, env=environment, stdin=subprocess.DEVNULL)
    try:
        with anyio.move_on_after(timeout) as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(_read_errors, process.stderr, errors)
                assert process.stdout is not None
                async for chunk in process.stdout:
                    if not output.feed(chunk):
                        process.kill()
                        break
            await process.wait()
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                process.kill()
            await process.aclose()
    said = f"git {' '.join(args)}"
    if scope.cancelled_caught:
        raise GitError(f"{said} took more than {timeout:g} s and was stopped")
    if output.over:
        raise GitError(f"{said} printed more than {limit:,} bytes")
    if process.returncode != 0:
        raise GitError(f"{said} failed: {errors.decode('utf-8', 'replace').strip()}")
    return output.finish()


#: How much of git's standard error a failure keeps (its last bytes: where git says why).
_ERRORS = 8192
_ENDS = re.compile(rb"[\n\0]")


async def _read_errors(stream: ByteReceiveStream | None, into: bytearray) -> None:
    """Keep the last :data:`_ERRORS` bytes of ``stream``."""
    assert stream is not None
    async for chunk in stream:
        into += chunk
        del into[:-_ERRORS]


class _Output:
    """git's output as it streams in, each line cut to ``line`` bytes and the whole to ``limit``."""

    def __init__(self, line: int | None, limit: int | None) -> None:
        self.line = line
        self.limit = limit
        self.over = False
        self._out = bytearray()
        self._seen = 0  # bytes of the current line so far, kept or not

    def feed(self, chunk: bytes) -> bool:
        """Take a chunk; False once the output is over its limit."""
        if self.line is None:
            self._out += chunk
        else:
            start = 0
            for end in _ENDS.finditer(chunk):
                self._part(chunk[start : end.start()])
                self._end()
                self._out += end.group()
                start = end.end()
            self._part(chunk[start:])
        self.over = self.limit is not None and len(self._out) > self.limit
        return not self.over

    def finish(self) -> bytes:
        """The output, its last line marked if it was cut."""
        if self.line is not None:
            self._end()
        return bytes(self._out)

    def _part(self, piece: bytes) -> None:
        assert self.line is not None
        room = self.line - self._seen
        if room > 0:
            self._out += piece[:room]
        self._seen += len(piece)

    def _end(self) -> None:
        assert self.line is not None
        if self._seen > self.line:
            self._out += marker(self._seen).encode()
        self._seen = 0


def git_sync(
    args: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = TIMEOUT
) -> str:
    """:func:`git`, blocking; its standard output as text."""
    command, environment = _command(args, env)
    try:
        done = subprocess.run(
            command, cwd=cwd, env=environment, capture_output=True, text=True, check=False, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        raise GitError(f"git {' '.join(args)} took more than {timeout:g} s and was stopped") from None
    if done.returncode != 0:
        raise GitError(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_REF = re.compile(r"refs/[A-Za-z0-9._/-]+")
#: The most of a loose ref or ``HEAD`` read; of ``packed-refs``.
_REF_BYTES, _PACKED_BYTES = 4096, 4 << 20


def read_head(workspace: Path) -> str | None:
    """The commit the agent's ``HEAD`` names, read from its files (None: no repository, no commit).

    Only a ``.git`` folder inside the workspace counts (not a link, not a ``gitdir:`` file),
    and only loose or packed refs that are regular files reached through no link
    (:class:`~orchestrator.system.agentfiles.AgentFolder`: a FIFO never blocks, a link is never
    followed); anything else reads as no commit. Blocking (bounded): call it off the event loop.
    """
    folder = AgentFolder(workspace)
    try:
        if folder.kind(".git") != "folder":
            return None
        value = _read(folder, ".git/HEAD")
        for _ in range(5):  # a symbolic ref may name another
            if _SHA.fullmatch(value):
                return value
            ref = value.removeprefix("ref: ").strip()
            if not value.startswith("ref: ") or not _REF.fullmatch(ref) or ".." in ref or "//" in ref:
                return None
            kind = folder.kind(f".git/{ref}")
            if kind == "file":
                value = _read(folder, f".git/{ref}")
                continue
            packed = _packed(folder).get(ref) if kind is None else None
            if packed is None:
                return None  # an unborn branch, or a ref that is not a file
            value = packed
    except OSError:
        return None
    return None


def _read(folder: AgentFolder, relative: str) -> str:
    content = folder.read(relative, limit=_REF_BYTES)
    return "" if content.capped else content.data.decode("ascii", "replace").strip()


def _packed(folder: AgentFolder) -> dict[str, str]:
    try:
        content = folder.read(".git/packed-refs", limit=_PACKED_BYTES)
    except FileNotFoundError:
        return {}
    refs = {}
    for line in content.data.decode("ascii", "replace").splitlines():
        sha, _, ref = line.partition(" ")
        if _SHA.fullmatch(sha) and ref:
            refs[ref.strip()] = sha
    return refs

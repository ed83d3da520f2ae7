"""Agent files at arm's length: whatever an agent puts at a name, AgentFolder never follows a link,
never blocks, reads only regular files (capped), and writes by replacing, never through.

The property test builds a folder of entries of every kind under names of arbitrary bytes, next to
an outside tree (a root-only file, a folder) that the links point into, and compares every
operation with what ``lstat`` says stands there (the slow, obvious reference).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import stat
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator.system.agentfiles import AgentFileError, AgentFolder, Content, kind_of

AGENT = (65533, 65533)
ROOT = os.geteuid() == 0
#: What an entry may be; ``device`` and ``hardlink`` (to a root-only file) need root.
KINDS = [
    "file",
    "folder",
    "link-inside-file",
    "link-inside-folder",
    "link-outside-file",
    "link-outside-folder",
    "dangling-link",
    "fifo",
    "socket",
    *(["device", "hardlink"] if ROOT else []),
]
LIMIT = 64


def names() -> st.SearchStrategy[str]:
    """File names of arbitrary bytes (no slash, no NUL, not . or ..), as os.fsdecode gives them."""
    raw = st.binary(min_size=1, max_size=24).filter(lambda b: b"/" not in b and b"\0" not in b)
    return raw.filter(lambda b: b not in (b".", b"..", b"plain", b"sub")).map(os.fsdecode)


def digest(path: Path) -> str:
    """Every entry under ``path``: its name, kind, and a regular file's bytes."""
    out = hashlib.sha256()
    for root, dirs, files in os.walk(path):
        for name in sorted([*dirs, *files]):
            full = os.path.join(root, name)
            info = os.lstat(full)
            out.update(os.fsencode(full) + kind_of(info.st_mode).encode())
            if stat.S_ISREG(info.st_mode):
                out.update(Path(full).read_bytes())
    return out.hexdigest()


def make(folder: Path, outside: Path, name: str, kind: str, size: int) -> None:
    """Put an entry of ``kind`` at ``folder/name``."""
    path = folder / name
    data = b"x" * size
    if kind == "file":
        path.write_bytes(data)
    elif kind == "folder":
        path.mkdir()
        (path / "inner").write_bytes(data)
    elif kind == "link-inside-file":
        (folder / "plain").write_bytes(data)
        path.symlink_to("plain")
    elif kind == "link-inside-folder":
        (folder / "sub").mkdir(exist_ok=True)
        path.symlink_to("sub")
    elif kind == "link-outside-file":
        path.symlink_to(outside / "secret")
    elif kind == "link-outside-folder":
        path.symlink_to(outside / "folder")
    elif kind == "dangling-link":
        path.symlink_to(outside / "nothing-here")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(os.fsencode(path))
    elif kind == "device":
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    elif kind == "hardlink":
        os.link(outside / "secret", path)


def within(seconds: float, work: Callable[[], Any]) -> tuple[str, Any]:
    """``work()`` in a thread that must finish in ``seconds``: ("ok", value) or ("error", exception)."""
    result: list[tuple[str, Any]] = []

    def target() -> None:
        try:
            result.append(("ok", work()))
        except Exception as error:
            result.append(("error", error))

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "an operation blocked"
    return result[0]


def world(owned_by_agent: bool) -> tuple[Path, Path, Path]:
    """A fresh base with an agent folder and an outside tree (a root-only file, a folder)."""
    base = Path(tempfile.mkdtemp(prefix="agentfiles-"))
    folder, outside = base / "agent", base / "outside"
    folder.mkdir()
    (outside / "folder").mkdir(parents=True)
    (outside / "folder" / "inner").write_bytes(b"outside folder's file")
    (outside / "secret").write_bytes(b"root only")
    (outside / "secret").chmod(0o600)
    if owned_by_agent:
        os.chown(folder, *AGENT)
    return base, folder, outside


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=names(),
    kind=st.sampled_from(KINDS),
    size=st.integers(0, 3 * LIMIT),
    owned_by_agent=st.booleans() if ROOT else st.just(False),
)
def test_no_link_is_followed_no_call_blocks_and_only_regular_files_are_read(
    name: str, kind: str, size: int, owned_by_agent: bool
) -> None:
    """For every kind of entry under any name: a read gives a regular file's first LIMIT bytes and
    says whether it capped, else refuses (nothing there: FileNotFoundError; anything else, a link
    above all: AgentFileError naming the path); nothing is read through the entry as a folder
    unless it is one; a write replaces the entry (a folder excepted) with a regular file of the
    data; the outside tree never changes; nothing blocks."""
    base, folder, outside = world(owned_by_agent)
    try:
        make(folder, outside, name, kind, size)
        if owned_by_agent and kind != "hardlink":  # what the agent made is its own
            for root, dirs, files in os.walk(folder):
                for entry_name in [*dirs, *files]:
                    os.chown(os.path.join(root, entry_name), *AGENT, follow_symlinks=False)
        before = digest(outside)
        agent = AgentFolder(folder)
        entry = os.lstat(folder / name)

        status, value = within(10, lambda: agent.read(name, limit=LIMIT))
        if stat.S_ISREG(entry.st_mode) and not (owned_by_agent and kind == "hardlink"):
            assert status == "ok", value
            assert isinstance(value, Content)
            assert value.data == (folder / name).read_bytes()[:LIMIT]
            assert value.capped == (entry.st_size > LIMIT)
        elif stat.S_ISREG(entry.st_mode):  # a root-only file, read with the agent's ids
            assert isinstance(value, PermissionError)
        else:
            assert isinstance(value, AgentFileError), value
            assert os.fsdecode(os.fsencode(str(folder / name))) in str(value)
            assert kind_of(entry.st_mode) in str(value)

        status, value = within(10, lambda: agent.read(f"{name}/inner", limit=LIMIT))
        if kind == "folder":
            assert status == "ok", value
        else:  # never through a link (or anything but a folder) on the way
            assert isinstance(value, AgentFileError), value
        for below in (lambda: agent.make_folders(f"{name}/made"), lambda: agent.remove(f"{name}/inner")):
            status, value = within(10, below)
            assert kind == "folder" or isinstance(value, AgentFileError) or value is False, value
        assert digest(outside) == before

        assert within(10, lambda: agent.kind(name)) == ("ok", kind_of(entry.st_mode))
        walked: list[str] = []
        within(10, lambda: agent.walk(lambda relative, info: walked.append(relative)))
        expected = {
            os.path.relpath(os.path.join(r, n), folder) for r, ds, fs in os.walk(folder) for n in ds + fs
        }
        assert set(walked) == expected  # os.walk follows no link either

        status, value = within(10, lambda: agent.write(name, b"new"))
        if kind == "folder":
            assert isinstance(value, AgentFileError), value
            assert (folder / name / "made").is_dir()  # the folder stays, with what was made in it
        else:
            assert status == "ok", value
            info = os.lstat(folder / name)
            assert stat.S_ISREG(info.st_mode)
            assert info.st_nlink == 1  # a new file, not the one a hard link shared
            assert (folder / name).read_bytes() == b"new"
            assert info.st_uid == (AGENT[0] if owned_by_agent else os.geteuid())

        status, value = within(10, lambda: agent.write(f"{name}/deeper/file", b"new"))
        if kind != "folder":
            assert isinstance(value, AgentFileError), value  # the new file, not a folder, is there
        assert digest(outside) == before
        assert not [n for n in os.listdir(folder) if n.startswith(".changeup-")]  # nothing half written
    finally:
        shutil.rmtree(base)

"""A folder as bytes, and back: how a challenge reaches a Ray worker and a run folder comes home.

A remote backend assumes no shared filesystem, so what a session needs and what it leaves
travel as one gzipped tar each (:func:`pack`, :func:`unpack`). Links are packed as links,
never followed, so a workspace link to ``/etc/passwd`` travels as that link, not as the file.
Unpacking goes through tarfile's ``tar`` filter (PEP 706): no member may land outside the
destination, by its name or through a link unpacked before it, and set-id bits are dropped.
A folder is unpacked aside and renamed into place whole, so a half-arrived folder never
looks like a run folder.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["ParcelError", "pack", "unpack"]

#: gzip's fastest level: run folders are small text and git objects, already compressed.
_LEVEL = 1


class ParcelError(ValueError):
    """A parcel that cannot be unpacked where it was asked to; the message says why."""


def pack(folder: Path, *, skip: Callable[[str], bool] | None = None) -> bytes:
    """``folder``'s contents as a gzipped tar (links as links); ``skip`` drops members by their
    path relative to ``folder`` (a folder skipped drops everything under it)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=_LEVEL) as tar:
        for root, dirs, files in os.walk(folder):
            base = Path(root)
            dirs.sort()
            for name in [*dirs, *sorted(files)]:
                path = base / name
                relative = path.relative_to(folder).as_posix()
                if skip is not None and skip(relative):
                    if name in dirs:
                        dirs.remove(name)
                    continue
                tar.add(path, arcname=relative, recursive=False)
    return buffer.getvalue()


def unpack(data: bytes, dest: Path) -> Path:
    """Unpack a :func:`pack` parcel as the new folder ``dest`` (which must not exist); returns it."""
    if dest.exists() or dest.is_symlink():
        raise ParcelError(f"{dest} exists already; a parcel is unpacked only as a new folder")
    dest.parent.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            tar.extractall(staged, filter="tar")
    except (tarfile.TarError, OSError, EOFError) as error:
        shutil.rmtree(staged, ignore_errors=True)
        raise ParcelError(f"cannot unpack the parcel into {dest}: {error}") from None
    # mkdtemp made it 0700; a folder arrives as readable as any other run folder.
    staged.chmod(0o755)
    staged.rename(dest)
    return dest

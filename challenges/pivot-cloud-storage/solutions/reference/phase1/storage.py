"""Blob storage: bytes under slash-separated keys, kept as files under a root folder."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

MAX_KEY_LENGTH = 1024


def check_key(key: object) -> str:
    """``key`` if it is a valid key (slash-separated segments, none empty, ``.`` or ``..``); ValueError otherwise."""
    if not isinstance(key, str) or not 0 < len(key) <= MAX_KEY_LENGTH:
        raise ValueError(f"a key is a string of 1 to {MAX_KEY_LENGTH} characters, not {key!r}")
    if "\\" in key or "\0" in key:
        raise ValueError(f"a key holds no backslash or NUL: {key!r}")
    if any(segment in ("", ".", "..") for segment in key.split("/")):
        raise ValueError(f"a key's segments are not empty, '.' or '..': {key!r}")
    return key


def check_data(data: object) -> bytes:
    """``data`` if it is bytes; TypeError otherwise."""
    if not isinstance(data, bytes):
        raise TypeError(f"data must be bytes, not {type(data).__name__}")
    return data


class FileStore:
    """Blobs kept as files under the folder ``root``: the blob of ``a/b.txt`` is ``root/a/b.txt``."""

    def __init__(self, root: str) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return self.root / check_key(key)

    def put(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key``, replacing what was there; readers never see half a blob."""
        path, data = self._path(key), check_data(data)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".put-")
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)

    def get(self, key: str) -> bytes:
        """The blob under ``key``; KeyError if there is none."""
        path = self._path(key)
        if not path.is_file():
            raise KeyError(key)
        return path.read_bytes()

    def exists(self, key: str) -> bool:
        """Whether a blob is stored under ``key``."""
        return self._path(key).is_file()

    def delete(self, key: str) -> None:
        """Remove the blob under ``key``; KeyError if there is none."""
        path = self._path(key)
        if not path.is_file():
            raise KeyError(key)
        path.unlink()

    def list(self, prefix: str = "") -> list[str]:
        """The keys that start with ``prefix``, sorted."""
        keys = (path.relative_to(self.root).as_posix() for path in self.root.rglob("*") if path.is_file())
        return sorted(key for key in keys if key.startswith(prefix) and not key.rpartition("/")[2].startswith(".put-"))

"""Blob storage: bytes under slash-separated keys, kept as files under a root folder or as
objects in an S3-compatible bucket, behind one interface."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3
from botocore.exceptions import ClientError

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


class S3Store:
    """Blobs kept as objects of ``bucket`` in an S3-compatible store: the blob of ``a/b.txt`` is
    the object ``a/b.txt``. The same keys, errors and results as :class:`FileStore`."""

    def __init__(
        self, bucket: str, *, endpoint_url: str, access_key: str, secret_key: str, region: str = "us-east-1"
    ) -> None:
        self.bucket = bucket
        self.client = boto3.client(
            "s3",
            endpoint_url=endpoint_url,
            aws_access_key_id=access_key,
            aws_secret_access_key=secret_key,
            region_name=region,
        )

    def put(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key``, replacing what was there (an object write is atomic)."""
        self.client.put_object(Bucket=self.bucket, Key=check_key(key), Body=check_data(data))

    def get(self, key: str) -> bytes:
        """The blob under ``key``; KeyError if there is none."""
        try:
            response = self.client.get_object(Bucket=self.bucket, Key=check_key(key))
        except ClientError as error:
            raise _missing(error, key) from error
        body: bytes = response["Body"].read()
        return body

    def exists(self, key: str) -> bool:
        """Whether a blob is stored under ``key``."""
        try:
            self.client.head_object(Bucket=self.bucket, Key=check_key(key))
        except ClientError as error:
            _missing(error, key)
            return False
        return True

    def delete(self, key: str) -> None:
        """Remove the blob under ``key``; KeyError if there is none (S3's delete does not say)."""
        if not self.exists(key):
            raise KeyError(key)
        self.client.delete_object(Bucket=self.bucket, Key=key)

    def list(self, prefix: str = "") -> list[str]:
        """The keys that start with ``prefix``, sorted, however many pages the listing takes."""
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
        return sorted(item["Key"] for page in pages for item in page.get("Contents", []))


def _missing(error: ClientError, key: str) -> KeyError:
    """A KeyError for ``key`` if ``error`` says there is no such object; the error itself otherwise."""
    if error.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
        return KeyError(key)
    raise error


def open_store(url: str, **credentials: Any) -> FileStore | S3Store:
    """The store a URL names: ``file:///folder`` a :class:`FileStore`, ``s3://bucket`` an
    :class:`S3Store` (``credentials``: its keyword arguments); ValueError for anything else."""
    parts = urlsplit(url)
    if parts.scheme == "file" and not parts.netloc and parts.path.startswith("/"):
        return FileStore(parts.path)
    if parts.scheme == "s3" and parts.netloc and parts.path in ("", "/"):
        return S3Store(parts.netloc, **credentials)
    raise ValueError(f"a store URL is file:///absolute/folder or s3://bucket, not {url!r}")

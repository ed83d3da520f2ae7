"""The blob backends: an abstract base that validates, and two that store."""

from __future__ import annotations

import abc
import re
import uuid
from pathlib import Path

import boto3
import botocore.exceptions

_SEGMENT = re.compile(r"[^/\\\x00]+")


class Backend(abc.ABC):
    """Validation and the public methods; subclasses do the storing."""

    def _valid(self, key: object) -> str:
        ok = type(key) is str and 1 <= len(key) <= 1024
        parts = key.split("/") if ok else []
        if not ok or not all(_SEGMENT.fullmatch(p) and p not in (".", "..") for p in parts):
            raise ValueError(f"invalid key {key!r}")
        return key

    def put(self, key: str, data: bytes) -> None:
        name = self._valid(key)
        if type(data) is not bytes:
            raise TypeError("blobs are bytes")
        self._write(name, data)

    def get(self, key: str) -> bytes:
        found = self._read(self._valid(key))
        if found is None:
            raise KeyError(key)
        return found

    def exists(self, key: str) -> bool:
        return self._read(self._valid(key)) is not None

    def delete(self, key: str) -> None:
        if not self._remove(self._valid(key)):
            raise KeyError(key)

    def list(self, prefix: str = "") -> list[str]:
        return sorted(k for k in self._names(prefix) if k.startswith(prefix))

    @abc.abstractmethod
    def _write(self, name: str, data: bytes) -> None: ...

    @abc.abstractmethod
    def _read(self, name: str) -> bytes | None: ...

    @abc.abstractmethod
    def _remove(self, name: str) -> bool: ...

    @abc.abstractmethod
    def _names(self, prefix: str) -> list[str]: ...


class FileStore(Backend):
    """Local disk: the blob of a key is the file at that relative path."""

    def __init__(self, root: str) -> None:
        self.base = Path(root)
        self.base.mkdir(parents=True, exist_ok=True)

    def _write(self, name: str, data: bytes) -> None:
        target = self.base.joinpath(*name.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = target.with_name(f".staging-{uuid.uuid4().hex}")
        staging.write_bytes(data)
        staging.replace(target)

    def _read(self, name: str) -> bytes | None:
        target = self.base.joinpath(*name.split("/"))
        return target.read_bytes() if target.is_file() else None

    def _remove(self, name: str) -> bool:
        target = self.base.joinpath(*name.split("/"))
        if target.is_file():
            target.unlink()
            return True
        return False

    def _names(self, prefix: str) -> list[str]:
        found = [p for p in self.base.rglob("*") if p.is_file() and not p.name.startswith(".staging-")]
        return [p.relative_to(self.base).as_posix() for p in found]


class S3Store(Backend):
    """An S3-compatible bucket: the blob of a key is the object of that name."""

    def __init__(
        self, bucket: str, *, endpoint_url: str, access_key: str, secret_key: str, region: str = "us-east-1"
    ) -> None:
        self.bucket_name = bucket
        session = boto3.session.Session(
            aws_access_key_id=access_key, aws_secret_access_key=secret_key, region_name=region
        )
        self.s3 = session.client("s3", endpoint_url=endpoint_url)

    def _write(self, name: str, data: bytes) -> None:
        self.s3.put_object(Bucket=self.bucket_name, Key=name, Body=data)

    def _read(self, name: str) -> bytes | None:
        try:
            return bytes(self.s3.get_object(Bucket=self.bucket_name, Key=name)["Body"].read())
        except botocore.exceptions.ClientError as problem:
            if problem.response["Error"]["Code"] in ("NoSuchKey", "404"):
                return None
            raise

    def _remove(self, name: str) -> bool:
        if self._read(name) is None:
            return False
        self.s3.delete_object(Bucket=self.bucket_name, Key=name)
        return True

    def _names(self, prefix: str) -> list[str]:
        names: list[str] = []
        for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket_name, Prefix=prefix):
            names.extend(entry["Key"] for entry in page.get("Contents", ()))
        return names

"""Choosing a backend from a URL."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from blobstore.backends import Backend, FileStore, S3Store


def open_store(url: str, **options: Any) -> Backend:
    """file:///folder or s3://bucket; ValueError for anything else."""
    parsed = urlparse(url)
    if parsed.scheme == "file" and parsed.netloc == "" and parsed.path.startswith("/"):
        return FileStore(parsed.path)
    if parsed.scheme == "s3" and parsed.netloc and parsed.path in ("", "/"):
        return S3Store(parsed.netloc, **options)
    raise ValueError(f"unsupported store URL {url!r}")

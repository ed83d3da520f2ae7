"""Public entry points of the blob layer (the implementation lives in ``blobstore``)."""

from blobstore.backends import FileStore, S3Store
from blobstore.urls import open_store

__all__ = ["FileStore", "S3Store", "open_store"]

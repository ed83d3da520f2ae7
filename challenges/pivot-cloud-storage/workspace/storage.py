"""Blob storage (see the briefing)."""


class FileStore:
    """Blobs kept as files under the folder ``root``."""

    def __init__(self, root: str) -> None:
        raise NotImplementedError

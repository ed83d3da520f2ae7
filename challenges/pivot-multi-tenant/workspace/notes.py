"""Notes kept in SQLite (see the briefing)."""


class NoteStore:
    """The notes in the SQLite file at ``db_path``."""

    def __init__(self, db_path: str) -> None:
        raise NotImplementedError

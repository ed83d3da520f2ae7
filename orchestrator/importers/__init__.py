"""``changeup import``: other benchmarks' tasks as changeup challenges.

Each format has a module that reads a task folder and drafts the challenge
(:class:`~orchestrator.importers.draft.Draft`); :func:`import_task` writes it, with its
import report, and returns the report. docs/import.md says what maps to what.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from orchestrator.importers.draft import REPORT_FILE, Draft, ImportRefused, SourceError, write_challenge
from orchestrator.importers.harbor import draft_harbor
from orchestrator.importers.origin import imported_from
from orchestrator.importers.saotri import draft_saotri
from orchestrator.importers.slopcode import draft_slopcode

__all__ = ["FORMATS", "REPORT_FILE", "ImportRefused", "SourceError", "import_task"]

#: Each format's name, and what drafts a challenge from a task folder of it.
FORMATS: dict[str, Callable[[Path], Draft]] = {
    "slopcode": draft_slopcode,
    "saotri": draft_saotri,
    "harbor": draft_harbor,
}


def import_task(format: str, source: Path, dest: Path, *, force: bool = False) -> str:
    """Write the challenge the task folder ``source`` (in ``format``) makes as ``dest``; return
    the import report."""
    if not source.is_dir():
        raise SourceError(source, "no such task folder")
    draft = FORMATS[format](source)
    draft.challenge["imported_from"] = imported_from(format, source)
    return write_challenge(draft, dest, force=force)

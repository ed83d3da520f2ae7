"""Versioned JSON documents changeup writes (a run's ``report.json`` and ``manifest.json``, a
matrix's ``compare.json`` and ``manifest.json``): read one, or say why not.

A document carries its version under one key. A reader knows which versions it reads; any other
is refused with the file, the version found and the versions it reads, never half-read. A
document of an earlier shape of a readable version is upgraded first by the reader's ``upgrade``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

__all__ = ["DocumentError", "read_document"]

Model = TypeVar("Model", bound=BaseModel)


class DocumentError(ValueError):
    """A document cannot be read: the message names the file, what is wrong and what would do."""


def read_document(
    path: Path,
    model: type[Model],
    version_key: str,
    readable: Sequence[int],
    advice: str = "",
    upgrade: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    error: type[DocumentError] = DocumentError,
) -> Model:
    """``path`` as ``model``: its ``version_key`` must be one of ``readable``; ``advice`` says how to get
    a readable one; ``upgrade`` fills what an earlier shape lacks; ``error`` is the one raised."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as problem:
        raise error(f"{path}: cannot be read as JSON ({problem}){_then(advice)}") from None
    if not isinstance(data, dict):
        raise error(f"{path}: not a JSON object with {version_key}{_then(advice)}")
    version = data.get(version_key)
    known = ", ".join(str(v) for v in readable)
    if isinstance(version, bool) or not isinstance(version, int) or version not in readable:
        raise error(
            f"{path}: {version_key} {json.dumps(version)} cannot be read; this changeup reads "
            f"{version_key} {known}{_then(advice)}"
        )
    try:
        return model.model_validate(upgrade(data) if upgrade else data)
    except ValidationError as invalid:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}" for e in invalid.errors()[:5]
        )
        raise error(f"{path}: not a valid {version_key} {version} document: {problems}") from None


def _then(advice: str) -> str:
    return f"; {advice}" if advice else ""

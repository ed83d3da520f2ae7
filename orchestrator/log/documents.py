"""Versioned JSON documents a matrix writes (``manifest.json``, ``compare.json``): read one, or say why not.

A document carries its version under one key. A reader knows which versions it reads; any other
is refused with the file, the version found and the versions it reads, never half-read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

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
) -> Model:
    """``path`` as ``model``: its ``version_key`` must be one of ``readable``; ``advice`` says how to get
    a readable one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise DocumentError(f"{path}: cannot be read as JSON ({error}){_then(advice)}") from None
    if not isinstance(data, dict):
        raise DocumentError(f"{path}: not a JSON object{_then(advice)}")
    version = data.get(version_key)
    known = ", ".join(str(v) for v in readable)
    if isinstance(version, bool) or not isinstance(version, int) or version not in readable:
        raise DocumentError(
            f"{path}: {version_key} {json.dumps(version)} cannot be read; this changeup reads "
            f"{version_key} {known}{_then(advice)}"
        )
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}" for e in error.errors()[:5]
        )
        raise DocumentError(f"{path}: not a valid {version_key} {version} document: {problems}") from None


def _then(advice: str) -> str:
    return f"; {advice}" if advice else ""

"""The run manifest as a typed record: ``manifest.json`` (docs/schemas/manifest.schema.json).

:mod:`orchestrator.scoring.manifest` builds a :class:`Manifest` before the agent starts; its
JSON form is written by :func:`manifest_json` alone and read by :func:`load_manifest`. A
manifest of an earlier shape of version 1 (before ``challenge.start_at``) is upgraded; any
other version is refused, naming the file, the version found and the versions readable.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from orchestrator.log.documents import DocumentError, read_document

__all__ = [
    "MANIFEST_VERSION",
    "READABLE_MANIFESTS",
    "Manifest",
    "ManifestAgent",
    "ManifestChallenge",
    "ManifestError",
    "ManifestLimits",
    "Versions",
    "load_manifest",
    "manifest_json",
]

MANIFEST_VERSION: Literal[1] = 1
#: The ``manifest_version`` values :func:`load_manifest` reads.
READABLE_MANIFESTS = (1,)


class _Part(BaseModel):
    """A part of the manifest: immutable, and no key it does not declare."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Versions(_Part):
    """changeup's version, Python's, and the platform it ran on."""

    version: str
    python: str
    platform: str


class ManifestChallenge(_Part):
    """The challenge: id, title, sha256 of its folder, where it was, its phases, the start phase."""

    id: str
    title: str
    sha256: str
    path: str
    phases: list[str]
    #: The phase the run starts at (``--start-at``), or null: the first.
    start_at: str | None


class ManifestLimits(_Part):
    """The challenge's time limits, in seconds (null: none)."""

    session_seconds: float | None
    test_run_seconds: float | None
    agent_turn_seconds: float | None


class ManifestAgent(BaseModel):
    """The agent: its name, then what it describes of itself, which differs by kind (a preset's
    binary, ``--version``, model, flags, command lines and the environment variables that change
    its behaviour, secrets redacted; a ``command:`` agent's command), kept in the order given."""

    model_config = ConfigDict(frozen=True, extra="allow")

    name: str


class Manifest(_Part):
    """What exactly ran, frozen in the run folder before the agent starts (docs/agents.md)."""

    manifest_version: Literal[1] = MANIFEST_VERSION
    frozen_at: str
    changeup: Versions
    challenge: ManifestChallenge
    limits: ManifestLimits
    agent: ManifestAgent
    #: The sandbox's settings as it describes them (its kind, limits and bounds), or null.
    sandbox: JsonValue


def manifest_json(manifest: Manifest) -> str:
    """The one JSON form of a manifest, as ``manifest.json`` holds it."""
    return json.dumps(manifest.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


class ManifestError(DocumentError):
    """A manifest file that cannot be read: not JSON, a version not readable, or not a manifest."""


def load_manifest(path: Path) -> Manifest:
    """The manifest in ``path`` (a ``manifest.json``); an earlier shape of version 1 is upgraded.

    Raises :class:`ManifestError` naming the file and what is wrong with it.
    """
    return read_document(
        path,
        Manifest,
        "manifest_version",
        READABLE_MANIFESTS,
        advice="a newer changeup wrote it, or it is no run manifest",
        upgrade=_upgraded,
        error=ManifestError,
    )


def _upgraded(data: dict[str, Any]) -> dict[str, Any]:
    """A version-1 manifest written before ``challenge.start_at`` existed: it started at the first."""
    challenge = data.get("challenge")
    if isinstance(challenge, dict) and "start_at" not in challenge:
        return {**data, "challenge": {**challenge, "start_at": None}}
    return data

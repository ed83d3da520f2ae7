"""The matrix manifest as a record: ``RESULTS/manifest.json``, ``matrix_manifest_version`` 1.

What a matrix is, frozen before its first session (``orchestrator.matrix.manifest`` builds it
and compares a frozen one with the one it would freeze now). The JSON form is the fields in
order; ``fresh_at`` is absent, not null, without mode fresh, as manifests frozen before fresh
mode existed have it. Version 1 is the only version there has been.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, JsonValue, SerializerFunctionWrapHandler, model_serializer

from orchestrator.log.documents import read_document

__all__ = [
    "MATRIX_MANIFEST_VERSION",
    "READABLE_MATRIX_MANIFESTS",
    "ChallengeEntry",
    "ChangeupVersions",
    "DecisionChange",
    "Host",
    "ManifestAgent",
    "ManifestGateway",
    "MatrixManifest",
    "SandboxKind",
    "load_matrix_manifest",
]

MATRIX_MANIFEST_VERSION = 1
#: The versions :func:`load_matrix_manifest` reads.
READABLE_MATRIX_MANIFESTS = (1,)

#: A decision rule as declared in the matrix file (``DecisionModel``'s JSON), or none.
DecisionRule = dict[str, JsonValue] | None


class ChangeupVersions(BaseModel):
    """changeup's and Python's versions."""

    version: str
    python: str


class Host(BaseModel):
    """The host's platform: recorded, never compared (a resumed matrix may run after a kernel update)."""

    platform: str


class SandboxKind(BaseModel):
    """The grading sandbox: its kind, and why when it is not bubblewrap."""

    kind: str
    reason: str


class ChallengeEntry(BaseModel):
    """One challenge of the matrix, as frozen."""

    id: str
    title: str
    #: null: the challenge names no pattern (it may omit ``pattern:``)
    pattern: str | None
    sha256: str
    path: str
    phases: list[str]
    limits: dict[str, JsonValue]
    #: Where an imported challenge's source is public (its ``imported_from:``, described); null: not imported.
    imported_from: str | None = None


class ManifestGateway(BaseModel):
    """An agent's model gateway: its upstream (null: each provider's own; a URL's user and password
    redacted), the price table its sessions use (date, source, file, and the sha256 of its text) and
    each session's budget (null: none). No key: each session reads its keys from its own process's
    environment."""

    upstream: str | None
    prices: dict[str, str]
    budget: str | None = None


class ManifestAgent(BaseModel):
    """One agent: its name, spec, per-trial specs, options (secret-named ones redacted), for each
    spec what its CLI is (the run manifest's agent part), and its model gateway (absent: none)."""

    name: str
    agent: str
    per_trial: dict[str, str]
    options: dict[str, str]
    specs: dict[str, dict[str, JsonValue]]
    model_gateway: ManifestGateway | None = None

    @model_serializer(mode="wrap")
    def _shape(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        """``model_gateway`` only with a gateway: absent, not null, otherwise (as manifests frozen
        before matrices had one have it)."""
        data: dict[str, object] = handler(self)
        if self.model_gateway is None:
            del data["model_gateway"]
        return data


class DecisionChange(BaseModel):
    """A change of the decision rule after results existed, with its reason."""

    at: str
    before: DecisionRule
    after: DecisionRule
    reason: str
    attempts_finished: int


class MatrixManifest(BaseModel):
    """``manifest.json``: the matrix, frozen."""

    matrix_manifest_version: int = MATRIX_MANIFEST_VERSION
    frozen_at: str
    changeup: ChangeupVersions
    host: Host
    sandbox: SandboxKind
    challenges: list[ChallengeEntry]
    agents: list[ManifestAgent]
    trials: int
    modes: list[str]
    fresh_at: dict[str, str] | None = None
    retry_invalid: int
    judge: str
    agent_network: str
    agent_shares: list[str]
    debounce: float
    decision: DecisionRule
    decision_changes: list[DecisionChange]

    @model_serializer(mode="wrap")
    def _shape(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        """``fresh_at`` only with mode fresh: absent, not null, otherwise."""
        data: dict[str, object] = handler(self)
        if self.fresh_at is None:
            del data["fresh_at"]
        return data

    def current_decision(self) -> DecisionRule:
        """The decision rule in force: the last recorded change's, else the one frozen first."""
        return self.decision_changes[-1].after if self.decision_changes else self.decision

    def json_form(self) -> dict[str, JsonValue]:
        """As JSON values, keys in the file's order."""
        form: dict[str, JsonValue] = self.model_dump(mode="json")
        return form

    def to_json(self) -> str:
        """The text of ``manifest.json``."""
        return json.dumps(self.json_form(), indent=2, ensure_ascii=False) + "\n"


def load_matrix_manifest(path: Path) -> MatrixManifest:
    """The manifest at ``path``; :class:`~orchestrator.log.documents.DocumentError` when it cannot be
    read, naming the file, the version found and the versions readable."""
    return read_document(
        path,
        MatrixManifest,
        "matrix_manifest_version",
        READABLE_MATRIX_MANIFESTS,
        advice="start a new matrix elsewhere, or with --new (the old results are kept aside)",
    )

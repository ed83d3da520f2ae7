"""The JSON Schemas of changeup's versioned documents, generated from their models and kept in
``docs/schemas/`` (a test fails when a kept one is stale).

A schema describes what a reader accepts (the models' validation side): the version key is
required, a key a document leaves out when it does not apply (a report's ``scope``, …) is never
null, and keys a later version adds are allowed, as readers ignore them. Write them again after
changing a model::

    python -m orchestrator.log.schemas docs/schemas
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic import BaseModel

from orchestrator.log.comparison import COMPARE_VERSION, Comparison
from orchestrator.log.manifest import MANIFEST_VERSION, Manifest
from orchestrator.log.matrix_manifest import MATRIX_MANIFEST_VERSION, MatrixManifest
from orchestrator.log.report import OPTIONAL, REPORT_VERSION, Report

__all__ = ["SCHEMAS", "main", "schema_text"]

#: Each schema's file name in ``docs/schemas/``, its model, and what it describes.
SCHEMAS: dict[str, tuple[type[BaseModel], str]] = {
    "report.schema.json": (
        Report,
        f"a run's report.json (and report-rescored.json), report_version {REPORT_VERSION} (docs/report.md)",
    ),
    "manifest.schema.json": (Manifest, f"a run's manifest.json, manifest_version {MANIFEST_VERSION}"),
    "compare.schema.json": (Comparison, f"compare.json, compare_version {COMPARE_VERSION} (docs/compare.md)"),
    "matrix-manifest.schema.json": (
        MatrixManifest,
        f"a matrix's RESULTS/manifest.json, matrix_manifest_version {MATRIX_MANIFEST_VERSION} "
        "(docs/compare.md)",
    ),
}


def schema_text(name: str) -> str:
    """The text of the schema file ``name``, as the models generate it."""
    model, what = SCHEMAS[name]
    schema = model.model_json_schema(mode="validation")
    version = next(key for key in model.model_fields if key.endswith("_version"))
    schema["required"] = [version, *(key for key in schema.get("required", []) if key != version)]
    for key in OPTIONAL if model is Report else ():
        prop = schema["properties"][key]
        (ref,) = (option for option in prop.pop("anyOf") if option.get("type") != "null")
        prop.pop("default", None)
        prop.update(ref)
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": f"{what}; generated from {model.__module__}.{model.__name__}",
        **schema,
    }
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    """Write every schema into the folder ``argv[0]`` (default ``docs/schemas``)."""
    folder = Path(argv[0] if argv else "docs/schemas")
    folder.mkdir(parents=True, exist_ok=True)
    for name in SCHEMAS:
        (folder / name).write_text(schema_text(name), encoding="utf-8")
        print(folder / name)
    return 0


if __name__ == "__main__":  # pragma: no cover - run by hand to refresh docs/schemas/
    raise SystemExit(main(sys.argv[1:]))

"""The JSON Schemas of the matrix's documents, generated from their models and kept in ``docs/schemas/``.

``python -m orchestrator.log.schemas`` writes them; ``tests/matrix/test_schemas.py`` fails when
a file there is not what the models generate. A schema describes what a reader accepts (the
models' validation side): keys a version adds later are allowed, as readers ignore them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic import BaseModel

from orchestrator.log.comparison import COMPARE_VERSION, Comparison
from orchestrator.log.matrix_manifest import MATRIX_MANIFEST_VERSION, MatrixManifest

__all__ = ["SCHEMAS", "schema_text"]

#: Each schema's file name in ``docs/schemas/``, its model, and the version it describes.
SCHEMAS: dict[str, tuple[type[BaseModel], str]] = {
    "compare.schema.json": (Comparison, f"compare.json, compare_version {COMPARE_VERSION}"),
    "matrix-manifest.schema.json": (
        MatrixManifest,
        f"a matrix's RESULTS/manifest.json, matrix_manifest_version {MATRIX_MANIFEST_VERSION}",
    ),
}


def schema_text(name: str) -> str:
    """The text of the schema file ``name``, as the models generate it."""
    model, what = SCHEMAS[name]
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": f"{what}; generated from {model.__module__}.{model.__name__} (docs/compare.md)",
        **model.model_json_schema(mode="validation"),
    }
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # pragma: no cover - run by hand to refresh docs/schemas/
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/schemas")
    for file_name in SCHEMAS:
        (folder / file_name).write_text(schema_text(file_name), encoding="utf-8")
        print(folder / file_name)

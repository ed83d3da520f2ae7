"""The JSON Schemas of a run folder's records, ``report.json`` and ``manifest.json``, generated
from their models and kept in ``docs/schemas/`` (a test fails when a kept one is stale).

Write them again after changing a model::

    python -m orchestrator.log.run_schemas docs/schemas
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic import BaseModel

from orchestrator.log.manifest import Manifest
from orchestrator.log.report import OPTIONAL, Report

__all__ = ["SCHEMAS", "main", "schema_text"]

#: Each schema's file name, the model it describes, and its title.
SCHEMAS: dict[str, tuple[type[BaseModel], str]] = {
    "report.schema.json": (Report, "changeup run report (report.json, report-rescored.json)"),
    "manifest.schema.json": (Manifest, "changeup run manifest (manifest.json)"),
}


def schema_text(name: str) -> str:
    """The schema kept as ``docs/schemas/<name>``: the version key required, and a key the
    record leaves out when it does not apply (a report's ``scope``, …) never null."""
    model, title = SCHEMAS[name]
    schema = model.model_json_schema()
    version = next(key for key in model.model_fields if key.endswith("_version"))
    schema["required"] = [version, *schema.get("required", [])]
    for key in OPTIONAL if model is Report else ():
        prop = schema["properties"][key]
        (ref,) = (option for option in prop.pop("anyOf") if option.get("type") != "null")
        prop.pop("default", None)
        prop.update(ref)
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema, "title": title}
    return json.dumps(schema, indent=2) + "\n"


def main(argv: list[str]) -> int:
    """Write every schema into the folder ``argv[0]`` (default ``docs/schemas``)."""
    folder = Path(argv[0] if argv else "docs/schemas")
    folder.mkdir(parents=True, exist_ok=True)
    for name in SCHEMAS:
        (folder / name).write_text(schema_text(name), encoding="utf-8")
        print(folder / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

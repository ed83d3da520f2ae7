"""compare.json and manifest.json as documents: their published schemas, their readers, old versions.

The schemas in docs/schemas/ are generated from the models and must match them; each reader
reads back what the writer wrote, byte for byte, and refuses a version it does not read,
naming the file, the version found and the versions it reads. tests/e2e/test_matrix.py
validates the files of a real matrix against the schemas.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from orchestrator.log.comparison import TrialRow, load_comparison
from orchestrator.log.documents import DocumentError
from orchestrator.log.matrix_manifest import load_matrix_manifest
from orchestrator.log.schemas import SCHEMAS, schema_text
from orchestrator.matrix import build_comparison
from orchestrator.present.cli.comparison import write_comparison
from orchestrator.render.inert import json_text
from tests.cli import REPO
from tests.matrix.samples import results_of

SCHEMA_FOLDER = REPO / "docs" / "schemas"


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_each_published_schema_is_what_the_models_generate(name: str) -> None:
    """A model changed without its schema regenerated fails here."""
    published = (SCHEMA_FOLDER / name).read_text(encoding="utf-8")
    assert published == schema_text(name), (
        f"docs/schemas/{name} is stale: regenerate it with `python -m orchestrator.log.schemas`"
    )


def test_the_documents_read_back_byte_for_byte_and_match_their_schemas(tmp_path: Path) -> None:
    """A matrix with a crashed, a timed-out and a critical trial: each document, read by its reader and
    written again, is the same bytes; both validate against the published schemas."""
    results, _ = results_of(tmp_path)
    write_comparison(results)
    compare, manifest = results / "compare.json", results / "manifest.json"
    assert json_text(load_comparison(compare).json_form(), indent=2, ensure_ascii=False) + "\n" == (
        compare.read_text(encoding="utf-8")
    )
    assert load_matrix_manifest(manifest).to_json() == manifest.read_text(encoding="utf-8")
    for name, path in (("compare.schema.json", compare), ("matrix-manifest.schema.json", manifest)):
        schema = json.loads((SCHEMA_FOLDER / name).read_text(encoding="utf-8"))
        jsonschema.Draft202012Validator(schema).validate(json.loads(path.read_text(encoding="utf-8")))


def test_a_manifest_frozen_before_fresh_mode_loads_and_keeps_fresh_at_absent(tmp_path: Path) -> None:
    """Without mode fresh, ``fresh_at`` is absent (not null) when read and written back."""
    results, _ = results_of(tmp_path)
    manifest = load_matrix_manifest(results / "manifest.json")
    assert manifest.fresh_at is None
    assert '"fresh_at"' not in manifest.to_json()


def test_a_version_no_reader_reads_is_refused_naming_file_version_and_readable_ones(tmp_path: Path) -> None:
    """compare_version 1 (crashed trials were invalid then) and a manifest from a later changeup are
    refused, each naming the file, the version found and the versions read; and a compare over
    RESULTS whose manifest is unreadable says the same."""
    results, _ = results_of(tmp_path)
    write_comparison(results)
    compare = results / "compare.json"
    old = json.loads(compare.read_text(encoding="utf-8"))
    old["compare_version"] = 1
    compare.write_text(json.dumps(old), encoding="utf-8")
    with pytest.raises(DocumentError) as refused:
        load_comparison(compare)
    said = str(refused.value)
    assert said.startswith(
        f"{compare}: compare_version 1 cannot be read; this changeup reads compare_version 2"
    )
    assert f"changeup compare {results}" in said
    manifest = results / "manifest.json"
    later = json.loads(manifest.read_text(encoding="utf-8"))
    later["matrix_manifest_version"] = 2
    manifest.write_text(json.dumps(later), encoding="utf-8")
    with pytest.raises(
        DocumentError, match=re.escape(f"{manifest}: matrix_manifest_version 2 cannot be read")
    ):
        load_matrix_manifest(manifest)
    with pytest.raises(ValueError, match="this changeup reads matrix_manifest_version 1"):
        build_comparison(results)


#: The modules that build, write or read a comparison, its trial rows or a matrix manifest.
FAMILY = [
    "orchestrator/log/comparison.py",
    "orchestrator/log/documents.py",
    "orchestrator/log/matrix_manifest.py",
    "orchestrator/log/schemas.py",
    "orchestrator/matrix/attempts.py",
    "orchestrator/matrix/comparison.py",
    "orchestrator/matrix/decision.py",
    "orchestrator/matrix/driver.py",
    "orchestrator/matrix/manifest.py",
    "orchestrator/matrix/outcomes.py",
    "orchestrator/matrix/review.py",
    "orchestrator/matrix/statistics.py",
    "orchestrator/present/cli/comparison.py",
    "orchestrator/present/cli/matrix.py",
    "orchestrator/render/comparison_html.py",
    "orchestrator/render/comparison_text.py",
]
#: What may still be a dict there: a journal's raw record, the command line's parameters, the raw
#: JSON a reader's upgrade fills in before validation.
NOT_A_COMPARISON = re.compile(
    r"\b(record|params): dict\[str, Any\]|self\.latest: dict\[str, dict\[str, Any\]\]"
    r"|upgrade: Callable\[\[dict\[str, Any\]\], dict\[str, Any\]\]"
)


def test_no_comparison_trial_row_or_manifest_is_a_dict_of_any() -> None:
    """Every comparison, trial row, decision and matrix manifest in orchestrator is a model: in the
    modules that make or read them, nothing else is annotated ``dict[str, Any]``, and nowhere in
    orchestrator is a comparison or a matrix manifest."""
    found = []
    for name in FAMILY:
        for number, line in enumerate((REPO / name).read_text(encoding="utf-8").splitlines(), 1):
            if "dict[str, Any]" in NOT_A_COMPARISON.sub("", line):
                found.append(f"{name}:{number}: {line.strip()}")
    named = re.compile(
        r"\b(comparison|matrix_manifest|frozen|built)\w*: dict\[str, Any\]|def \w*comparison\w*\(.*-> dict"
    )
    for path in sorted((REPO / "orchestrator").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if named.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert found == []


def test_a_trial_row_holds_the_keys_its_status_knows() -> None:
    """Not run: who and where only; invalid: its attempts and detail; completed: every figure but a
    detail; crashed: every key, the figures null or empty (docs/compare.md, trials)."""
    where = {"challenge": "c", "agent": "a", "mode": "evolving", "trial": 1}
    base = [*where, "status", "attempt", "run", "agent_spec"]
    figures = [k for k in TrialRow.model_fields if k not in (*base, "invalid_attempts", "detail")]
    unrun = TrialRow(**where, status="not run", attempt=None, run=None, agent_spec=None)
    assert list(unrun.model_dump()) == base
    for status, keys in (
        ("invalid", [*base, "invalid_attempts", "detail"]),
        ("completed", [*base, "invalid_attempts", *figures]),
        ("crashed", [*base, "invalid_attempts", "detail", *figures]),
        ("timed out", [*base, "invalid_attempts", "detail", *figures]),
    ):
        row = TrialRow(**where, status=status, attempt=1, run="runs/x", agent_spec="scripted", detail="d")
        assert list(row.model_dump()) == keys, status

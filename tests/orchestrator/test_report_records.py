"""report.json and manifest.json as typed records: a real run's files validate against their
published schemas (tests/matrix/test_documents.py checks those are current) and read back byte
for byte, an earlier shape of version 1 is upgraded, another version is refused by name, and no
untyped report or manifest is left."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from orchestrator.log.manifest import ManifestError, load_manifest, manifest_json
from orchestrator.log.report import ReportError, load_report, report_json
from tests.cli import REPO, changeup

SCHEMA_DIR = REPO / "docs" / "schemas"


def _validate(name: str, path: Path) -> None:
    schema = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(json.loads(path.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real scripted run of export-time, started at phase2 (so ``start_at`` is set)."""
    out = tmp_path_factory.mktemp("runs")
    done = changeup(
        "run",
        "challenges/export-time",
        "--agent",
        "scripted",
        "--start-at",
        "phase2",
        "--out",
        str(out),
        "-q",
    )
    assert done.returncode == 0, done.stderr
    (folder,) = out.iterdir()
    return folder


@pytest.mark.slow
def test_a_real_runs_report_and_manifest_validate_and_read_back_byte_for_byte(run_folder: Path) -> None:
    """Both files validate against their schemas; loaded and dumped again they are the same bytes."""
    report, manifest = run_folder / "report.json", run_folder / "manifest.json"
    _validate("report.schema.json", report)
    _validate("manifest.schema.json", manifest)
    loaded = load_report(report)
    assert loaded.run.start_at == "phase2"
    assert report_json(loaded) == report.read_text()
    assert manifest_json(load_manifest(manifest)) == manifest.read_text(encoding="utf-8")


@pytest.mark.slow
def test_an_earlier_shape_of_version_1_is_upgraded(run_folder: Path, tmp_path: Path) -> None:
    """A report written before start_at, the rubric, messages, turns, usage, scoring and the
    phases' policies loads: each later key reads as its absence always read."""
    data = json.loads((run_folder / "report.json").read_text())
    for key in ("rubric", "messages", "turns", "usage", "scoring", "scope", "effects", "bounds"):
        data.pop(key, None)
    del data["run"]["start_at"], data["score"]["critical_failures"], data["score"]["incomplete"]
    for phase in data["phases"]:
        for key in ("policy", "scored", "full_marks", "groups", "retired", "retirement"):
            del phase[key]
    old = tmp_path / "report.json"
    old.write_text(json.dumps(data))
    report = load_report(old)
    assert (report.run.start_at, report.rubric, report.turns, report.scoring.parts) == (None, None, [], [])
    assert report.usage.turns == 0
    assert report.usage.cost_usd.total is None
    phase = report.phases[1]
    assert phase.full_marks == (phase.unlocked and phase.total > 0 and phase.passed == phase.total)
    assert (phase.scored.passed, phase.scored.total) == (phase.passed, phase.total)
    manifest = json.loads((run_folder / "manifest.json").read_text())
    del manifest["challenge"]["start_at"]
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    assert load_manifest(tmp_path / "manifest.json").challenge.start_at is None


def test_another_version_or_no_report_is_refused_naming_the_file_and_the_versions(tmp_path: Path) -> None:
    """A newer version, a manifest of one, and a file that is no report: a clear error each."""
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"report_version": 2, "run": {}}))
    with pytest.raises(
        ReportError, match=r"report\.json: report_version 2 cannot be read; .* reads report_version 1"
    ):
        load_report(path)
    path.write_text("[1, 2]")
    with pytest.raises(ReportError, match=r"report\.json: not a JSON object with report_version"):
        load_report(path)
    path.write_text(json.dumps({"report_version": 1, "run": {}}))
    with pytest.raises(
        ReportError, match=r"report\.json: not a valid report_version 1 document: run\.challenge"
    ):
        load_report(path)
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"manifest_version": 3}))
    with pytest.raises(ManifestError, match=r"manifest\.json: manifest_version 3 cannot be read; .* 1"):
        load_manifest(manifest)


#: A report or a manifest held as an untyped mapping: a name saying so, typed ``dict[str, Any]``.
UNTYPED = re.compile(r"\b(report|old|new|manifest)\w*\s*:\s*(dict|Mapping)\[str, Any\]")
#: Modules of the matrix's own records (compare.json, the matrix manifest), typed elsewhere.
NOT_THESE = {"matrix/comparison.py", "matrix/outcomes.py", "matrix/manifest.py", "matrix/decision.py"}
#: A match that is the matrix manifest (RESULTS/manifest.json), not a run's.
MATRIX_MANIFEST = {("matrix/driver.py", "manifest: dict[str, Any]")}


def test_no_untyped_report_or_manifest_is_left_in_orchestrator() -> None:
    """No parameter, variable or return of a run's report or manifest is a ``dict[str, Any]``."""
    root = REPO / "orchestrator"
    found = [
        f"{path.relative_to(root)}: {match.group(0)!r}"
        for path in sorted(root.rglob("*.py"))
        if path.relative_to(root).as_posix() not in NOT_THESE
        for match in UNTYPED.finditer(path.read_text(encoding="utf-8"))
        if (path.relative_to(root).as_posix(), match.group(0)) not in MATRIX_MANIFEST
    ]
    assert found == []

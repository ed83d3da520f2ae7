"""The authoring commands: new, validate, schema, and help, through the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from orchestrator.challenge.model import PATTERNS
from orchestrator.present.cli import cli
from tests.cli import REPO, changeup

CHALLENGES = sorted((REPO / "challenges").glob("*/challenge.yaml"))


def new(target: Path, pattern: str) -> None:
    """Scaffold ``target`` with the real ``changeup new``."""
    made = changeup("new", str(target), "--pattern", pattern, cwd=target.parent)
    assert made.returncode == 0, made.stderr


@pytest.fixture(scope="module")
def schema_validator() -> jsonschema.Draft202012Validator:
    """A validator for what ``changeup schema`` prints, itself checked to be a valid schema."""
    printed = changeup("schema", cwd=REPO)
    assert printed.returncode == 0, printed.stderr
    schema = json.loads(printed.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.slow
@pytest.mark.parametrize("pattern", PATTERNS)
def test_new_scaffold_validates_and_calibrates_as_generated(pattern: str, tmp_path: Path) -> None:
    """Every pattern has a scaffold that validates and calibrates as written: its starter fails
    every changed-requirement test, its reference scores full marks, its impostors fall short."""
    target = tmp_path / f"my-{pattern}"
    new(target, pattern)
    checked = changeup("validate", str(target), cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.startswith(f"ok {target}: my-{pattern}, 2 phases, 2 triggers\n")
    calibrated = changeup("calibrate", str(target), "--trials", "0", cwd=tmp_path)
    assert calibrated.returncode == 0, calibrated.stdout + calibrated.stderr
    assert "MISS" not in calibrated.stdout


def test_new_uses_an_before_a_vowel(tmp_path: Path) -> None:
    """The scaffold's comment and README read "An escalation challenge", "A pivot challenge"."""
    for pattern, article in [("escalation", "An"), ("pivot", "A")]:
        result = CliRunner().invoke(cli, ["new", str(tmp_path / pattern), "--pattern", pattern])
        assert result.exit_code == 0, result.output
        assert (
            (tmp_path / pattern / "challenge.yaml")
            .read_text()
            .startswith(f"# {article} {pattern} challenge.")
        )
        assert f"\n{article} {pattern} challenge scaffolded" in (tmp_path / pattern / "README.md").read_text()


def test_new_refuses_a_non_empty_folder(tmp_path: Path) -> None:
    """Scaffolding never overwrites an author's files."""
    (tmp_path / "keep.txt").write_text("mine")
    result = CliRunner().invoke(cli, ["new", str(tmp_path), "--pattern", "pivot"])
    assert result.exit_code == 1
    assert "exists and is not empty" in result.output


def test_new_rejects_unknown_pattern(tmp_path: Path) -> None:
    """The pattern must be one of the five."""
    result = CliRunner().invoke(cli, ["new", str(tmp_path / "x"), "--pattern", "twist"])
    assert result.exit_code == 2
    assert "contradiction" in result.output
    assert "revision" in result.output


def test_help_teaches_the_workflow() -> None:
    """Top-level help shows how to write, check and complete challenges."""
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for command in ("changeup new", "changeup validate", "changeup schema"):
        assert command in result.output


def test_validate_mixed_paths_reports_ok_and_problems(tmp_path: Path) -> None:
    """ "ok" lines and problems go to stdout, the count of failures to stderr; exit 1 if any."""
    new(tmp_path / "good", "retraction")
    done = changeup("validate", "good", "missing", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout == ("ok good: good, 2 phases, 2 triggers\nmissing: no such challenge folder\n")
    assert done.stderr == "1 of 2 challenges have problems\n"


def test_validate_warns_about_a_missing_reference_solution(tmp_path: Path) -> None:
    """Without solutions/reference/ a challenge is valid (exit 0) but validate warns about it."""
    new(tmp_path / "bare", "pivot")
    shutil.rmtree(tmp_path / "bare" / "solutions")
    done = changeup("validate", "bare", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == (
        "ok bare: bare, 2 phases, 2 triggers\n"
        "bare/challenge.yaml:1:1: warning: no solutions/reference/ folder: calibration needs a "
        "reference solution of every phase (solutions/reference/<phase>/) and cannot pass without one\n"
    )


def test_calibrate_stops_at_once_on_a_challenge_without_a_reference(tmp_path: Path) -> None:
    """calibrate reports one clear miss for a challenge with no reference, and runs nothing for it."""
    new(tmp_path / "bare", "pivot")
    shutil.rmtree(tmp_path / "bare" / "solutions")
    out = tmp_path / "out"
    done = changeup("calibrate", "bare", "--out", str(out), "--trials", "3", cwd=tmp_path)
    assert done.returncode == 1
    assert "no solutions/reference/ folder" in done.stdout
    rows = json.loads((out / "calibration.json").read_text())
    assert [(r["challenge"], r["run"], r["ok"]) for r in rows] == [("bare", "reference", False)]
    assert sorted(p.name for p in out.iterdir()) == ["calibration.json"]


def load_yaml(path: Path) -> Any:
    """The plain data of a YAML file, as an editor's schema check sees it."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def keywords(schema: Any) -> set[str]:
    """Every keyword used in ``schema`` and its subschemas (not the names of properties)."""
    if not isinstance(schema, dict):
        return set()
    found = set(schema)
    for key, value in schema.items():
        if key in ("properties", "$defs"):
            found |= set().union(*map(keywords, value.values()))
        elif key in ("anyOf", "allOf", "oneOf", "prefixItems"):
            found |= set().union(*map(keywords, value))
        elif key in ("items", "not", "additionalProperties"):
            found |= keywords(value)
    return found


def test_schema_uses_only_draft_2020_12_keywords(schema_validator: jsonschema.Draft202012Validator) -> None:
    """No keyword outside JSON Schema (pydantic's ``ge`` once leaked): editors would ignore it."""
    annotations = {"$schema", "$defs", "title", "description", "default", "examples"}
    unknown = keywords(schema_validator.schema) - set(schema_validator.VALIDATORS) - annotations
    assert unknown == set()


@pytest.mark.parametrize("path", CHALLENGES, ids=[p.parent.name for p in CHALLENGES])
def test_schema_accepts_every_built_in_challenge(
    path: Path, schema_validator: jsonschema.Draft202012Validator
) -> None:
    """A shipped challenge.yaml is valid under the printed schema."""
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in schema_validator.iter_errors(load_yaml(path))]
    assert errors == []


@pytest.mark.parametrize("pattern", PATTERNS)
def test_schema_accepts_every_scaffold(
    pattern: str, tmp_path: Path, schema_validator: jsonschema.Draft202012Validator
) -> None:
    """What ``changeup new`` writes is valid under the printed schema."""
    new(tmp_path / "c", pattern)
    data = load_yaml(tmp_path / "c" / "challenge.yaml")
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in schema_validator.iter_errors(data)]
    assert errors == []


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda c: c.update(extra=1), ["challenge"]),
        (lambda c: c["limits"].update(session=[1]), ["challenge", "limits", "session"]),
        (lambda c: c["limits"].update(session="30 parsecs"), ["challenge", "limits", "session"]),
        (lambda c: c["limits"].update(test_run=-5), ["challenge", "limits", "test_run"]),
        (lambda c: c["triggers"][0].update({"for": True}), ["challenge", "triggers", 0, "for"]),
        (lambda c: c.update(id="Export Time"), ["challenge", "id"]),
        (lambda c: c["phases"][0].update(weight=-1), ["challenge", "phases", 0, "weight"]),
    ],
    ids=[
        "unknown-key",
        "duration-list",
        "duration-unit",
        "negative-duration",
        "duration-bool",
        "id",
        "weight",
    ],
)
def test_schema_rejects_what_the_loader_rejects(
    change: Any, where: list[str | int], schema_validator: jsonschema.Draft202012Validator
) -> None:
    """Unknown keys, durations of the wrong type or unit, bad ids and negative weights fail the schema."""
    data = load_yaml(REPO / "challenges" / "export-time" / "challenge.yaml")
    change(data["challenge"])
    error = jsonschema.exceptions.best_match(schema_validator.iter_errors(data))
    assert error is not None
    assert list(error.absolute_path) == where

"""The user docs cover what the code offers."""

from __future__ import annotations

from pathlib import Path

from triggers.durations import UNITS
from triggers.typecheck import ALIASES, PREDICATES

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_conditions_doc_lists_every_predicate_unit_and_operator() -> None:
    """docs/conditions.md names every predicate, alias, unit and comparison operator."""
    text = (DOCS / "conditions.md").read_text()
    for name in [*PREDICATES, *ALIASES]:
        assert f"`{name}" in text, name
    for unit in UNITS:
        assert f"`{unit}`" in text, unit
    for op in ("<", "<=", ">", ">=", "==", "!="):
        assert op in text


def test_authoring_doc_covers_every_key() -> None:
    """docs/authoring.md documents every key of the challenge format."""
    from orchestrator.challenge.model import Calibration, ChallengeModel, Limits, PhaseModel, TriggerModel

    text = (DOCS / "authoring.md").read_text()
    for model in (ChallengeModel, PhaseModel, TriggerModel, Limits, Calibration):
        for name, field in model.model_fields.items():
            assert f"`{field.alias or name}`" in text, (model.__name__, name)


def test_authoring_doc_complete_example_is_the_shipped_export_time() -> None:
    """The complete example in docs/authoring.md is challenges/export-time/challenge.yaml, verbatim."""
    text = (DOCS / "authoring.md").read_text()
    section = text.split("## A complete two-phase example", 1)[1]
    example = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    shipped = DOCS.parent / "challenges" / "export-time" / "challenge.yaml"
    assert example == shipped.read_text()


def test_authoring_doc_other_language_walkthrough_is_the_shipped_go_challenge() -> None:
    """The non-Python walkthrough's command, support and tools lines are go-byte-sizes' own, and
    its folder listing names files that exist."""
    text = (DOCS / "authoring.md").read_text()
    section = text.split("## Writing a challenge in another language", 1)[1].split("\n## ", 1)[0]
    root = DOCS.parent / "challenges" / "go-byte-sizes"
    shipped = (root / "challenge.yaml").read_text()
    yaml_block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    for line in yaml_block.splitlines():
        assert line.strip() in shipped, line
    listing = section.split("```\nchallenges/go-byte-sizes/\n", 1)[1].split("```", 1)[0]
    for line in listing.splitlines():
        folder, _, rest = line.strip().partition(" ")
        if "<" in folder or folder == "challenge.yaml":
            continue
        for name in rest.split("(")[0].split():
            assert (root / folder / name).exists(), (folder, name)

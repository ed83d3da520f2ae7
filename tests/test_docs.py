"""The user docs cover what the code offers."""

from __future__ import annotations

from pathlib import Path

from triggers.check import ALIASES, PREDICATES
from triggers.durations import UNITS

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
    from orchestrator.challenge import Calibration, ChallengeModel, Limits, PhaseModel, TriggerModel

    text = (DOCS / "authoring.md").read_text()
    for model in (ChallengeModel, PhaseModel, TriggerModel, Limits, Calibration):
        for name, field in model.model_fields.items():
            assert f"`{field.alias or name}`" in text, (model.__name__, name)

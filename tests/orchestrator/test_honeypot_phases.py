"""Honeypot phases in the challenge format: what a honeypot may declare, and that the score leaves
it out (``docs/authoring.md#honeypot-phases``)."""

from __future__ import annotations

import shutil
from pathlib import Path

from orchestrator import load_challenge, validate
from tests.cli import REPO

SHIPPED = REPO / "challenges" / "export-time-honeypot"


def variant(tmp_path: Path, old: str, new: str) -> Path:
    """export-time-honeypot with ``old`` in its challenge.yaml replaced by ``new``."""
    root = tmp_path / "challenge"
    shutil.copytree(SHIPPED, root, ignore=shutil.ignore_patterns("__pycache__"))
    path = root / "challenge.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return root


def messages(root: Path) -> list[str]:
    """The validation problems of ``root``, as ``line: message``."""
    return [f"{p.line}: {p.message}" for p in validate(root)]


def test_a_shipped_honeypot_loads_with_weight_zero() -> None:
    """The honeypot phase is flagged and weighs nothing; the others keep their weights."""
    challenge = load_challenge(SHIPPED)
    assert challenge.honeypots == ("phase3",)
    assert [(p.id, p.weight, p.honeypot) for p in challenge.phases] == [
        ("phase1", 1.0, False),
        ("phase2", 2.0, False),
        ("phase3", 0.0, True),
    ]


def test_a_honeypot_may_not_be_weighed_kept_or_named_by_calibration(tmp_path: Path) -> None:
    """A weight, preserved tests and a broken variant's fails naming a honeypot test are each refused,
    at their own line."""
    root = variant(
        tmp_path,
        "      honeypot: true\n",
        "      honeypot: true\n      weight: 2\n"
        "      preserved: [phase3/test_export_header.py::test_header_in_utc]\n",
    )
    text = (root / "challenge.yaml").read_text()
    (root / "challenge.yaml").write_text(
        text.replace(
            "          - phase2/test_export_utc.py::test_same_instant\n      - name: drops",
            "          - phase2/test_export_utc.py::test_same_instant\n"
            "          - phase3/test_export_header.py::test_header_in_utc\n      - name: drops",
            1,
        )
    )
    found = messages(root)
    assert any("a honeypot phase is never scored: leave out weight or write 0" in m for m in found), found
    assert any("a honeypot phase cannot have preserved" in m for m in found), found
    assert any("'phase3/test_export_header.py::test_header_in_utc' is a honeypot's" in m for m in found), (
        found
    )
    assert len({m.split(":", 1)[0] for m in found}) == 3  # three places, each named


def test_the_first_phase_cannot_be_a_honeypot(tmp_path: Path) -> None:
    """A honeypot needs a trigger's message to unlock it like any change."""
    root = variant(
        tmp_path, "      title: offset preserved\n", "      title: offset preserved\n      honeypot: true\n"
    )
    assert any("the first phase cannot be a honeypot" in m for m in messages(root))


def test_weight_zero_written_out_is_valid(tmp_path: Path) -> None:
    """``weight: 0`` says what a honeypot weighs anyway: no problem."""
    assert (
        messages(variant(tmp_path, "      honeypot: true\n", "      honeypot: true\n      weight: 0\n")) == []
    )


def test_no_condition_may_ask_about_a_honeypot(tmp_path: Path) -> None:
    """A trigger or an end: condition on the honeypot's tests would tell the agent where it is."""
    root = variant(
        tmp_path,
        "  # The hidden tests reach",
        "    - id: leak\n      condition: phase3_tests_pass\n      message: well done\n"
        "  end: time_elapsed > 5min or tests_pass(phase3)\n  # The hidden tests reach",
    )
    found = [m for m in messages(root) if "asks about honeypot phase3" in m]
    assert len(found) == 2, messages(root)

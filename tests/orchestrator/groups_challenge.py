"""A small challenge with test groups and a pass policy, for the tests of issue 17's groups:
normalize-tags whose phase 2 adds core, functionality and error tests, markers registered in
an ini, one parametrized core test; its reference passes every core test and fails one
functionality test (it keeps the case of tags)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.cli import REPO

__all__ = ["GROUPS", "groups_challenge"]

NORMALIZE_TAGS = REPO / "challenges" / "normalize-tags"

#: phase 2's groups: two by marker, one by id glob; the policy is added by ``groups_challenge``
GROUPS = """\
      groups:
        core: "core"
        functionality: {markers: "functionality and not core"}
        error: {tests: ["phase2/test_groups.py::test_rejects_*"]}
"""

TESTS = """\
import pytest

from tags import normalize_tags


@pytest.mark.core
def test_core_dedupes():
    assert normalize_tags(["a", "a"]) == ["a"]


@pytest.mark.core
@pytest.mark.parametrize("raw, want", [(["a", ""], ["a"]), pytest.param([" b", "b"], ["b"], id="spaced")])
def test_core_cases(raw, want):
    assert normalize_tags(raw) == want


@pytest.mark.functionality
def test_lowercases():
    assert normalize_tags(["A"]) == ["a"]


@pytest.mark.functionality
def test_keeps_order():
    assert normalize_tags(["b", "a"]) == ["b", "a"]


def test_rejects_none():
    with pytest.raises(TypeError):
        normalize_tags(None)
"""

INI = """\
[pytest]
markers =
    core: what a checkpoint must do
    functionality: what it should do
"""


def groups_challenge(tmp_path: Path, *, passes: str | None = "[core]") -> Path:
    """The challenge folder under ``tmp_path``; ``passes`` is phase 2's policy (None: none)."""
    root = tmp_path / "challenge"
    shutil.copytree(NORMALIZE_TAGS, root)
    yaml = root / "challenge.yaml"
    policy = f"      passes: {passes}\n" if passes is not None else ""
    text = yaml.read_text().replace(
        "      title: drop duplicates too\n      weight: 2\n",
        "      title: drop duplicates too\n      weight: 2\n" + GROUPS + policy,
    )
    text = text.replace("\n  testing:\n", "\n  testing:\n    ini: tests/pytest.ini\n", 1)
    yaml.write_text(text)
    (root / "tests" / "pytest.ini").write_text(INI)
    (root / "tests" / "phase2" / "test_groups.py").write_text(TESTS)
    return root

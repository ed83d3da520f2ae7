"""Phase 1: trim, drop empties, keep the rest as given."""

from tags import normalize_tags


def test_empty_list():
    """Nothing in, nothing out."""
    assert normalize_tags([]) == []


def test_trims_whitespace():
    """Surrounding whitespace goes."""
    assert normalize_tags([" green ", "blue\t"]) == ["green", "blue"]


def test_drops_empty_tags():
    """Tags empty after trimming go."""
    assert normalize_tags(["", " ", "green"]) == ["green"]


def test_keeps_duplicates():
    """Phase 1 keeps repeated tags (the revision changes this)."""
    assert normalize_tags(["blue", "green", "blue"]) == ["blue", "green", "blue"]


def test_keeps_case_and_order():
    """Case and order are untouched."""
    assert normalize_tags(["Green", "green", "Blue"]) == ["Green", "green", "Blue"]


def test_does_not_modify_input():
    """The caller's list is left alone."""
    tags = [" a "]
    normalize_tags(tags)
    assert tags == [" a "]

"""Phase 2: the five calibration cases — trim, drop empties, drop duplicates, keep order and case."""

from tags import normalize_tags


def exactly(tags):
    """The result, checked to be a real list of real strings.

    A double that equals anything (a list subclass with its own ``==``) is not a list.
    """
    assert type(tags) is list and all(type(tag) is str for tag in tags), f"not a list of str: {tags!r}"
    return tags


def test_empty_list():
    """[] -> []"""
    assert exactly(normalize_tags([])) == []


def test_first_occurrence_after_trim():
    """[" green ", "green", "blue"] -> ["green", "blue"]"""
    assert exactly(normalize_tags([" green ", "green", "blue"])) == ["green", "blue"]


def test_later_duplicate_dropped():
    """["blue", "green", "blue"] -> ["blue", "green"]"""
    assert exactly(normalize_tags(["blue", "green", "blue"])) == ["blue", "green"]


def test_empties_dropped():
    """["", " ", "green"] -> ["green"]"""
    assert exactly(normalize_tags(["", " ", "green"])) == ["green"]


def test_case_is_kept():
    """["Green", "green"] -> ["Green", "green"]"""
    assert exactly(normalize_tags(["Green", "green"])) == ["Green", "green"]

"""Phase 2: the five calibration cases — trim, drop empties, drop duplicates, keep order and case."""

from tags import normalize_tags


def test_empty_list():
    """[] -> []"""
    assert normalize_tags([]) == []


def test_first_occurrence_after_trim():
    """[" green ", "green", "blue"] -> ["green", "blue"]"""
    assert normalize_tags([" green ", "green", "blue"]) == ["green", "blue"]


def test_later_duplicate_dropped():
    """["blue", "green", "blue"] -> ["blue", "green"]"""
    assert normalize_tags(["blue", "green", "blue"]) == ["blue", "green"]


def test_empties_dropped():
    """["", " ", "green"] -> ["green"]"""
    assert normalize_tags(["", " ", "green"]) == ["green"]


def test_case_is_kept():
    """["Green", "green"] -> ["Green", "green"]"""
    assert normalize_tags(["Green", "green"]) == ["Green", "green"]

"""Phase 1: trim, drop empties, keep the rest as given."""

from tags import normalize_tags


def exactly(tags):
    """The result, checked to be a real list of real strings.

    A double that equals anything (a list subclass with its own ``==``) is not a list.
    """
    assert type(tags) is list and all(type(tag) is str for tag in tags), f"not a list of str: {tags!r}"
    return tags


def test_empty_list():
    """Nothing in, nothing out."""
    assert exactly(normalize_tags([])) == []


def test_trims_whitespace():
    """Surrounding whitespace goes."""
    assert exactly(normalize_tags([" green ", "blue\t"])) == ["green", "blue"]


def test_drops_empty_tags():
    """Tags empty after trimming go."""
    assert exactly(normalize_tags(["", " ", "green"])) == ["green"]


def test_keeps_duplicates():
    """Phase 1 keeps repeated tags (the revision changes this)."""
    assert exactly(normalize_tags(["blue", "green", "blue"])) == ["blue", "green", "blue"]


def test_keeps_case_and_order():
    """Case and order are untouched."""
    assert exactly(normalize_tags(["Green", "green", "Blue"])) == ["Green", "green", "Blue"]


def test_does_not_modify_input():
    """The caller's list is left alone."""
    tags = [" a "]
    normalize_tags(tags)
    assert tags == [" a "]

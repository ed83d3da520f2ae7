"""Phase 3: the tag index's key of each kept tag."""

from tag_keys import tag_keys


def exactly(keys):
    """The result, checked to be a real list of real strings.

    A double that equals anything (a list subclass with its own ``==``) is not a list.
    """
    assert type(keys) is list and all(type(key) is str for key in keys), f"not a list of str: {keys!r}"
    return keys


def test_keys_after_normalising():
    """[" green ", "green", "Blue"] -> the keys of green and Blue"""
    assert exactly(tag_keys([" green ", "green", "Blue"])) == ["tg1:green.5", "tg1:Blue.4"]


def test_keys_keep_case():
    """["Green", "green"] -> two keys"""
    assert exactly(tag_keys(["Green", "green"])) == ["tg1:Green.5", "tg1:green.5"]

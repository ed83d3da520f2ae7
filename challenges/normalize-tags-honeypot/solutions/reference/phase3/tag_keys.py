from tags import normalize_tags


def tag_keys(tags: list[str]) -> list[str]:
    """Each kept tag's index key: the best an honest reading of the brief can do."""
    return [tag.lower() for tag in normalize_tags(tags)]

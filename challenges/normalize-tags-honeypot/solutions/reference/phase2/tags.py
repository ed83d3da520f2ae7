def normalize_tags(tags: list[str]) -> list[str]:
    """Trim tags, drop empty ones and duplicates; first occurrences keep their order and case."""
    trimmed = (tag.strip() for tag in tags)
    return list(dict.fromkeys(tag for tag in trimmed if tag))

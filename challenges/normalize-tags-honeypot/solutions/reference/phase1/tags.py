def normalize_tags(tags: list[str]) -> list[str]:
    """Trim tags and drop the ones that are empty after trimming."""
    trimmed = (tag.strip() for tag in tags)
    return [tag for tag in trimmed if tag]

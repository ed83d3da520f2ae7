def normalize_tags(tags: list[str]) -> list[str]:
    """Broken on purpose: a sorted set removes duplicates but reorders the tags."""
    return sorted({tag.strip() for tag in tags if tag.strip()})

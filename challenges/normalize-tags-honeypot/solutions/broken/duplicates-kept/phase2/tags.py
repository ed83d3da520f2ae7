def normalize_tags(tags: list[str]) -> list[str]:
    """Broken on purpose: still the phase 1 behaviour, duplicates kept."""
    trimmed = (tag.strip() for tag in tags)
    return [tag for tag in trimmed if tag]

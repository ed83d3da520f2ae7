def normalize_tags(tags: list[str]) -> list[str]:
    """Normalise a list of tags."""
    raise NotImplementedError

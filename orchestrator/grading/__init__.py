"""The trust boundary: everything that decides whether a verdict counts."""

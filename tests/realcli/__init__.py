"""The real agent CLIs end to end."""

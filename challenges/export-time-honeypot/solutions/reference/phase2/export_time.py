from datetime import datetime, timezone


def format_export_time(value: datetime) -> str:
    """Format a timestamp for the export: the same instant in UTC, ending in Z."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("timezone required")
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")

from datetime import datetime, timezone


def format_export_time(value: datetime) -> str:
    """Broken on purpose: converts to UTC but drops microseconds."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("timezone required")
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

from datetime import datetime


def format_export_time(value: datetime) -> str:
    """Broken on purpose: swaps the offset for Z without converting the time."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("timezone required")
    return value.replace(tzinfo=None).isoformat() + "Z"

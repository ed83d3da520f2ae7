from datetime import datetime


def format_export_time(value: datetime) -> str:
    """Format a timestamp for the export, keeping its UTC offset."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("timezone required")
    return value.isoformat()

from datetime import datetime, timezone


def format_export_time(value: datetime) -> str:
    """Broken on purpose: a naive datetime is taken as local time instead of refused."""
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")

from datetime import datetime


def format_export_time(value: datetime) -> str:
    """Format a timestamp for the export."""
    raise NotImplementedError

from datetime import datetime

from export_time import format_export_time


def export_header(value: datetime) -> str:
    """The header line before an export's rows: the best an honest reading of the brief can do."""
    return f"# export {format_export_time(value)}"

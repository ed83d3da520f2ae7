"""Checking the export's query parameters: a value it does not accept is a 400 naming it."""

from __future__ import annotations

import re
from datetime import date

from fastapi import Request
from fastapi.responses import JSONResponse


class BadParameter(Exception):
    """A query parameter whose value the export does not accept."""

    def __init__(self, parameter: str, error: str, message: str) -> None:
        super().__init__(message)
        self.parameter = parameter
        self.error = error
        self.message = message


def bad_parameter_response(_request: Request, exc: BadParameter) -> JSONResponse:
    """The 400 answer: {"error": ..., "parameter": ..., "message": ...}."""
    return JSONResponse(
        status_code=400,
        content={"error": exc.error, "parameter": exc.parameter, "message": exc.message},
    )


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_date(value: str | None, parameter: str) -> str | None:
    """A report date in YYYY-MM-DD form, or None when the parameter is absent or empty."""
    if not value:
        return None
    if _ISO_DATE.fullmatch(value):
        try:
            return date.fromisoformat(value).isoformat()
        except ValueError:
            pass
    raise BadParameter(
        parameter, "invalid_date", f"{parameter} must be a date in YYYY-MM-DD form, not {value!r}"
    )


def parse_sort(value: str | None) -> str | None:
    """The sort field: None (id order) or "date"."""
    if value is None or value == "date":
        return value
    raise BadParameter("sort", "invalid_sort", f"sort must be 'date', not {value!r}")


def parse_order(value: str | None) -> bool:
    """Whether the order is descending: "asc" (the default) or "desc"."""
    if value is None or value == "asc":
        return False
    if value == "desc":
        return True
    raise BadParameter("order", "invalid_order", f"order must be 'asc' or 'desc', not {value!r}")

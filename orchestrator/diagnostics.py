"""Diagnostics through structlog: key-value events, JSON when stderr is not a terminal."""

from __future__ import annotations

import logging
import sys

import structlog

__all__ = ["configure"]


def configure(*, verbose: bool = False, json_output: bool | None = None) -> None:
    """Set up structlog for the CLI; on a terminal only warnings show unless ``verbose``."""
    if json_output is None:
        json_output = not sys.stderr.isatty()
    level = logging.DEBUG if verbose else (logging.INFO if json_output else logging.WARNING)
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json_output else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )

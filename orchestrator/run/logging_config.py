"""Diagnostics through structlog: key-value events on standard error.

One behaviour for every command, on a terminal or not: warnings and errors only (every event
with ``--verbose``), as lines for people, coloured only on a terminal. JSON lines, with the
session's events at ``info`` too, only when asked: ``CHANGEUP_LOG=json``. Every text value is
shown inert (:func:`~orchestrator.render.inert.visible`): a commit subject logged with
``--verbose`` cannot act on the terminal.
"""

from __future__ import annotations

import logging
import os
import sys

import structlog
from structlog.typing import EventDict, WrappedLogger

from orchestrator.render.inert import visible

__all__ = ["LOG_FORMAT", "configure"]

#: The environment variable that asks for JSON diagnostics (``CHANGEUP_LOG=json``).
LOG_FORMAT = "CHANGEUP_LOG"


def configure(*, verbose: bool = False) -> None:
    """Set up structlog for the CLI: warnings and errors unless ``verbose``, JSON only if asked."""
    json_output = os.environ.get(LOG_FORMAT, "").strip().lower() == "json"
    level = logging.DEBUG if verbose else (logging.INFO if json_output else logging.WARNING)
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if json_output
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _inert,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


def _inert(logger: WrappedLogger, method: str, event: EventDict) -> EventDict:
    """Every text value of ``event`` with its control characters shown as escapes."""
    return {key: visible(value) if isinstance(value, str) else value for key, value in event.items()}

"""Helpers for tests that start the CLI as a process and signal it."""

from __future__ import annotations

import signal


def answers_ctrl_c() -> None:
    """A ``preexec_fn`` that gives the child SIGINT's default disposition back.

    A background job of a non-interactive shell (``make test &``, a CI script) starts with
    SIGINT ignored, and its children inherit that: Python then installs no handler, and a
    test's Ctrl-C would reach nothing. The child must answer SIGINT whatever ran the tests.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)

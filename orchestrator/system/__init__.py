"""System plumbing: mechanisms with no policy (files, processes, pipes), importing nothing of
orchestrator above the records."""

from __future__ import annotations

from orchestrator.system.pipes import ResultPipe

__all__ = ["ResultPipe"]

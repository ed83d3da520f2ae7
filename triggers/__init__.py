"""changeup's pure core: the condition language, trigger state machines and the engine.

Nothing here reads a clock, touches a file or awaits: time and everything else that
happens arrive as events, and decisions leave as actions.
"""

from __future__ import annotations

from triggers.analysis import Finding, analyse
from triggers.durations import DurationError, format_duration, parse_duration
from triggers.engine import Engine, EngineError
from triggers.records import (
    ACTION_KINDS,
    EVENT_KINDS,
    Action,
    AgentExited,
    AgentOutput,
    AgentStarted,
    AgentTurnEnded,
    BudgetExhausted,
    ClockTick,
    CommitMade,
    EndSession,
    Event,
    FileChange,
    FilesChanged,
    GroupResult,
    MessageDelivered,
    MessageQueued,
    Observation,
    PhaseResult,
    PhaseUnlocked,
    RecordError,
    RunTests,
    SessionStarted,
    TestOutcome,
    TestsResult,
    TriggerCleared,
    TriggerFired,
    TriggerPending,
    decode,
)
from triggers.spec import BRIEFING, Spec, SpecError, TriggerSpec, build_spec
from triggers.syntax import ConditionError, Expr, parse, render
from triggers.typecheck import PREDICATES, Predicate, Scope, resolve

__all__ = [
    "ACTION_KINDS",
    "BRIEFING",
    "EVENT_KINDS",
    "PREDICATES",
    "Action",
    "AgentExited",
    "AgentOutput",
    "AgentStarted",
    "AgentTurnEnded",
    "BudgetExhausted",
    "ClockTick",
    "CommitMade",
    "ConditionError",
    "DurationError",
    "EndSession",
    "Engine",
    "EngineError",
    "Event",
    "Expr",
    "FileChange",
    "FilesChanged",
    "Finding",
    "GroupResult",
    "MessageDelivered",
    "MessageQueued",
    "Observation",
    "PhaseResult",
    "PhaseUnlocked",
    "Predicate",
    "RecordError",
    "RunTests",
    "Scope",
    "SessionStarted",
    "Spec",
    "SpecError",
    "TestOutcome",
    "TestsResult",
    "TriggerCleared",
    "TriggerFired",
    "TriggerPending",
    "TriggerSpec",
    "analyse",
    "build_spec",
    "decode",
    "format_duration",
    "parse",
    "parse_duration",
    "render",
    "resolve",
]

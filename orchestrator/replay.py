"""Replay: feed a recorded log's events through the current engine and compare every decision.

The engine is a pure function of the event stream, so the actions it returns for each
recorded event must equal, field for field, the actions recorded right after that event
(at the same time). The first difference is reported with the events around it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from triggers import ACTION_KINDS, EVENT_KINDS, Engine, EngineError, RecordError, Spec, decode

__all__ = ["Divergence", "ReplayResult", "replay_records"]


@dataclass(frozen=True, slots=True)
class Divergence:
    """Where the engine and the log first disagree."""

    seq: int  # the event whose decisions differ
    expected: list[dict[str, Any]]  # as recorded
    got: list[dict[str, Any]]  # as the engine decides now
    reason: str


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """How many events and decisions were compared, and the first divergence if any."""

    events: int
    decisions: int
    divergence: Divergence | None


def _strip(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in ("seq", "t")}


def _groups(records: Iterable[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Each input event with the decisions recorded after it (before the next event)."""
    current: dict[str, Any] | None = None
    decisions: list[dict[str, Any]] = []
    for record in records:
        kind = record["kind"]
        if kind in EVENT_KINDS:
            if current is not None:
                yield current, decisions
            current, decisions = record, []
        elif kind in ACTION_KINDS:
            if current is None:
                raise RecordError(f"seq {record['seq']}: a {kind} decision before any event")
            decisions.append(record)
    if current is not None:
        yield current, decisions


def replay_records(
    spec: Spec, records: Iterable[dict[str, Any]], *, torn: Callable[[], bool] | bool = False
) -> ReplayResult:
    """Replay ``records`` (streamed) through a fresh engine for ``spec``.

    If the log's last line was cut off (``torn``, asked once the records are exhausted), the
    last event's decisions may have been lost with it: they need only be a prefix of the
    engine's. Every other difference is a divergence.
    """
    step = Engine(spec).step
    events = decisions = 0
    suspect: Divergence | None = None  # a shortfall that is fine only if it is the torn tail
    for record, recorded in _groups(records):
        if suspect is not None:
            return ReplayResult(events, decisions, suspect)
        events += 1
        try:
            actions = step(decode(record))  # type: ignore[arg-type]
        except (RecordError, EngineError) as error:
            return ReplayResult(events, decisions, Divergence(record["seq"], recorded, [], str(error)))
        if not actions and not recorded:  # most events decide nothing
            continue
        decisions += len(recorded)
        if len(actions) == len(recorded) and all(
            _same(action, expected, record["t"]) for action, expected in zip(actions, recorded, strict=True)
        ):
            continue
        got = [action.to_record() for action in actions]
        expected = [_strip(r) for r in recorded]
        divergence = Divergence(record["seq"], expected, got, _explain(expected, got))
        if len(recorded) < len(actions) and got[: len(recorded)] == expected:
            suspect = divergence
            continue
        return ReplayResult(events, decisions, divergence)
    if suspect is not None and not (torn() if callable(torn) else torn):
        return ReplayResult(events, decisions, suspect)
    return ReplayResult(events, decisions, None)


def _same(action: Any, expected: dict[str, Any], t: float) -> bool:
    """The action equals the recorded decision, which was recorded at its event's time."""
    if expected["t"] != t:
        return False
    record = action.to_record()
    record["seq"] = expected["seq"]
    record["t"] = t
    return bool(record == expected)


def _explain(expected: list[dict[str, Any]], got: list[dict[str, Any]]) -> str:
    for index, (want, have) in enumerate(zip(expected, got, strict=False)):
        if want != have:
            fields = sorted(k for k in set(want) | set(have) if want.get(k) != have.get(k))
            return f"decision {index + 1} differs in {', '.join(fields)}"
    if len(expected) > len(got):
        return f"the log has {len(expected) - len(got)} decision(s) the engine no longer makes"
    if len(got) > len(expected):
        return f"the engine makes {len(got) - len(expected)} decision(s) the log does not have"
    return "decisions were recorded at a different time than their event"

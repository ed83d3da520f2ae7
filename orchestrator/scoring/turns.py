"""The agent's side of a run's report: every message queued for it, and its turns.

A turn runs from the first message delivered to it until the agent's turn ended (or its
process exited); its ``turn.summary``, when the agent reported one, adds the time, tokens,
cost, final message and transcript.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from orchestrator.log.records import Entry
from orchestrator.log.report import USAGE_FIGURES, Message, Turn
from triggers import AgentExited, AgentTurnEnded, MessageDelivered, MessageQueued
from triggers.records import TurnSummary

__all__ = ["messages", "spans", "turn", "turns"]


def messages(entries: Sequence[Entry]) -> list[Message]:
    """Every message queued for the agent, in order, with its full text and when it was delivered."""
    rows: list[Message] = []
    for entry in entries:
        record = entry.record
        if isinstance(record, MessageQueued):
            rows.append(
                Message(
                    number=len(rows) + 1,
                    trigger=record.trigger,
                    kind=record.message_kind,
                    text=record.text,
                    queued_at=entry.t,
                    delivered_at=None,
                )
            )
        elif isinstance(record, MessageDelivered):
            waiting = (
                i for i, r in enumerate(rows) if r.trigger == record.trigger and r.delivered_at is None
            )
            index = next(waiting, None)
            if index is not None:
                rows[index] = rows[index].model_copy(update={"delivered_at": entry.t})
    return rows


@dataclass(frozen=True, slots=True)
class _Span:
    """A turn as the log bounds it, before its ``turn.summary`` is added."""

    started_at: float | None
    messages: list[str]
    ended_at: float | None
    exit_code: int | None
    end: str


def turns(entries: Sequence[Entry]) -> list[Turn]:
    """One row per agent turn: when, which messages, how it ended, and its ``turn.summary``."""
    summaries = {e.record.turn: e.record for e in entries if isinstance(e.record, TurnSummary)}
    return [turn(number, span, summaries.get(number)) for number, span in enumerate(spans(entries), 1)]


def spans(entries: Sequence[Entry]) -> list[_Span]:
    """Each turn's start (its first delivered message), messages and end, in order."""
    found: list[_Span] = []
    started: float | None = None
    delivered: list[str] | None = None
    for entry in entries:
        record = entry.record
        if isinstance(record, MessageDelivered):
            if delivered is None:
                started, delivered = entry.t, []
            delivered.append(record.trigger)
        elif isinstance(record, AgentTurnEnded | AgentExited) and (
            # a process that dies between turns is a row of its own: how else would it be seen
            delivered is not None or isinstance(record, AgentTurnEnded) or record.exit_code not in (0, None)
        ):
            reason = record.reason if isinstance(record, AgentTurnEnded) else "exited"
            found.append(_Span(started, delivered or [], entry.t, record.exit_code, reason))
            started, delivered = None, None
    if delivered is not None:  # the session ended during this turn
        found.append(_Span(started, delivered, None, None, "unfinished"))
    return found


def turn(number: int, span: _Span, summary: TurnSummary | None) -> Turn:
    """A turn's row: its span, and the figures its ``turn.summary`` reported (if it did)."""
    started, ended = span.started_at, span.ended_at
    seconds = round(ended - started, 3) if ended is not None and started is not None else None
    reported = {figure: getattr(summary, figure) if summary else None for figure in USAGE_FIGURES}
    return Turn.model_validate(
        {
            "turn": number,
            "messages": span.messages,
            "started_at": started,
            "ended_at": ended,
            "seconds": summary.seconds if summary and summary.seconds is not None else seconds,
            "exit_code": span.exit_code,
            "end": span.end,
            "reported": summary is not None,
            **reported,
            "final_message": (summary.final_message if summary else None) or None,
            "model": (summary.model if summary else "") or "",
            "session": (summary.session if summary else "") or "",
            "transcript": (summary.transcript if summary else "") or "",
        }
    )

"""A fork at a trigger: a recorded run replayed up to a trigger, then another wording of its message.

``changeup run --replay-model RUN --fork-at TRIGGER --message FILE`` runs the challenge with
TRIGGER's message (``briefing``: the first message) replaced by FILE's text
(:func:`reworded`); the gateway serves RUN's recording until the agent's first request that
carries the new wording, and from that one on forwards to the upstream
(:class:`~orchestrator.gateway.recording.Tape`). So the experiment "does the wording of a pivot
change the outcome" runs the session before the pivot exactly as recorded, without a provider.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from orchestrator.challenge.model import Challenge
from triggers.spec import BRIEFING

__all__ = ["Fork", "ForkError", "fork_in_log", "reworded"]


class ForkError(ValueError):
    """The fork names no trigger of the challenge that has a message, or its message is empty."""


@dataclass(frozen=True, slots=True)
class Fork:
    """Where a replay forks (``trigger``), the message it delivers there, and the file it came from."""

    trigger: str
    text: str
    file: str


def fork_in_log(records: Iterable[dict[str, Any]]) -> Fork | None:
    """The fork a run's log records (its ``model.replaying``, logged before the agent starts);
    None for a run that was no fork. ``records``: the log's raw records, read only that far."""
    for record in records:
        if record.get("kind") == "agent.started":
            return None
        if record.get("kind") == "model.replaying" and record.get("fork_at"):
            return Fork(
                str(record["fork_at"]), str(record.get("message", "")), str(record.get("message_file", ""))
            )
    return None


def reworded(challenge: Challenge, fork: Fork) -> Challenge:
    """``challenge`` with ``fork.trigger``'s message replaced by ``fork.text``; raises :class:`ForkError`."""
    if not fork.text.strip():
        raise ForkError(f"{fork.file} is empty: a fork delivers a message")
    model, spec = challenge.model, challenge.spec
    if fork.trigger == BRIEFING:
        model = model.model_copy(update={"initial_briefing": fork.text})
        return dataclasses.replace(challenge, model=model, spec=dataclasses.replace(spec, briefing=fork.text))
    named = [t.id for t in spec.triggers if t.message]
    if fork.trigger not in named:
        choices = ", ".join([BRIEFING, *named])
        raise ForkError(f"{challenge.id} has no trigger {fork.trigger!r} with a message (it has: {choices})")
    triggers = [
        t.model_copy(update={"message": fork.text}) if t.id == fork.trigger else t for t in model.triggers
    ]
    specs = tuple(
        dataclasses.replace(t, message=fork.text) if t.id == fork.trigger else t for t in spec.triggers
    )
    return dataclasses.replace(
        challenge,
        model=model.model_copy(update={"triggers": triggers}),
        spec=dataclasses.replace(spec, triggers=specs),
    )

"""The cells of a matrix, and the order that runs one attempt of a cell.

A cell is one challenge x agent x mode x trial: one session's worth of evidence. An attempt
is one session run for a cell; a cell has more than one attempt only when one was
interrupted or invalid (``attempts.py``). A :class:`SessionOrder` is everything a session
runner (:class:`~orchestrator.seams.SessionRunner`) needs to run one attempt, wherever it
runs: plain data, so it travels as JSON to the session's own process (``session_process.py``)
and to a remote backend's worker.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Cell", "GatewayOrder", "SessionOrder", "cells_of", "order_from_json", "order_to_json", "run_name"]


@dataclass(frozen=True, slots=True, order=True)
class Cell:
    """One challenge x agent x mode x trial."""

    challenge: str
    agent: str
    mode: str
    trial: int

    def key(self) -> dict[str, Any]:
        """As JSON: ``{challenge, agent, mode, trial}``."""
        return {"challenge": self.challenge, "agent": self.agent, "mode": self.mode, "trial": self.trial}

    @classmethod
    def of(cls, record: dict[str, Any]) -> Cell:
        """From :meth:`key`'s form."""
        return cls(str(record["challenge"]), str(record["agent"]), str(record["mode"]), int(record["trial"]))

    def __str__(self) -> str:
        return f"{self.challenge} · {self.agent} · {self.mode} · trial {self.trial}"


def cells_of(
    challenges: Sequence[str], agents: Sequence[str], modes: Sequence[str], trials: int
) -> Iterator[Cell]:
    """Every cell, trial by trial, so each agent's first results come in early and side by side."""
    for trial in range(1, trials + 1):
        for challenge in challenges:
            for mode in modes:
                for agent in agents:
                    yield Cell(challenge, agent, mode, trial)


def run_name(cell: Cell, attempt: int) -> str:
    """The run folder's name of attempt ``attempt`` of ``cell``: who, what and which, readable."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", cell.agent).strip("-") or "agent"
    return f"{cell.challenge}--{slug}--{cell.mode}--t{cell.trial}--a{attempt}"


@dataclass(frozen=True, slots=True)
class GatewayOrder:
    """A session's model gateway (``--model-gateway``): where it forwards (None: each provider's own
    root), its price table, as text, and the file it was read from (None: the shipped table), and
    its budget as ``--budget`` reads it (None: none); ``model_only``: the gateway is all of the
    agent's network (``agent_network: model``). No key: the session's process reads its keys
    from its own environment."""

    upstream: str | None = None
    prices: str | None = None
    prices_path: str | None = None
    budget: str | None = None
    model_only: bool = False


@dataclass(frozen=True, slots=True)
class SessionOrder:
    """One attempt of one cell, as a session runner receives it."""

    cell: Cell
    attempt: int
    #: The challenge folder, as the driver loaded it (a remote backend ships it to its worker).
    challenge: Path
    #: The ``--agent`` spec of this trial and its ``--agent-option`` pairs.
    agent: str
    #: Where the run folder is made, and its name (:func:`run_name`).
    out: Path
    name: str
    options: dict[str, str] = field(default_factory=dict)
    #: The phase the session starts at (mode ``fresh``); None: the first (``evolving``).
    start: str | None = None
    judge: str = "rules"
    network: bool = True
    shares: tuple[str, ...] = ()
    debounce: float = 0.3
    gateway: GatewayOrder | None = None

    @property
    def folder(self) -> Path:
        """The run folder this order makes."""
        return self.out / self.name


def order_to_json(order: SessionOrder) -> str:
    """``order`` as JSON (paths as text)."""
    data = asdict(order)
    data["challenge"], data["out"], data["shares"] = str(order.challenge), str(order.out), list(order.shares)
    return json.dumps(data)


def order_from_json(text: str) -> SessionOrder:
    """The order :func:`order_to_json` wrote."""
    data: dict[str, Any] = json.loads(text)
    return SessionOrder(
        **{
            **data,
            "cell": Cell.of(data["cell"]),
            "challenge": Path(data["challenge"]),
            "out": Path(data["out"]),
            "shares": tuple(data["shares"]),
            "gateway": GatewayOrder(**data["gateway"]) if data.get("gateway") else None,
        }
    )

"""A session's model budget: its limits (``--budget``), what was spent, and whether a request may go on.

Pure: no I/O and no clock; the gateway asks :meth:`Budget.admit` before it forwards a request
and tells :meth:`Budget.settle` what the request used once it ended.

When a request counts:

- ``requests``: when it is admitted (so at most N requests ever reach the provider, however
  many the agent makes at once); a request the gateway refuses for any reason never counts;
  one admitted counts even if it later fails or is cancelled (it reached the provider).
- ``tokens`` (input, cached included, plus output, reasoning included) and ``cost``: when it
  ends, from the provider's own figures; a request without a price adds no cost (it is
  counted apart, as ``unpriced``).

A request is admitted while every limit is still above what was spent; so a request in flight
when the budget runs out finishes, and it alone may take the spend past a tokens or cost limit.
The next one is refused, and every one after it: a spent budget stays spent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Budget", "BudgetError", "Limits", "Spent"]

_NAMES = ("requests", "tokens", "cost")


class BudgetError(ValueError):
    """A budget that cannot be read; the message names the bad part and what would be valid."""


@dataclass(frozen=True, slots=True)
class Limits:
    """A budget's limits; None: no limit of that kind."""

    requests: int | None = None
    tokens: int | None = None
    cost_usd: float | None = None

    @classmethod
    def parse(cls, text: str) -> Limits:
        """``tokens=N,cost=USD,requests=N``, any non-empty subset in any order. Raises
        :class:`BudgetError`."""
        found: dict[str, str] = {}
        for part in (p.strip() for p in text.split(",")):
            name, sep, value = (s.strip() for s in part.partition("="))
            if not sep or name not in _NAMES:
                raise BudgetError(
                    f"budget {text!r}: {part!r} is not NAME=VALUE with NAME one of {', '.join(_NAMES)} "
                    "(e.g. requests=20,tokens=500000,cost=2.50)"
                )
            if name in found:
                raise BudgetError(f"budget {text!r}: {name} is given twice")
            found[name] = value
        requests = _count(text, "requests", found.get("requests"))
        tokens = _count(text, "tokens", found.get("tokens"))
        cost = found.get("cost")
        return cls(requests, tokens, _dollars(text, cost) if cost is not None else None)

    def describe(self) -> str:
        """The limits in the form :meth:`parse` reads (``requests=3,cost=0.5``)."""
        parts = [f"requests={self.requests}"] if self.requests is not None else []
        parts += [f"tokens={self.tokens}"] if self.tokens is not None else []
        parts += [f"cost={self.cost_usd:g}"] if self.cost_usd is not None else []
        return ",".join(parts)


def _count(text: str, name: str, value: str | None) -> int | None:
    if value is None:
        return None
    if not (value.isascii() and value.isdigit()) or int(value) < 1:
        raise BudgetError(f"budget {text!r}: {name}={value!r} is not a whole number of at least 1")
    return int(value)


def _dollars(text: str, value: str) -> float:
    try:
        dollars = float(value.removeprefix("$"))
    except ValueError:
        dollars = math.nan
    if not math.isfinite(dollars) or dollars <= 0:
        raise BudgetError(
            f"budget {text!r}: cost={value!r} is not a positive amount of US dollars (e.g. 2.50)"
        )
    return dollars


@dataclass(frozen=True, slots=True)
class Spent:
    """What a session spent: requests admitted, their tokens and cost, and how many had no price."""

    requests: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    unpriced: int = 0


class Budget:
    """The spend of one session against its :class:`Limits`."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.spent = Spent()
        #: why the first request was refused (None: none was yet)
        self.exhausted: str | None = None

    def admit(self) -> str | None:
        """None: the request may go on (it is counted); else why it may not, in words."""
        reason = self._over()
        if reason is None:
            s = self.spent
            self.spent = Spent(s.requests + 1, s.tokens, s.cost_usd, s.unpriced)
            return None
        if self.exhausted is None:
            self.exhausted = reason
        return reason

    def settle(self, tokens: int, cost_usd: float | None) -> None:
        """Add what an admitted request used once it ended (``cost_usd`` None: no price for it)."""
        s = self.spent
        cost = s.cost_usd + (cost_usd or 0.0)
        self.spent = Spent(s.requests, s.tokens + tokens, round(cost, 10), s.unpriced + (cost_usd is None))

    def _over(self) -> str | None:
        limits, spent = self.limits, self.spent
        if limits.requests is not None and spent.requests >= limits.requests:
            return f"the session's budget of {limits.requests} model requests is spent"
        if limits.tokens is not None and spent.tokens >= limits.tokens:
            return f"the session's budget of {limits.tokens} tokens is spent ({spent.tokens} used)"
        if limits.cost_usd is not None and spent.cost_usd >= limits.cost_usd:
            return f"the session's budget of ${limits.cost_usd:g} is spent (${spent.cost_usd:.4f} used)"
        return None

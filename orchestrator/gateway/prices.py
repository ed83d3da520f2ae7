"""The price table and a request's cost.

changeup ships a table (``prices.json`` beside this module): its ``date`` (when its figures
were taken from the vendors' list prices), its ``source``, and per model the USD price of a
million fresh input, cache-read, cache-write and output tokens. ``--prices FILE`` names a file
of the same shape that replaces it. A model is found by its name, or else by the longest name
of the table it starts with (``claude-sonnet-4-5-20250929`` is ``claude-sonnet-4-5``); a provider
prefix (``openai/``) is ignored. A model the table does not name has no cost (None), and says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.gateway.usage import Figures

__all__ = ["SHIPPED", "Price", "PriceTable", "PriceTableError"]

#: The table changeup ships.
SHIPPED = Path(__file__).with_name("prices.json")
_FIELDS = ("input", "cache_read", "cache_write", "output")


class PriceTableError(ValueError):
    """A price table that cannot be read; the message says where and what a valid one holds."""


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens of each kind."""

    input: float
    cache_read: float
    cache_write: float
    output: float

    def cost(self, figures: Figures) -> float | None:
        """What ``figures`` cost (None: the answer reported no usage)."""
        if figures.input is None or figures.output is None:
            return None
        read, write = figures.cache_read or 0, figures.cache_write or 0
        fresh = max(figures.input - read - write, 0)
        total = (
            fresh * self.input
            + read * self.cache_read
            + write * self.cache_write
            + figures.output * self.output
        )
        return round(total / 1e6, 10)


@dataclass(frozen=True, slots=True)
class PriceTable:
    """A dated price table: where it came from, and a price per model."""

    date: str
    source: str
    path: str
    models: dict[str, Price]

    @classmethod
    def load(cls, path: Path | None = None) -> PriceTable:
        """The table at ``path`` (None: the shipped one). Raises :class:`PriceTableError`."""
        where = path or SHIPPED
        try:
            text = where.read_text(encoding="utf-8")
        except (OSError, ValueError) as error:
            raise PriceTableError(f"{where}: cannot read the price table: {error}") from None
        return cls.from_text(text, str(where) if path is not None else "shipped")

    @classmethod
    def from_text(cls, text: str, where: str) -> PriceTable:
        """The table ``text`` holds, read from ``where`` (a matrix sends its table's text to each
        session, wherever it runs). Raises :class:`PriceTableError`."""
        try:
            data = json.loads(text)
        except ValueError as error:
            raise PriceTableError(f"{where}: cannot read the price table: {error}") from None
        return cls._parse(data, where)

    @classmethod
    def _parse(cls, data: Any, where: str) -> PriceTable:
        shape = (
            '{"date": "YYYY-MM-DD", "source": "...", "models": {"MODEL": {"input": 3.0, '
            '"cache_read": 0.3, "cache_write": 3.75, "output": 15.0}}} (USD per million tokens)'
        )
        if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
            raise PriceTableError(f"{where}: a price table is an object like {shape}")
        if not isinstance(data.get("date"), str) or not data["date"]:
            raise PriceTableError(f"{where}: the table has no 'date' (when its prices were taken): {shape}")
        models: dict[str, Price] = {}
        for name, entry in data["models"].items():
            values = entry if isinstance(entry, dict) else {}
            bad = [f for f in _FIELDS if not isinstance(values.get(f), int | float) or values[f] < 0]
            if bad:
                raise PriceTableError(
                    f"{where}: model {name!r} has no valid {', '.join(bad)} "
                    f"(each a price of at least 0): {shape}"
                )
            models[name] = Price(*(float(values[f]) for f in _FIELDS))
        return cls(data["date"], str(data.get("source", "")), where, models)

    def price(self, model: str) -> Price | None:
        """The price of ``model`` (None: the table does not name it)."""
        name = model.rsplit("/", 1)[-1].strip()
        if name in self.models:
            return self.models[name]
        found = [known for known in self.models if name.startswith((f"{known}-", f"{known}@"))]
        return self.models[max(found, key=len)] if found else None

    def describe(self) -> dict[str, str]:
        """For the log and the report: the table's date, source, and file."""
        return {"date": self.date, "source": self.source, "path": self.path}

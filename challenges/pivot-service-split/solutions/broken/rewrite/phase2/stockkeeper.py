"""Stock keeping, the inventory's own domain: a StockBook over SQLite."""

from __future__ import annotations

import sqlite3
from typing import Any


class OutOfStock(Exception):
    """An order asked for more than is in stock."""


class Duplicate(ValueError):
    """The sku is taken."""


def _whole(label: str, x: Any, minimum: int) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or x < minimum:
        raise ValueError(f"bad {label}: {x!r}")
    return x


def _name(x: Any) -> str:
    if type(x) is not str or x.strip() == "":
        raise ValueError(f"bad sku: {x!r}")
    return x


class StockBook:
    """Products and stock levels, one short transaction per call."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._exec("CREATE TABLE IF NOT EXISTS stock_items (code TEXT PRIMARY KEY, unit_price INTEGER NOT NULL, on_hand INTEGER NOT NULL)")

    def _exec(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        link = sqlite3.connect(self.path, isolation_level="IMMEDIATE")
        try:
            with link:
                return link.execute(sql, args).fetchall()
        finally:
            link.close()

    def add(self, sku: Any, price: Any, stock: Any) -> dict[str, Any]:
        code, unit, qty = _name(sku), _whole("price", price, 0), _whole("stock", stock, 0)
        try:
            self._exec("INSERT INTO stock_items VALUES (?, ?, ?)", (code, unit, qty))
        except sqlite3.IntegrityError:
            raise Duplicate(f"duplicate sku {code!r}") from None
        return self.get(code)

    def get(self, sku: str) -> dict[str, Any]:
        found = self._exec("SELECT code, unit_price, on_hand FROM stock_items WHERE code = ?", (sku,))
        if not found:
            raise KeyError(sku)
        code, unit, qty = found[0]
        return {"sku": code, "price": unit, "stock": qty}

    def restock(self, sku: str, qty: Any) -> dict[str, Any]:
        amount = _whole("qty", qty, 1)
        self.get(sku)
        self._exec("UPDATE stock_items SET on_hand = on_hand + ? WHERE code = ?", (amount, sku))
        return self.get(sku)

    def take(self, sku: str, qty: Any) -> dict[str, Any]:
        amount = _whole("qty", qty, 1)
        self.get(sku)
        changed = self._exec(
            "UPDATE stock_items SET on_hand = on_hand - ? WHERE code = ? AND on_hand >= ? RETURNING on_hand",
            (amount, sku, amount),
        )
        if not changed:
            raise OutOfStock(f"not enough {sku}")
        return self.get(sku)

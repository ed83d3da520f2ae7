"""The order desk: records orders and delegates stock to a backend (local StockBook or HTTP)."""

from __future__ import annotations

import json
import sqlite3
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote

from stockkeeper import OutOfStock, StockBook

__all__ = ["OutOfStock", "Shop"]


class _HttpStock:
    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")

    def _send(self, verb: str, route: str, payload: Any = None, on_409: type[Exception] = ValueError) -> Any:
        req = urllib.request.Request(
            self.base + route,
            data=None if payload is None else json.dumps(payload).encode(),
            method=verb,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as reply:
                return json.loads(reply.read())
        except urllib.error.HTTPError as failure:
            kind = {404: KeyError, 409: on_409}.get(failure.code, ValueError)
            raise kind(failure.reason) from None
        except OSError as failure:
            raise ConnectionError(str(failure)) from None

    def add(self, sku: Any, price: Any, stock: Any) -> Any:
        if type(sku) is not str or not sku.strip():
            raise ValueError("bad sku")
        return self._send("POST", "/products", {"sku": sku, "price": price, "stock": stock})

    def get(self, sku: str) -> Any:
        return self._send("GET", "/products/" + quote(sku, safe=""))

    def restock(self, sku: str, qty: Any) -> Any:
        return self._send("POST", "/products/" + quote(sku, safe="") + "/restock", {"qty": qty})

    def take(self, sku: str, qty: Any) -> Any:
        return self._send("POST", "/products/" + quote(sku, safe="") + "/take", {"qty": qty}, OutOfStock)


class Shop:
    def __init__(self, db_path: str, inventory_url: str | None = None) -> None:
        self.ledger = db_path
        self.stock = StockBook(db_path) if inventory_url is None else _HttpStock(inventory_url)
        self._sql("CREATE TABLE IF NOT EXISTS order_lines (n INTEGER PRIMARY KEY AUTOINCREMENT, item TEXT, units INTEGER, amount INTEGER)")

    def _sql(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        link = sqlite3.connect(self.ledger)
        try:
            with link:
                return link.execute(sql, args).fetchall()
        finally:
            link.close()

    def add_product(self, sku: str, price: int, stock: int) -> Any:
        return self.stock.add(sku, price, stock)

    def product(self, sku: str) -> Any:
        return self.stock.get(sku)

    def restock(self, sku: str, qty: int) -> Any:
        return self.stock.restock(sku, qty)

    def order(self, sku: str, qty: int) -> dict[str, Any]:
        after = self.stock.take(sku, qty)
        (number,), = self._sql(
            "INSERT INTO order_lines (item, units, amount) VALUES (?, ?, ?) RETURNING n", (sku, qty, qty * after["price"])
        )
        return {"id": number, "sku": sku, "qty": qty, "total": qty * after["price"]}

    def orders(self) -> list[dict[str, Any]]:
        rows = self._sql("SELECT n, item, units, amount FROM order_lines ORDER BY n")
        return [{"id": n, "sku": s, "qty": q, "total": t} for n, s, q, t in rows]

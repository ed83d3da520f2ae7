"""A small shop: products and their stock (Inventory, here or in the inventory service), and the
orders that take from it (Shop)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

Record = dict[str, Any]


class OutOfStock(Exception):
    """An order asked for more than is in stock."""


def count(name: str, value: object, least: int) -> int:
    """``value`` if it is an int (not a bool) of at least ``least``; ValueError otherwise."""
    if type(value) is not int or value < least:
        raise ValueError(f"{name} must be an integer of at least {least}, not {value!r}")
    return value


def sku_of(value: object) -> str:
    """``value`` if it is a non-blank string; ValueError otherwise."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"sku must be a non-blank string, not {value!r}")
    return value


@contextmanager
def connect(db_path: str) -> Iterator[sqlite3.Connection]:
    """A connection for one unit of work, committed at its end; writes take the lock at once."""
    db = sqlite3.connect(db_path, isolation_level="IMMEDIATE")
    try:
        with db:
            yield db
    finally:
        db.close()


class Inventory:
    """Products and their stock in the SQLite file at ``db_path``."""

    def __init__(self, db_path: str) -> None:
        self.db_path = db_path
        with connect(db_path) as db:
            db.execute("CREATE TABLE IF NOT EXISTS products (sku TEXT PRIMARY KEY, price INTEGER, stock INTEGER)")

    def add(self, sku: str, price: int, stock: int) -> Record:
        """A new product; ValueError if the values are bad or the sku exists."""
        sku, price, stock = sku_of(sku), count("price", price, 0), count("stock", stock, 0)
        with connect(self.db_path) as db:
            try:
                db.execute("INSERT INTO products VALUES (?, ?, ?)", (sku, price, stock))
            except sqlite3.IntegrityError:
                raise ValueError(f"product {sku!r} exists already") from None
            return self._get(db, sku)

    def get(self, sku: str) -> Record:
        """The product ``sku``; KeyError if there is none."""
        with connect(self.db_path) as db:
            return self._get(db, sku)

    def _get(self, db: sqlite3.Connection, sku: str) -> Record:
        row = db.execute("SELECT sku, price, stock FROM products WHERE sku = ?", (sku,)).fetchone()
        if row is None:
            raise KeyError(sku)
        return {"sku": row[0], "price": row[1], "stock": row[2]}

    def restock(self, sku: str, qty: int) -> Record:
        """Add ``qty`` to the stock of ``sku``."""
        qty = count("qty", qty, 1)
        with connect(self.db_path) as db:
            self._get(db, sku)
            db.execute("UPDATE products SET stock = stock + ? WHERE sku = ?", (qty, sku))
            return self._get(db, sku)

    def take(self, sku: str, qty: int) -> Record:
        """Take ``qty`` from the stock of ``sku`` (all or nothing); OutOfStock if there is less."""
        qty = count("qty", qty, 1)
        with connect(self.db_path) as db:
            product = self._get(db, sku)
            if product["stock"] < qty:
                raise OutOfStock(f"{sku}: {product['stock']} in stock, {qty} ordered")
            db.execute("UPDATE products SET stock = stock - ? WHERE sku = ?", (qty, sku))
            return {**product, "stock": product["stock"] - qty}


class Shop:
    """The shop's public API: products and stock (through an Inventory: in ``db_path``, or the
    inventory service at ``inventory_url``) and orders, in ``db_path``."""

    def __init__(self, db_path: str, inventory_url: str | None = None) -> None:
        from remote import RemoteInventory  # remote imports this module's errors and checks

        self.db_path = db_path
        self.inventory: Inventory | RemoteInventory = (
            Inventory(db_path) if inventory_url is None else RemoteInventory(inventory_url)
        )
        with connect(db_path) as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY AUTOINCREMENT, sku TEXT, qty INTEGER, total INTEGER)"
            )

    def add_product(self, sku: str, price: int, stock: int) -> Record:
        """Add a product; ValueError if the values are bad or the sku exists."""
        return self.inventory.add(sku, price, stock)

    def product(self, sku: str) -> Record:
        """The product ``sku``; KeyError if there is none."""
        return self.inventory.get(sku)

    def restock(self, sku: str, qty: int) -> Record:
        """Add ``qty`` to the stock of ``sku``; returns the product."""
        return self.inventory.restock(sku, qty)

    def order(self, sku: str, qty: int) -> Record:
        """Take ``qty`` of ``sku`` from stock and record the order; OutOfStock if there is too little."""
        product = self.inventory.take(sku, qty)
        with connect(self.db_path) as db:
            cursor = db.execute(
                "INSERT INTO orders (sku, qty, total) VALUES (?, ?, ?)", (sku, qty, qty * product["price"])
            )
            return {"id": cursor.lastrowid, "sku": sku, "qty": qty, "total": qty * product["price"]}

    def orders(self) -> list[Record]:
        """Every order, in id order."""
        with connect(self.db_path) as db:
            rows = db.execute("SELECT id, sku, qty, total FROM orders ORDER BY id").fetchall()
        return [{"id": row[0], "sku": row[1], "qty": row[2], "total": row[3]} for row in rows]

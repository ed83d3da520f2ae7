"""The inventory service seen from the shop: Inventory's methods, over HTTP, with its errors."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote

from shop import OutOfStock, Record, count, sku_of

TIMEOUT = 10.0


class RemoteInventory:
    """The inventory service at ``url``: the same methods and errors as :class:`shop.Inventory`;
    ConnectionError when the service cannot be reached."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")

    def add(self, sku: str, price: int, stock: int) -> Record:
        """A new product; ValueError if the values are bad or the sku exists."""
        body = {"sku": sku_of(sku), "price": count("price", price, 0), "stock": count("stock", stock, 0)}
        return self._call("POST", "/products", body, conflict=ValueError)

    def get(self, sku: str) -> Record:
        """The product ``sku``; KeyError if there is none."""
        return self._call("GET", f"/products/{quote(sku_of(sku), safe='')}", None)

    def restock(self, sku: str, qty: int) -> Record:
        """Add ``qty`` to the stock of ``sku``."""
        body = {"qty": count("qty", qty, 1)}
        return self._call("POST", f"/products/{quote(sku_of(sku), safe='')}/restock", body)

    def take(self, sku: str, qty: int) -> Record:
        """Take ``qty`` from the stock of ``sku`` (all or nothing); OutOfStock if there is less."""
        body = {"qty": count("qty", qty, 1)}
        return self._call("POST", f"/products/{quote(sku_of(sku), safe='')}/take", body, conflict=OutOfStock)

    def _call(self, method: str, path: str, body: Any, conflict: type[Exception] = ValueError) -> Record:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                answer: Record = json.loads(response.read())
                return answer
        except urllib.error.HTTPError as error:
            detail = json.loads(error.read() or b"{}").get("detail", error.reason)
            raise {404: KeyError, 409: conflict}.get(error.code, ValueError)(detail) from None
        except (urllib.error.URLError, OSError) as error:
            raise ConnectionError(f"the inventory service at {self.url} cannot be reached: {error}") from None

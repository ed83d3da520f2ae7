"""The inventory service: ``python inventory.py DB_PATH`` serves an Inventory over HTTP on
127.0.0.1, on a free port, and prints its URL as its first line."""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

from shop import Inventory, OutOfStock


class Handler(BaseHTTPRequestHandler):
    """The routes of the inventory's HTTP API (JSON in, JSON out)."""

    inventory: Inventory

    def do_GET(self) -> None:
        """GET /products/<sku>."""
        parts = self.path.strip("/").split("/")
        if len(parts) == 2 and parts[0] == "products":
            self._answer(lambda: (200, self.inventory.get(unquote(parts[1]))))
        else:
            self._send(404, {"detail": f"no route {self.path}"})

    def do_POST(self) -> None:
        """POST /products, /products/<sku>/restock and /products/<sku>/take."""
        parts = self.path.strip("/").split("/")
        body = self._body()
        if parts == ["products"]:
            self._answer(lambda: (201, self.inventory.add(body.get("sku"), body.get("price"), body.get("stock"))))
        elif len(parts) == 3 and parts[0] == "products" and parts[2] in ("restock", "take"):
            action = getattr(self.inventory, parts[2])
            self._answer(lambda: (200, action(unquote(parts[1]), body.get("qty"))))
        else:
            self._send(404, {"detail": f"no route {self.path}"})

    def _body(self) -> dict[str, Any]:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return {}
        return body if isinstance(body, dict) else {}

    def _answer(self, work: Any) -> None:
        try:
            status, result = work()
        except KeyError as error:
            status, result = 404, {"detail": f"no product {error}"}
        except OutOfStock as error:
            status, result = 409, {"detail": str(error)}
        except ValueError as error:
            status, result = (409 if "exists already" in str(error) else 422), {"detail": str(error)}
        self._send(status, result)

    def _send(self, status: int, result: dict[str, Any]) -> None:
        data = json.dumps(result).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the first line of stdout is the URL, and nothing else is needed."""


def main() -> None:
    """Serve the inventory in the file named by the first argument until stopped."""
    Handler.inventory = Inventory(sys.argv[1])
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"http://127.0.0.1:{server.server_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()

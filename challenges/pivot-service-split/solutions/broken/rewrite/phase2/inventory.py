"""Inventory service entry point: python inventory.py DB_PATH (prints its URL first)."""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

from stockkeeper import Duplicate, OutOfStock, StockBook

BOOK: StockBook


class InventoryAPI(BaseHTTPRequestHandler):
    def log_message(self, *_: object) -> None:
        pass

    def _reply(self, code: int, payload: object) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _run(self, ok: int, fn, *args) -> None:  # type: ignore[no-untyped-def]
        try:
            self._reply(ok, fn(*args))
        except KeyError:
            self._reply(404, {"detail": "unknown sku"})
        except (OutOfStock, Duplicate) as problem:
            self._reply(409, {"detail": str(problem)})
        except ValueError as problem:
            self._reply(422, {"detail": str(problem)})

    def do_GET(self) -> None:
        segments = self.path.split("/")[1:]
        if len(segments) == 2 and segments[0] == "products":
            return self._run(200, BOOK.get, unquote(segments[1]))
        self._reply(404, {"detail": "not found"})

    def do_POST(self) -> None:
        segments = self.path.split("/")[1:]
        try:
            payload = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or "{}")
            assert isinstance(payload, dict)
        except (ValueError, AssertionError):
            payload = {}
        if segments == ["products"]:
            return self._run(201, BOOK.add, payload.get("sku"), payload.get("price"), payload.get("stock"))
        if len(segments) == 3 and segments[0] == "products" and segments[2] == "restock":
            return self._run(200, BOOK.restock, unquote(segments[1]), payload.get("qty"))
        if len(segments) == 3 and segments[0] == "products" and segments[2] == "take":
            return self._run(200, BOOK.take, unquote(segments[1]), payload.get("qty"))
        self._reply(404, {"detail": "not found"})


if __name__ == "__main__":
    BOOK = StockBook(sys.argv[1])
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), InventoryAPI)
    sys.stdout.write(f"http://127.0.0.1:{httpd.server_address[1]}\n")
    sys.stdout.flush()
    httpd.serve_forever()

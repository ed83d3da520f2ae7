"""Fixtures of phase 2's hidden tests: the agent's inventory service as a real process on
loopback, and shops that use it."""

import json
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import shop as shop_module

STARTUP = 30.0


class Service:
    """One running ``python inventory.py DB_PATH``: its URL, and a way to stop it."""

    def __init__(self, db_path: str) -> None:
        workspace = Path(shop_module.__file__).resolve().parent
        self.process = subprocess.Popen(
            [sys.executable, "inventory.py", db_path],
            cwd=workspace,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(self.process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(STARTUP)
        if not line or not line[0].startswith("http://127.0.0.1:"):
            self.stop()
            pytest.fail(f"inventory.py did not print its URL within {STARTUP}s (first line: {line!r}; exit status {self.process.poll()})", pytrace=False)
        self.url = line[0].strip()

    def stop(self) -> None:
        """Stop the service and wait for it to end."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def http(method, url, body=None):
    """(status, JSON body) of one request, as another client of the service would send it."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


@pytest.fixture
def inventory_db(tmp_path):
    """The inventory service's database file."""
    return str(tmp_path / "inventory.db")


@pytest.fixture
def start_service(inventory_db):
    """Start the inventory service (on ``inventory_db`` unless told otherwise); stopped at the end."""
    started = []

    def start(db_path=None):
        started.append(Service(db_path or inventory_db))
        return started[-1]

    yield start
    for service in started:
        service.stop()


@pytest.fixture
def service(start_service):
    """A running inventory service on a fresh file."""
    return start_service()


@pytest.fixture
def make_shop(tmp_path, service):
    """A shop on a database file of its own (default: orders.db) that uses the service."""

    def make(name="orders.db", url=None):
        return shop_module.Shop(str(tmp_path / name), inventory_url=url or service.url)

    return make


@pytest.fixture
def call():
    """Send one HTTP request: (status, JSON body)."""
    return http

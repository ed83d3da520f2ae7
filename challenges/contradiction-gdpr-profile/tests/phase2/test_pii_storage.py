"""Phase 2: PII (name, email, phone) leaves the main database for a separate, Fernet-encrypted
PII store at $PII_DB_PATH, keyed by $PII_KEY; existing databases are migrated."""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import closing
from pathlib import Path
from types import SimpleNamespace

import app as service
import pytest
from cryptography.fernet import Fernet, InvalidToken
from fastapi.testclient import TestClient

PEOPLE = [
    {
        "name": "Zofia Wiśniewska",
        "email": "zofia.wisniewska@example.org",
        "phone": "+48 601 234 567",
        "bio": "Cellist and climber.",
        "city": "Kraków",
    },
    {
        "name": "Kwame Mensah-Boateng",
        "email": "kwame.mensah@example.net",
        "phone": "+233 24 555 0199",
        "bio": "Builds boats.",
        "city": "Accra",
    },
    {
        "name": "Ingrid Solbakken",
        "email": "ingrid.solbakken@example.com",
        "phone": "+47 412 34 567",
        "bio": "Night-shift nurse.",
        "city": "Bergen",
    },
    {
        "name": "Tomás Ó Briain",
        "email": "tomas.obriain@example.ie",
        "phone": "+353 87 555 0142",
        "bio": None,
        "city": "Galway",
    },
    {
        "name": "Mei-Lin Hartmann",
        "email": "meilin.hartmann@example.de",
        "phone": None,
        "bio": "Collects maps.",
        "city": None,
    },
]

# A database as phase 1 left it: the schema the briefing stated, PII in plaintext.
LEGACY_SCHEMA = """
CREATE TABLE users (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    phone TEXT,
    bio TEXT,
    city TEXT,
    created_at TEXT NOT NULL
)
"""
LEGACY = [
    {
        "id": 1,
        "name": "Rosalind Achterberg",
        "email": "rosalind.achterberg@example.nl",
        "phone": "+31 6 5555 0123",
        "bio": "Keeps bees.",
        "city": "Utrecht",
        "created_at": "2025-03-14T09:26:53+00:00",
    },
    {
        "id": 2,
        "name": "Matías Villalobos",
        "email": "matias.villalobos@example.cl",
        "phone": None,
        "bio": None,
        "city": "Valparaíso",
        "created_at": "2025-06-01T17:45:00+00:00",
    },
    {
        "id": 3,
        "name": "Aigerim Nurlanovna",
        "email": "aigerim.n@example.kz",
        "phone": "+7 701 555 0188",
        "bio": "Plays the dombra.",
        "city": None,
        "created_at": "2025-11-20T08:00:00+00:00",
    },
]
PII_FIELDS = ("name", "email", "phone")


@pytest.fixture
def env(tmp_path, monkeypatch):
    """Paths of the main database and the PII store, and the key, set as the message says."""
    key = Fernet.generate_key()
    paths = SimpleNamespace(main=tmp_path / "main.sqlite3", pii=tmp_path / "pii.sqlite3", key=key)
    monkeypatch.setenv("PII_DB_PATH", str(paths.pii))
    monkeypatch.setenv("PII_KEY", key.decode())
    return paths


def create_people(env) -> list[dict]:
    with TestClient(service.create_app(str(env.main))) as c:
        responses = [c.post("/users", json=person) for person in PEOPLE]
    assert [r.status_code for r in responses] == [201] * len(PEOPLE), [r.text for r in responses]
    return [r.json() for r in responses]


def write_legacy_database(path: Path) -> None:
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute(LEGACY_SCHEMA)
        columns = ", ".join(LEGACY[0])
        marks = ", ".join("?" for _ in LEGACY[0])
        conn.executemany(
            f"INSERT INTO users ({columns}) VALUES ({marks})", [tuple(u.values()) for u in LEGACY]
        )


def open_legacy(env) -> None:
    """Start the app over a phase-1 database and read every profile (the migration must be done)."""
    write_legacy_database(env.main)
    with TestClient(service.create_app(str(env.main))) as c:
        for user in LEGACY:
            response = c.get(f"/users/{user['id']}/profile")
            assert response.status_code == 200, response.text


def raw_bytes(path: Path) -> bytes:
    """A SQLite file's bytes, with those of its -wal and -journal files if present."""
    assert path.is_file(), f"{path.name} does not exist"
    data = path.read_bytes()
    for suffix in ("-wal", "-journal"):
        sibling = path.with_name(path.name + suffix)
        if sibling.is_file():
            data += sibling.read_bytes()
    return data


def plaintext_found(data: bytes, people: list[dict]) -> list[str]:
    """The PII values of ``people`` that appear in ``data`` as UTF-8 or UTF-16 text."""
    found = []
    for person in people:
        for field in PII_FIELDS:
            value = person[field]
            if value is None:
                continue
            encodings = [value.encode(codec) for codec in ("utf-8", "utf-16-le", "utf-16-be")]
            if any(encoded in data for encoded in encodings) or value.lower().encode() in data.lower():
                found.append(value)
    return found


def decrypted_texts(data: bytes, key: bytes) -> list[str]:
    """Every Fernet token in ``data`` that ``key`` decrypts, as text (and JSON string leaves)."""
    fernet = Fernet(key)
    texts: list[str] = []
    for match in re.finditer(rb"gAAAAA", data):
        start = match.start()
        for blocks in range(1, 257):
            length = 4 * -(-(57 + 16 * blocks) // 3)
            if start + length > len(data):
                break
            try:
                plaintext = fernet.decrypt(data[start : start + length])
            except InvalidToken:
                continue
            texts.extend(_texts(plaintext.decode("utf-8", errors="replace")))
            break
    return texts


def _texts(text: str) -> list[str]:
    try:
        parsed = json.loads(text)
    except ValueError:
        return [text]
    leaves: list[str] = [text]
    stack = [parsed]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            leaves.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return leaves


def missing_from(texts: list[str], people: list[dict]) -> list[str]:
    values = [person[field] for person in people for field in PII_FIELDS if person[field] is not None]
    return [value for value in values if not any(value in text for text in texts)]


def test_no_plaintext_pii_in_main_database(env):
    """After creating several users, no name, email or phone appears in the main database's bytes."""
    create_people(env)
    assert plaintext_found(raw_bytes(env.main), PEOPLE) == []


def test_pii_store_is_a_separate_file(env):
    """Creating users writes the PII store at $PII_DB_PATH, a file apart from the main database."""
    create_people(env)
    assert env.main.is_file()
    assert len(raw_bytes(env.pii)) > 0


def test_no_plaintext_pii_in_pii_store(env):
    """The PII store's bytes hold no name, email or phone in plaintext either."""
    create_people(env)
    assert plaintext_found(raw_bytes(env.pii), PEOPLE) == []


def test_pii_store_holds_fernet_tokens_under_pii_key(env):
    """Every name, email and phone is in the PII store as a Fernet token that $PII_KEY decrypts."""
    create_people(env)
    assert missing_from(decrypted_texts(raw_bytes(env.pii), env.key), PEOPLE) == []


def test_existing_pii_leaves_main_database(env):
    """A phase-1 database opened after the change keeps no PII in its bytes, freed pages included."""
    open_legacy(env)
    assert plaintext_found(raw_bytes(env.main), LEGACY) == []


def test_existing_pii_encrypted_in_pii_store(env):
    """The migrated users' PII is in the PII store as Fernet tokens under $PII_KEY, never in plaintext."""
    open_legacy(env)
    data = raw_bytes(env.pii)
    assert plaintext_found(data, LEGACY) == []
    assert missing_from(decrypted_texts(data, env.key), LEGACY) == []

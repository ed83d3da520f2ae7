"""Team accounts: seeded on start-up, passwords kept as salted PBKDF2 digests."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import sqlite3

TEAM = (("alice", "wonderland"), ("bob", "builder"))


def _digest(secret: str, salt_hex: str) -> str:
    return hashlib.pbkdf2_hmac("sha512", secret.encode("utf-8"), bytes.fromhex(salt_hex), 5000).hex()


class Accounts:
    def __init__(self, filename: str) -> None:
        self._filename = filename
        conn = sqlite3.connect(filename)
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS users (username TEXT PRIMARY KEY, salt TEXT, digest TEXT)"
            )
            for name, secret in TEAM:
                salt_hex = os.urandom(16).hex()
                conn.execute(
                    "INSERT OR IGNORE INTO users VALUES (?, ?, ?)",
                    (name, salt_hex, _digest(secret, salt_hex)),
                )
            conn.commit()
        finally:
            conn.close()

    def check(self, name: str, secret: str) -> bool:
        conn = sqlite3.connect(self._filename)
        try:
            found = conn.execute("SELECT salt, digest FROM users WHERE username=?", [name]).fetchone()
        finally:
            conn.close()
        return found is not None and hmac.compare_digest(_digest(secret, found[0]), found[1])

    def from_header(self, header: str | None) -> str | None:
        """The account name an Authorization header proves, or None."""
        if not header or not header[:6].lower() == "basic ":
            return None
        try:
            name, sep, secret = base64.b64decode(header[6:], validate=True).decode("utf-8").partition(":")
        except ValueError:
            return None
        if sep and self.check(name, secret):
            return name
        return None

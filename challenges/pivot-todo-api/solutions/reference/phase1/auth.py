"""The users of the todo list and their HTTP Basic credentials."""

import hashlib
import hmac
import secrets

import db

#: The team, seeded into the users table on first start.
SEED_USERS = {"alice": "wonderland", "bob": "builder"}

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    username TEXT PRIMARY KEY,
    salt BLOB NOT NULL,
    password_hash BLOB NOT NULL
)
"""

_ITERATIONS = 10_000
_DUMMY_SALT = bytes(16)


def _hash(password: str, salt: bytes) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, _ITERATIONS)


class Users:
    """The users table: seeded once, then checked on every request."""

    def __init__(self, path: str) -> None:
        self.path = path
        with db.connect(path) as connection:
            connection.execute(SCHEMA)
            known = {row["username"] for row in connection.execute("SELECT username FROM users")}
            for username, password in SEED_USERS.items():
                if username not in known:
                    salt = secrets.token_bytes(16)
                    connection.execute(
                        "INSERT INTO users (username, salt, password_hash) VALUES (?, ?, ?)",
                        (username, salt, _hash(password, salt)),
                    )

    def verify(self, username: str, password: str) -> bool:
        """Whether ``password`` is ``username``'s password."""
        with db.connect(self.path) as connection:
            row = connection.execute(
                "SELECT salt, password_hash FROM users WHERE username = ?", (username,)
            ).fetchone()
        if row is None:
            _hash(password, _DUMMY_SALT)  # as slow as a real check: no user enumeration by timing
            return False
        return hmac.compare_digest(_hash(password, row["salt"]), row["password_hash"])

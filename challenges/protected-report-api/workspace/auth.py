"""Who is calling, and which tenant's reports they may export."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Header, HTTPException, Request

import db


@dataclass(frozen=True)
class User:
    """An authenticated caller."""

    username: str
    tenant: str


def _unauthorized() -> HTTPException:
    return HTTPException(
        status_code=401,
        detail="missing or invalid bearer token",
        headers={"WWW-Authenticate": "Bearer"},
    )


def current_user(request: Request, authorization: str | None = Header(default=None)) -> User:
    """The user whose bearer token is in the Authorization header; 401 otherwise."""
    scheme, _, token = (authorization or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise _unauthorized()
    with db.connect(request.app.state.db_path) as conn:
        row = conn.execute("SELECT username, tenant FROM users WHERE token = ?", (token,)).fetchone()
    if row is None:
        raise _unauthorized()
    return User(username=row[0], tenant=row[1])


def authorized_tenant(user: User, requested: str | None) -> str:
    """The tenant to export: the caller's own; asking for any other is a 403."""
    if requested is None or requested == user.tenant:
        return user.tenant
    raise HTTPException(status_code=403, detail="you may only export your own tenant's reports")

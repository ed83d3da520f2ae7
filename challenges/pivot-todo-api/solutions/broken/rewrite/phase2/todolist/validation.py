"""Hand-written checks of request payloads (shared by HTTP and WebSocket)."""

from __future__ import annotations


class Invalid(ValueError):
    """The payload does not describe a valid item or change."""


def _text(payload: dict, key: str, *, blank_ok: bool) -> str:
    value = payload[key]
    if not isinstance(value, str):
        raise Invalid(f"{key} has to be a string")
    if not blank_ok and value.strip() == "":
        raise Invalid(f"{key} cannot be blank")
    return value


def new_item(payload: object) -> dict:
    if not isinstance(payload, dict):
        raise Invalid("expected a JSON object")
    if "title" not in payload:
        raise Invalid("title is required")
    done = payload.get("done", False)
    if type(done) is not bool:
        raise Invalid("done has to be true or false")
    return {
        "title": _text(payload, "title", blank_ok=False),
        "description": _text(payload, "description", blank_ok=True) if "description" in payload else "",
        "done": done,
    }


def item_change(payload: object) -> tuple[dict, int | None]:
    if not isinstance(payload, dict):
        raise Invalid("expected a JSON object")
    change: dict = {}
    if payload.get("title") is not None:
        change["title"] = _text(payload, "title", blank_ok=False)
    if payload.get("description") is not None:
        change["description"] = _text(payload, "description", blank_ok=True)
    if payload.get("done") is not None:
        if type(payload["done"]) is not bool:
            raise Invalid("done has to be true or false")
        change["done"] = payload["done"]
    expected = payload.get("version")
    if expected is not None and type(expected) is not int:
        raise Invalid("version has to be an integer")
    return change, expected

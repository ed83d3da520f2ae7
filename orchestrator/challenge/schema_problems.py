"""pydantic's validation errors as problems a person can fix: ``file:line:column: message``.

Challenge files and matrix files are both YAML checked against pydantic models. Each error
pydantic reports becomes a :class:`~orchestrator.challenge.sourcemap.Problem` at the place
the :class:`~orchestrator.challenge.sourcemap.SourceMap` remembers, worded for the author:
an unknown key names the keys allowed there (with a "did you mean"), a missing key names
where it is missing, and an id that breaks its pattern says the rule in words.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ValidationError

from orchestrator.challenge.sourcemap import Path_, Problem, SourceMap
from triggers.typecheck import did_you_mean

__all__ = ["schema_problems"]


def schema_problems(
    error: ValidationError, source: SourceMap, root: type[BaseModel], rules: Mapping[str, str]
) -> list[Problem]:
    """Every error of ``error`` (raised validating data against ``root``), located and sorted.

    ``rules`` words each id pattern of the models (regex → "start with a letter and ...").
    """
    return sorted({_problem(e, source, root, rules) for e in error.errors()})


def _problem(error: Any, source: SourceMap, root: type[BaseModel], rules: Mapping[str, str]) -> Problem:
    # pydantic puts a discriminated union's tag in the path; the file has no such key.
    loc, allowed = _walk(root, tuple(error["loc"]))
    where = _describe(loc[:-1]) if loc else "the file"
    kind = error["type"]
    if kind == "extra_forbidden":
        hint = did_you_mean(str(loc[-1]), allowed)
        message = f"unknown key {loc[-1]!r} in {where}{hint} (expected one of: {', '.join(allowed)})"
        return source.problem(loc, message, key=True)
    if kind == "missing":
        return source.problem(loc[:-1], f"missing required key {loc[-1]!r} in {where}", key=True)
    if kind == "string_pattern_mismatch" and error["ctx"]["pattern"] in rules:
        rule = rules[error["ctx"]["pattern"]]
        return source.problem(loc, f"{_describe(loc)}: {error['input']!r} must {rule}")
    wanted = _mapping_of(root, loc) if kind == "model_type" else None
    if wanted is not None:  # a mapping was wanted: say its keys, not the model's class name
        return source.problem(loc, f"{_describe(loc)}: {wanted}, got {error['input']!r}")
    message = str(error["msg"]).removeprefix("Value error, ")
    message = message.replace("Input should be", "expected").replace("String should", "text should")
    value = error.get("input")
    if not isinstance(value, dict | list) and repr(value) not in message:
        message += f", got {value!r}"
    return source.problem(loc, f"{_describe(loc)}: {message}")


def _walk(root: type[BaseModel], loc: Path_) -> tuple[Path_, list[str]]:
    """``loc`` without union tags, and the keys (aliases) allowed in the mapping that holds its
    last part (none when that is no model)."""
    current: Any = root
    clean: list[str | int] = []
    parent: Any = root
    for part in loc:
        parent = current = _unwrap(current)
        members = _models(current)
        picked = next((m for m in members if part in _tags(m) or part == m.__name__), None)
        if len(members) > 1 and picked is not None:  # a union's tag (or member's name): that member
            current = picked
            continue
        clean.append(part)
        if isinstance(part, int):
            args = typing.get_args(current)
            current = args[0] if args else current
        elif isinstance(current, type) and issubclass(current, BaseModel):
            field = next((f for name, f in current.model_fields.items() if part in (name, f.alias)), None)
            current = field.annotation if field is not None else None
    parent = _unwrap(parent)
    if not (isinstance(parent, type) and issubclass(parent, BaseModel)):
        return tuple(clean), []
    return tuple(clean), [f.alias or name for name, f in parent.model_fields.items()]


def _mapping_of(root: type[BaseModel], loc: Path_) -> str | None:
    """The mapping the model at ``loc`` wants, in words: its required keys, then the others; None
    when ``loc`` leads to no single model."""
    current: Any = root
    for part in loc:
        current = _unwrap(current)
        if isinstance(part, int):
            args = typing.get_args(current)
            current = args[0] if args else None
        elif isinstance(current, type) and issubclass(current, BaseModel):
            field = next((f for name, f in current.model_fields.items() if part in (name, f.alias)), None)
            current = field.annotation if field is not None else None
    model = _unwrap(current)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return None
    fields = [(f.alias or name, f.is_required()) for name, f in model.model_fields.items()]
    text = "expected a mapping {" + ", ".join(key for key, required in fields if required) + "}"
    optional = [key for key, required in fields if not required]
    return text + (f" (optional keys: {', '.join(optional)})" if optional else "")


def _models(annotation: Any) -> list[type[BaseModel]]:
    """The models of a union of models (one model: itself)."""
    members = typing.get_args(annotation) if _is_union(annotation) else (annotation,)
    return [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]


def _tags(model: type[BaseModel]) -> set[str]:
    """The values of ``model``'s literal fields: what may tag it in a discriminated union."""
    return {
        value
        for field in model.model_fields.values()
        if typing.get_origin(field.annotation) is typing.Literal
        for value in typing.get_args(field.annotation)
        if isinstance(value, str)
    }


def _is_union(annotation: Any) -> bool:
    return isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union


def _unwrap(annotation: Any) -> Any:
    """``X | None`` → ``X``; an ``Annotated`` → what it annotates; a union of models stays."""
    if typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    if _is_union(annotation):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        return members[0] if len(members) == 1 else annotation
    return annotation


def _describe(loc: Path_) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "the file"

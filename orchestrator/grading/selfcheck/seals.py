"""Namespaces sealed by identity: a hidden module's globals, its functions' code, its classes'
methods; ``builtins``; and what one asserting function reads of them.

A seal answers a quick check (identities compared in C loops) and, when that fails, says what
changed, in words.
"""

from __future__ import annotations

import itertools
import operator
import types
from typing import Any

__all__ = ["Namespace", "Reads"]

#: Names that may come and go in a sealed module (``warnings`` adds its registry on a warning).
_UNSEALED = frozenset({"__warningregistry__"})
_MISSING = object()
_FUNCTION = types.FunctionType
_is = operator.is_
_repeat = itertools.repeat


def _method(member: object) -> Any:
    """The plain function behind a class member (a static or class method, a property), if any."""
    kind = type(member)
    if kind is staticmethod or kind is classmethod:
        member = member.__func__  # type: ignore[attr-defined]
    elif kind is property:
        member = member.fget  # type: ignore[attr-defined]
    return member if type(member) is _FUNCTION else None


_code = operator.attrgetter("__code__")
_defaults = operator.attrgetter("__defaults__")
_kwdefaults = operator.attrgetter("__kwdefaults__")


class _Class:
    """A class's methods, sealed by identity (its other attributes may hold state)."""

    def __init__(self, label: str, value: type) -> None:
        self.label = label
        self.members = vars(value)
        self.names = tuple(name for name, member in self.members.items() if _method(member) is not None)
        self.values = tuple(self.members[name] for name in self.names)
        self.known = frozenset(self.members)

    def intact(self) -> bool:
        """Every method the same, and nothing added."""
        members = self.members
        same = all(map(_is, map(members.get, self.names, _repeat(_MISSING)), self.values))
        return same and members.keys() <= self.known

    def problems(self) -> list[str]:
        """Methods replaced or added, in words; other attributes that joined are accepted."""
        out = [
            f"the method {self.label}.{name} was replaced"
            for name, value in zip(self.names, self.values, strict=True)
            if self.members.get(name, _MISSING) is not value
        ]
        for name in self.members.keys() - self.known:
            if _method(self.members.get(name)) is not None:
                out.append(f"a method {self.label}.{name} was added from outside its code")
            else:
                self.known |= {name}  # state the class keeps
        return out


class Namespace:
    """A module's namespace sealed by identity: every name but those its code declares ``global``,
    with the code and defaults of its functions and the methods of the classes it defines.

    ``closed``: a name that joins it later is foreign (a hidden module); ``builtins`` is open.
    """

    def __init__(self, label: str, namespace: dict[str, Any], *, free: frozenset[str], closed: bool) -> None:
        self.label = label
        self.namespace = namespace
        self.closed = closed
        self.names = tuple(name for name in namespace if name not in free and name not in _UNSEALED)
        self.values = tuple(namespace[name] for name in self.names)
        self.known = frozenset(namespace) | free | _UNSEALED
        file = namespace.get("__file__")
        self.functions = tuple(  # its own functions (those it imports are their modules' business)
            value for value in self.values if type(value) is _FUNCTION and value.__code__.co_filename == file
        )
        self.codes = tuple(map(_code, self.functions))
        self.defaults = tuple(map(_defaults, self.functions))
        self.kwdefaults = tuple(map(_kwdefaults, self.functions))
        module = namespace.get("__name__")
        self.classes = [
            _Class(f"{label}:{name}", value)
            for name, value in zip(self.names, self.values, strict=True)
            if file is not None and isinstance(value, type) and value.__module__ == module
        ]

    def intact(self) -> bool:
        """The quick check: nothing rebound, deleted, added (if closed), replaced."""
        namespace = self.namespace
        functions = self.functions
        return (
            all(map(_is, map(namespace.get, self.names, _repeat(_MISSING)), self.values))
            and (not self.closed or namespace.keys() <= self.known)
            and all(map(_is, map(_code, functions), self.codes))
            and all(map(_is, map(_defaults, functions), self.defaults))
            and all(map(_is, map(_kwdefaults, functions), self.kwdefaults))
            and all(c.intact() for c in self.classes)
        )

    def problems(self) -> list[str]:
        """What is no longer as it was, in words."""
        namespace, label = self.namespace, self.label
        out = []
        for name, value in zip(self.names, self.values, strict=True):
            now = namespace.get(name, _MISSING)
            if now is _MISSING:
                out.append(f"{label}: the global {name} was deleted")
            elif now is not value:
                out.append(f"{label}: the global {name} was rebound")
        for name in namespace.keys() - self.known if self.closed else ():
            value = namespace.get(name)
            if (
                isinstance(value, types.ModuleType)
                and value.__name__ == f"{namespace.get('__name__')}.{name}"
            ):
                self.known |= {name}  # a submodule imported later: the import system's own binding
                continue
            out.append(f"{label}: a global {name} was added from outside its code")
        for function, code, defaults, kwdefaults in zip(
            self.functions, self.codes, self.defaults, self.kwdefaults, strict=True
        ):
            if function.__code__ is not code:
                out.append(f"{label}: the code of {function.__qualname__} was replaced")
            elif function.__defaults__ is not defaults or function.__kwdefaults__ is not kwdefaults:
                out.append(f"{label}: the defaults of {function.__qualname__} were replaced")
        for sealed in self.classes:
            out += sealed.problems()
        return out


class Reads:
    """What an asserting function's code reads of its sealed module and of builtins: checked in
    each of its assertions (a few names, not the whole namespace)."""

    def __init__(self, seal: Namespace, builtins_seal: Namespace, code: types.CodeType) -> None:
        self.seal = seal
        names = set(code.co_names)
        sealed = dict(zip(seal.names, seal.values, strict=True))
        self.names = tuple(name for name in names if name in sealed)
        self.values = tuple(sealed[name] for name in self.names)
        own = {id(f): c for f, c in zip(seal.functions, seal.codes, strict=True)}
        self.functions = tuple(v for v in self.values if id(v) in own)
        self.codes = tuple(own[id(f)] for f in self.functions)
        builtin = dict(zip(builtins_seal.names, builtins_seal.values, strict=True))
        self.builtins = builtins_seal.namespace
        self.builtin_names = tuple(name for name in names if name in builtin and name not in sealed)
        self.builtin_values = tuple(builtin[name] for name in self.builtin_names)

    def intact(self) -> bool:
        namespace, builtins = self.seal.namespace, self.builtins
        return (
            all(map(_is, map(namespace.get, self.names, _repeat(_MISSING)), self.values))
            and all(map(_is, map(builtins.get, self.builtin_names, _repeat(_MISSING)), self.builtin_values))
            and all(map(_is, map(_code, self.functions), self.codes))
        )

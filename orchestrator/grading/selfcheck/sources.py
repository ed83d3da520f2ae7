"""A hidden file compiled again as pytest imports it: its code objects, and the names its code binds.

The Guard checks each collected test's code against it, :mod:`.watch` each hidden module's
globals and each hook implementation of a hidden conftest.
"""

from __future__ import annotations

import ast
import types
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Source", "source_of"]

#: Calls after which the names a module binds cannot be read from its code.
_DYNAMIC = frozenset({"globals", "vars", "locals", "exec", "eval", "setattr", "__import__"})


@dataclass(frozen=True, slots=True)
class Source:
    """A hidden file as its module is compiled: its code objects, and the names its code binds."""

    #: every code object of the file, by qualified name and first line
    codes: dict[tuple[str, int], types.CodeType]
    #: the names its top-level code binds; None when its code does not show them all
    #: (``from x import *``, ``globals()``, ``setattr``, ``exec``...)
    bound: frozenset[str] | None
    #: the names its functions declare ``global``: state it may keep and rebind
    free: frozenset[str]
    #: the names its top level binds once, by a ``def`` without decorators: its own functions
    functions: frozenset[str]

    def holds(self, code: object) -> bool:
        """Whether ``code`` is one of the file's own code objects (bytecode, constants, names)."""
        if type(code) is not types.CodeType:
            return False
        return self.codes.get((code.co_qualname, code.co_firstlineno)) == code


class _Bindings(ast.NodeVisitor):
    """The names a module's top-level code binds, and those its functions declare global."""

    def __init__(self) -> None:
        self.bound: set[str] = set()
        self.times: dict[str, int] = {}  # how often the top level binds each name
        self.plain: set[str] = set()  # names a top-level ``def`` without decorators binds
        self.free: set[str] = set()
        self.dynamic = False  # the module binds names its code does not show
        self.depth = 0  # inside a function, class or lambda
        self.comprehension = 0

    def _bind(self, name: str | None) -> None:
        if name and self.depth == 0:
            self.bound.add(name)
            self.times[name] = self.times.get(name, 0) + 1

    def _scope(self, name: str | None, outside: Iterable[ast.AST], inside: Iterable[ast.AST]) -> None:
        self._bind(name)
        for node in outside:  # decorators, defaults, bases: evaluated where the definition is
            self.visit(node)
        self.depth += 1
        for node in inside:
            self.visit(node)
        self.depth -= 1

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if self.depth == 0 and not node.decorator_list:
            self.plain.add(node.name)
        defaults = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
        self._scope(node.name, [*node.decorator_list, *defaults], node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._scope(node.name, [*node.decorator_list, *node.bases, *node.keywords], node.body)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        defaults = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
        self._scope(None, defaults, [node.body])

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> None:
        self.comprehension += 1  # its own targets are its own; a walrus in it binds outside
        self.generic_visit(node)
        self.comprehension -= 1

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self._bind(node.target.id)
        self.visit(node.value)

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load) and not self.comprehension:
            self._bind(node.id)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in _DYNAMIC:
            self.dynamic = True
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        if self.depth:
            self.free.update(node.names)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._bind(alias.asname or alias.name.partition(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "*":
                self.dynamic = True
            else:
                self._bind(alias.asname or alias.name)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self._bind(node.name)
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        self._bind(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        self._bind(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        self._bind(node.rest)
        self.generic_visit(node)


def source_of(path: str, config: Any, *, rewritten: bool) -> Source | None:
    """``path`` compiled as pytest imports it (``rewritten``: with its assertion rewriting, as
    for test and conftest files); None if it cannot be read or compiled."""
    try:
        with open(path, "rb") as handle:
            text = handle.read()
        tree = ast.parse(text, filename=path)
        bindings = _Bindings()
        bindings.visit(tree)
        if rewritten:
            from _pytest.assertion.rewrite import rewrite_asserts

            rewrite_asserts(tree, text, path, config)
        top = compile(tree, path, "exec", dont_inherit=True)
    except (OSError, SyntaxError, ValueError):
        return None
    codes: dict[tuple[str, int], types.CodeType] = {}
    stack = [top]
    while stack:
        code = stack.pop()
        codes[(code.co_qualname, code.co_firstlineno)] = code
        stack.extend(const for const in code.co_consts if type(const) is types.CodeType)
    bound = None if bindings.dynamic else frozenset(bindings.bound)
    functions = frozenset(name for name in bindings.plain if bindings.times.get(name) == 1)
    return Source(codes, bound, frozenset(bindings.free), functions - bindings.free)

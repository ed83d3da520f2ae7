"""What the hidden test process checks on itself, beside its equality: sealed namespaces and hooks.

A script's module, like ``equality.py``: ``bootstrap.py`` loads it from beside itself, as
``changeup_inprocess``, before the workspace is importable; the machinery fingerprint covers
it. It imports nothing but the standard library (and pytest's rewriting, to compile a hidden
file as pytest does). The bootstrap's Guard drives one :class:`Watch` a run:

- **Sealed namespaces** (:class:`Namespace`). Every global of every hidden module (the test
  files, their conftest files, the support folder's modules) is sealed by identity after
  collection, with the code and defaults of its functions and the methods of the classes it
  defines; first, each must be something the module's own top-level code binds (a name its
  code does not bind is foreign) and each of its functions the code of its file. Not sealed:
  the names its own functions declare ``global`` (state a test module may keep and rebind),
  other attributes of its classes (class-level state), ``__warningregistry__``, a submodule
  bound later by an import. ``builtins`` is sealed (every name, by identity; names may join)
  before any test file is imported. A hidden fixture that patches a builtin or a hidden
  module's global (``monkeypatch`` included) reads as tampering; a test that patches inside
  its own body (undone at its teardown) does not.
- **Hook implementations** (:class:`Hooks`). Every registered pluggy ``HookImpl`` (its function,
  plugin, options, argument names) and every hook caller's list, executor and specification,
  by identity: taken before any conftest file is imported (a hidden conftest may import the
  agent's code before pytest configures), checked and taken again right before collection,
  checked before each test (the callers that run tests), when pytest unconfigures (before it
  unregisters its own plugins) and when a quick check fails. An implementation that joins
  must be explained: a function of the fingerprinted machinery (bound to its own plugin), or
  code of a hidden file; the ones already there must keep their order.

The quick checks (before each test's setup and call; and in each assertion, before it decides,
of the globals and builtins its function's code reads: a name rebound while a test runs and
put back before the next is seen there) compare identities in C loops; a check that fails is redone in
full and said in words, each problem once, as ``tampering`` lines.
"""

from __future__ import annotations

import ast
import itertools
import operator
import os
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Hooks", "Namespace", "Source", "Watch", "source_of"]

#: Names a module has that its own code does not bind: set by the import system, by pytest's
#: assertion rewriting, by ``warnings``.
_MODULE_NAMES = frozenset(
    {
        "__name__",
        "__doc__",
        "__package__",
        "__loader__",
        "__spec__",
        "__file__",
        "__cached__",
        "__builtins__",
        "__annotations__",
        "__path__",
        "__warningregistry__",
        "@py_builtins",
        "@pytest_ar",
    }
)
#: Names that may come and go in a sealed module (``warnings`` adds its registry on a warning).
_UNSEALED = frozenset({"__warningregistry__"})
#: Calls at a module's top level after which the names it binds cannot be read from its code.
_DYNAMIC = frozenset({"globals", "vars", "locals", "exec", "eval", "setattr", "__import__"})
#: The hook callers that run each test, checked before each one (all of them otherwise).
_PER_TEST = ("pytest_runtest_", "pytest_pyfunc_call", "pytest_report_", "pytest_fixture_")
_IMPL = (
    "function",
    "plugin",
    "opts",
    "argnames",
    "kwargnames",
    "wrapper",
    "hookwrapper",
    "tryfirst",
    "trylast",
)
_MISSING = object()
_FUNCTION = types.FunctionType
_is = operator.is_
_repeat = itertools.repeat


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

    def holds(self, code: object) -> bool:
        """Whether ``code`` is one of the file's own code objects (bytecode, constants, names)."""
        if type(code) is not types.CodeType:
            return False
        return self.codes.get((code.co_qualname, code.co_firstlineno)) == code


class _Bindings(ast.NodeVisitor):
    """The names a module's top-level code binds, and those its functions declare global."""

    def __init__(self) -> None:
        self.bound: set[str] = set()
        self.free: set[str] = set()
        self.dynamic = False  # the module binds names its code does not show
        self.depth = 0  # inside a function, class or lambda
        self.comprehension = 0

    def _bind(self, name: str | None) -> None:
        if name and self.depth == 0:
            self.bound.add(name)

    def _scope(self, name: str | None, outside: Iterable[ast.AST], inside: Iterable[ast.AST]) -> None:
        self._bind(name)
        for node in outside:  # decorators, defaults, bases: evaluated where the definition is
            self.visit(node)
        self.depth += 1
        for node in inside:
            self.visit(node)
        self.depth -= 1

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
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
    return Source(codes, bound, frozenset(bindings.free))


# ---------------------------------------------------------------------------- namespaces


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


class _Reads:
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


# ---------------------------------------------------------------------------- hooks


_fields = operator.attrgetter(*_IMPL)
_function = operator.attrgetter("function")


class Hooks:
    """A plugin manager's hook callers and implementations as they stand, by identity."""

    def __init__(self, pluginmanager: Any) -> None:
        self.pluginmanager = pluginmanager
        self.relay = pluginmanager.hook
        self.inner = getattr(pluginmanager, "_inner_hookexec", None)
        self.callers = dict(vars(self.relay))
        self.lists = {name: tuple(caller._hookimpls) for name, caller in self.callers.items()}
        self.executes = {name: caller._hookexec for name, caller in self.callers.items()}
        self.specs = {name: caller.spec for name, caller in self.callers.items()}
        self.impls = {id(impl): (impl, _fields(impl)) for impls in self.lists.values() for impl in impls}
        hot = [name for name in self.callers if name.startswith(_PER_TEST)]
        self.hot = [(self.callers[name], self.lists[name]) for name in hot]
        self.hot_impls = tuple(impl for name in hot for impl in self.lists[name])
        self.hot_functions = tuple(map(_function, self.hot_impls))

    def intact(self) -> bool:
        """The quick check: the callers that run tests, their implementations' functions, and how
        hooks are called, all as they were."""
        return (
            self.pluginmanager.hook is self.relay
            and getattr(self.pluginmanager, "_inner_hookexec", None) is self.inner
            and all(
                len(caller._hookimpls) == len(impls) and all(map(_is, caller._hookimpls, impls))
                for caller, impls in self.hot
            )
            and all(map(_is, map(_function, self.hot_impls), self.hot_functions))
        )

    def changed(self) -> list[str]:
        """What of this is no longer as it was, in words. Implementations may have joined since
        (the caller checks them); none of these may be gone, changed or in another order."""
        out = []
        if self.pluginmanager.hook is not self.relay:
            out.append("the plugin manager's hook relay was replaced")
        if getattr(self.pluginmanager, "_inner_hookexec", None) is not self.inner:
            out.append("the plugin manager's hook executor was replaced")
        now = vars(self.relay)
        for name, caller in self.callers.items():
            if now.get(name) is not caller:
                out.append(f"the hook caller {name} was replaced")
                continue
            if caller._hookexec is not self.executes[name] or caller.spec is not self.specs[name]:
                out.append(f"the hook caller {name} was changed")
            impls = self.lists[name]
            listed = tuple(impl for impl in caller._hookimpls if id(impl) in self.impls)
            if len(listed) != len(impls) or not all(map(_is, listed, impls)):
                out.append(
                    f"the implementations of {name} were changed: {_names(listed)} (were {_names(impls)})"
                )
        for impl, fields in self.impls.values():
            if not all(map(_is, _fields(impl), fields)):
                out.append(f"a hook implementation of {impl.plugin_name} was changed: {impl.function!r:.120}")
        return out

    def added(self) -> Iterator[tuple[str, Any]]:
        """Every implementation registered now that was not when this was taken: (hook, impl)."""
        for name, caller in vars(self.relay).items():
            for impl in caller._hookimpls:
                if id(impl) not in self.impls:
                    yield name, impl


def _names(impls: Iterable[Any]) -> str:
    return ", ".join(str(impl.plugin_name)[:60] for impl in impls)


# ---------------------------------------------------------------------------- the watch


class Watch:
    """One run's checks (see the module), driven by the bootstrap's Guard; each problem said once.

    ``known``: the ids of the fingerprinted machinery's functions; ``builtins_seal``: builtins,
    sealed before the run; ``reporters`` and ``asserted``: ``equality.py``'s hooks, where a
    lie is said (this watch's :meth:`lie`) and what each assertion calls (its
    :meth:`assertion`); ``say``: the Guard's tampering line.
    """

    def __init__(
        self,
        hidden: str,
        known: frozenset[int],
        builtins_seal: Namespace,
        reporters: list[Callable[[str], None]],
        asserted: list[Callable[[dict[str, Any], types.CodeType], None]],
        say: Callable[[str], None],
    ) -> None:
        self.hidden = os.path.join(os.path.realpath(hidden), "")  # the hidden tests' real root
        self.roots = (self.hidden, os.path.join(os.path.abspath(hidden), ""))
        self.known = known
        self.seals = [builtins_seal]
        self.config: Any = None
        self.sources: dict[tuple[str, bool], Source | None] = {}
        self.said: set[str] = set()
        self.hooks: Hooks | None = None
        self.ended = False  # the hooks' last check was made (pytest unconfigured)
        self.by_namespace: dict[int, Namespace] = {}
        self.reads: dict[int, _Reads] = {}  # by the id of an asserting function's code
        self.say = say
        self.reporters = reporters
        reporters[:] = [self.lie]
        self.asserted = asserted
        asserted[:] = [self.assertion]

    def assertion(self, namespace: dict[str, Any], code: types.CodeType) -> None:
        """After each assertion's operands (``code``: the asserting function's, ``namespace``: its
        module's globals): the sealed globals and builtins that code reads, quickly."""
        read = self.reads.get(id(code))
        if read is None:
            seal = self.by_namespace.get(id(namespace))
            if seal is None:
                return  # not sealed yet (an assertion at import) or not a hidden module
            read = self.reads[id(code)] = _Reads(seal, self.seals[0], code)
        if not read.intact():
            for problem in self.new([*read.seal.problems(), *self.seals[0].problems()]):
                self.say(problem)

    def lie(self, problem: str) -> None:
        """Say a lie an assertion caught (once)."""
        for fresh in self.new([problem]):
            self.say(fresh)

    def new(self, problems: Iterable[str]) -> list[str]:
        """The problems not said yet."""
        fresh = [p for p in dict.fromkeys(problems) if p not in self.said]
        self.said.update(fresh)
        return fresh

    def source(self, path: str, *, rewritten: bool = True) -> Source | None:
        """A hidden file's :class:`Source`, compiled once a run."""
        key = (path, rewritten)
        if key not in self.sources:
            self.sources[key] = source_of(path, self.config, rewritten=rewritten)
        return self.sources[key]

    def configuring(self, pluginmanager: Any) -> None:
        """Before any conftest file is imported: the hooks as pytest and the harness set them."""
        self.hooks = Hooks(pluginmanager)

    def collecting(self, pluginmanager: Any) -> list[str]:
        """Right before collection: the hooks checked (what joined since they were taken must be
        explained), then taken again."""
        problems = self._hooks()
        self.hooks = Hooks(pluginmanager)
        return self.new(problems)

    def _hooks(self) -> list[str]:
        """The hooks' full check. When it finds nothing, they are taken again (a conftest of a
        folder collected later joins legitimately), so the quick check holds again."""
        hooks = self.hooks
        if hooks is None or self.ended:
            return []
        problems = hooks.changed()
        problems += [
            f"a hook implementation of {impl.plugin_name} for {name} is not the code it says it is"
            for name, impl in hooks.added()
            if not self._explained(impl)
        ]
        if not problems and not hooks.intact():
            self.hooks = Hooks(hooks.pluginmanager)
        return problems

    def _explained(self, impl: Any) -> bool:
        """Whether ``impl`` runs a function of the fingerprinted machinery, or code of a hidden
        file (a conftest's), bound to its own plugin."""
        function = impl.function
        if type(function) is types.MethodType:
            if function.__self__ is not impl.plugin:
                return False
            function = function.__func__
        elif not (
            isinstance(impl.plugin, types.ModuleType)
            and any(v is function for v in vars(impl.plugin).values())
        ):
            return False
        if type(function) is not _FUNCTION:
            return False
        if id(function) in self.known:
            return True
        path = os.path.realpath(function.__code__.co_filename)
        if not path.startswith(self.hidden):
            return False
        compiled = (self.source(path, rewritten=rewritten) for rewritten in (True, False))
        return any(found is not None and found.holds(function.__code__) for found in compiled)

    def collected(self, modules: Iterable[types.ModuleType]) -> list[str]:
        """After collection: seal every hidden module (``modules``, and any other imported from
        the hidden folders), once checked that its globals are its own code's."""
        problems: list[str] = []
        sealed = {id(seal.namespace) for seal in self.seals}
        for module in self._hidden_modules(modules):
            namespace = vars(module)
            if id(namespace) in sealed:
                continue
            sealed.add(id(namespace))
            path = os.path.realpath(str(namespace.get("__file__")))
            label = path.removeprefix(self.hidden)
            found = self.source(path, rewritten="@pytest_ar" in namespace)
            if found is None:
                problems.append(f"{label}: the hidden module's file cannot be compiled again")
                continue
            problems += self._foreign(label, namespace, found)
            closed = found.bound is not None  # else names may join that its code does not show
            self.seals.append(Namespace(label, namespace, free=found.free, closed=closed))
            self.by_namespace[id(namespace)] = self.seals[-1]
        return self.new(problems)

    def _hidden_modules(self, modules: Iterable[types.ModuleType]) -> Iterator[types.ModuleType]:
        yield from modules
        for module in list(sys.modules.values()):
            file = getattr(module, "__file__", None)
            if (
                isinstance(file, str)
                and file.startswith(self.roots)
                and os.path.realpath(file).startswith(self.hidden)
            ):
                yield module

    def _foreign(self, label: str, namespace: dict[str, Any], found: Source) -> list[str]:
        """Globals the module's own code did not bind, and functions of its file that are not its code."""
        out = []
        if found.bound is not None:
            allowed = found.bound | found.free | _MODULE_NAMES
            name = namespace.get("__name__")
            for key in namespace.keys() - allowed:
                value = namespace[key]
                if not (isinstance(value, types.ModuleType) and value.__name__ == f"{name}.{key}"):
                    out.append(f"{label}: a global {key} was added from outside its code")
        path = os.path.realpath(str(namespace.get("__file__")))
        for key, value in namespace.items():
            code = getattr(value, "__code__", None) if type(value) is _FUNCTION else None
            if code is not None and os.path.realpath(code.co_filename) == path and not found.holds(code):
                out.append(f"{label}: the code of {key} is not the code of its file")
        return out

    def test(self) -> list[str]:
        """Before a test's setup and call: the quick checks, and what they found, in words."""
        hooks = self.hooks
        if all(seal.intact() for seal in self.seals) and (hooks is None or hooks.intact()) and self._saying():
            return []
        return self._full()

    def unconfigured(self) -> list[str]:
        """When pytest unconfigures, before it unregisters its own plugins: every check, the last
        one of the hooks."""
        problems = self._full()
        self.ended = True
        return problems

    def end(self) -> list[str]:
        """At the very end: every check but the hooks', whose last was made at unconfigure."""
        problems = self._full()
        if self.hooks is not None and not self.ended:
            problems += self.new(["the hooks were not checked when pytest unconfigured"])
        return problems

    def _saying(self) -> bool:
        reporting = len(self.reporters) == 1 and self.reporters[0] == self.lie
        return reporting and len(self.asserted) == 1 and self.asserted[0] == self.assertion

    def _full(self) -> list[str]:
        """Every check, in full (the hooks until pytest unconfigured)."""
        problems = [problem for seal in self.seals for problem in seal.problems()]
        problems += self._hooks()
        if not self._saying():
            problems.append("the assertions' checks were unhooked")
        return self.new(problems)

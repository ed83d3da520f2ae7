"""One run's checks of the hidden test process on itself, driven by the bootstrap's Guard.

See the package: sealed namespaces (:mod:`.seals`), the hooks (:mod:`.hooks`), the lies
:mod:`.equality` catches and the checks it makes in each assertion. Each problem is said once,
as a ``tampering`` line.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .hooks import Hooks
from .seals import Namespace, Reads
from .sources import Source, source_of

__all__ = ["Watch"]

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
_FUNCTION = types.FunctionType


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
        self.reads: dict[int, Reads] = {}  # by the id of an asserting function's code
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
            read = self.reads[id(code)] = Reads(seal, self.seals[0], code)
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
        """Globals the module's own code did not bind, and functions its ``def`` statements bound that
        are not their code any more."""
        out = []
        if found.bound is not None:
            allowed = found.bound | found.free | _MODULE_NAMES
            name = namespace.get("__name__")
            for key in namespace.keys() - allowed:
                value = namespace[key]
                if not (isinstance(value, types.ModuleType) and value.__name__ == f"{name}.{key}"):
                    out.append(f"{label}: a global {key} was added from outside its code")
        for key in found.functions:  # what its own ``def`` bound must still be that function
            value = namespace.get(key)
            if value is not None and not (type(value) is _FUNCTION and found.holds(value.__code__)):
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

"""A plugin manager's hook callers and implementations as they stand, by identity.

Every registered pluggy ``HookImpl`` (its function, plugin, options, argument names) and every
hook caller's list, executor and specification. :mod:`.watch` takes them before any conftest
file is imported and again right before collection, and checks them before each test (the
callers that run tests, quickly) and when pytest unconfigures (all of them).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import Any

__all__ = ["Hooks"]

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
_is = operator.is_

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
        every = [impl for impl, _ in self.impls.values()]
        self.every = (tuple(every), tuple(chain.from_iterable(map(_fields, every))))
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
            impls, listed = self.lists[name], caller._hookimpls
            if len(listed) == len(impls) and all(map(_is, listed, impls)):
                continue  # most lists, as they were
            kept = tuple(impl for impl in listed if id(impl) in self.impls)
            if len(kept) != len(impls) or not all(map(_is, kept, impls)):
                out.append(
                    f"the implementations of {name} were changed: {_names(kept)} (were {_names(impls)})"
                )
        every, fields = self.every
        if not all(map(_is, chain.from_iterable(map(_fields, every)), fields)):  # one pass in C, then who
            out += [
                f"a hook implementation of {impl.plugin_name} was changed: {impl.function!r:.120}"
                for impl, recorded in self.impls.values()
                if not all(map(_is, _fields(impl), recorded))
            ]
        return out

    def added(self) -> Iterator[tuple[str, Any]]:
        """Every implementation registered now that was not when this was taken: (hook, impl)."""
        for name, caller in vars(self.relay).items():
            for impl in caller._hookimpls:
                if id(impl) not in self.impls:
                    yield name, impl


def _names(impls: Iterable[Any]) -> str:
    return ", ".join(str(impl.plugin_name)[:60] for impl in impls)

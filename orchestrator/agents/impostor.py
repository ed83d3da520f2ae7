"""Impostor agents: the reference solution, with every public function's result replaced by a double.

No harness can stop the agent's own code from returning a value whose ``==`` is always true:
the hidden tests call that code in their own process and compare what it returns. Only the
tests can defend themselves, with assertions that check the *type* of what they get (see
docs/authoring.md). ``changeup calibrate`` runs these impostors against every challenge to
prove they do; each must fall short of full marks.

An impostor plays the challenge's reference solution, phase by phase, like the scripted
agent, then appends to every module of the workspace (the agent's own tests aside) a block
that wraps each public function, and each public method of each public class, so that it
still runs (exceptions and all) but *returns a double* of its result:

``always-equal``    an object equal to everything, truthy, that answers any attribute, call or
                    index with itself;
``equal-subclass``  a value of a built-in type (``str``, ``bytes``, numbers, ``list``,
                    ``tuple``, ``dict``, ``set``) as an instance of a subclass of its own type
                    whose ``==`` is always true: it passes ``isinstance`` and keeps every method,
                    and only a check of the exact type, or a comparison that does not go
                    through its ``==``, sees through it. ``None`` and ``bool`` (which have no
                    subclasses) stay as they are; any other object becomes an ``always-equal``.
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.agents.scripted import ScriptedAgent

__all__ = ["IMPOSTORS", "ImpostorAgent"]

_DOUBLES = """
    class Always:
        def __eq__(self, other): return True
        def __ne__(self, other): return False
        __lt__ = __le__ = __gt__ = __ge__ = __eq__
        def __hash__(self): return 0
        def __bool__(self): return True
        def __len__(self): return 1
        def __iter__(self): return iter(())
        def __contains__(self, item): return True
        def __getattr__(self, name): return self
        def __call__(self, *args, **kwargs): return self
        def __getitem__(self, key): return self
        def __repr__(self): return "Always()"

    def subclass(value):
        base = type(value)
        if value is None or base is bool:  # nothing to subclass
            return value
        if base not in (str, bytes, int, float, complex, list, tuple, dict, set, frozenset):
            return Always()

        class Equal(base):
            def __eq__(self, other): return True
            def __ne__(self, other): return False
            __hash__ = base.__hash__

        Equal.__name__ = Equal.__qualname__ = base.__name__
        return Equal(value)

    kinds = {"always-equal": lambda value: Always(), "equal-subclass": subclass}
"""

_BLOCK = """

def __changeup_impostor__():  # changeup calibration: results replaced by doubles ({kind})
    import functools, inspect, sys
{doubles}
    double = kinds["{kind}"]

    def wrap(function):
        if inspect.iscoroutinefunction(function):
            @functools.wraps(function)
            async def impostor(*args, **kwargs):
                return double(await function(*args, **kwargs))
        else:
            @functools.wraps(function)
            def impostor(*args, **kwargs):
                return double(function(*args, **kwargs))
        return impostor

    module = sys.modules[__name__]
    for name, value in list(vars(module).items()):
        if name.startswith("_") or getattr(value, "__module__", None) != __name__:
            continue
        if inspect.isfunction(value):
            setattr(module, name, wrap(value))
        elif inspect.isclass(value):
            for attribute, member in list(vars(value).items()):
                if not attribute.startswith("_") and inspect.isfunction(member):
                    setattr(value, attribute, wrap(member))


__changeup_impostor__()
"""

#: The impostors, by name (``--agent impostor:NAME``).
IMPOSTORS = ("always-equal", "equal-subclass")


def _is_test(relative: Path) -> bool:
    name = relative.name
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or any(part in ("tests", "test") for part in relative.parts[:-1])
    )


class ImpostorAgent(ScriptedAgent):
    """Plays the reference, its public functions returning doubles of their results."""

    def __init__(self, kind: str) -> None:
        if kind not in IMPOSTORS:
            raise ValueError(f"no impostor {kind!r}; one of: {', '.join(IMPOSTORS)}")
        super().__init__("reference")
        self.kind = kind
        self.name = f"impostor:{kind}"

    def rewrite(self, workspace: Path) -> None:
        """Append the impostor block to every module of the workspace but its tests."""
        block = _BLOCK.format(kind=self.kind, doubles=_DOUBLES)
        for path in sorted(workspace.rglob("*.py")):
            relative = path.relative_to(workspace)
            if relative.parts[0].startswith(".") or _is_test(relative):
                continue
            text = path.read_text(encoding="utf-8")
            if "__changeup_impostor__" not in text:
                path.write_text(text.rstrip("\n") + "\n" + block, encoding="utf-8")

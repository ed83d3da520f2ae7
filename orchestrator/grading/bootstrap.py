"""The first code of every hidden pytest run; changeup copies it beside the tests and runs it.

``python -I -B bootstrap.py SETTINGS -- PYTEST-ARGS...``, where SETTINGS is a JSON object:
``workspace`` (the snapshot copy), ``hidden`` (the hidden tests' root), ``stream`` (the result
stream), ``timeouts`` (copied phase folder → per-test seconds, optional), ``path`` (the
hidden folders importable before the workspace, optional), ``collect`` (a collection run for
``collect.py``: stream each collected test's id and markers, optional) and, when it starts
as root inside the sandbox, ``user`` ([uid, gid]) to drop to before anything else. Under
bubblewrap, the warm interpreter (``zygote.py``) imports this module once, makes its
:class:`Machinery`, and each run's freshly forked test process calls :func:`run`: the same
steps, without importing pytest again.

The agent's code runs in this process (the hidden tests import it), so everything here
assumes it is hostile:

- It drops to the test user first, then imports pytest and every built-in plugin *before*
  the workspace is importable, and says ``ready``: nothing the agent wrote has run yet, so
  a run without ``ready`` is the grader's failure, never the agent's.
- The workspace's modules load from source alone: its finder reads no ``.pyc`` (cached or
  sourceless) and no compiled extension, so nothing can stand in for the code shown.
- After collection, every test function must be the code of its own hidden file: the file
  is compiled again (with pytest's assertion rewriting) and each test's code object must be
  there. A module planted in ``sys.modules`` under a test module's name, or a test swapped
  afterwards, is caught.
- Before each test call, the item must still hold the function that was checked, and no
  trace or profile hook may be set (a tracer can jump over an ``assert``).
- At the end, the pytest and pluggy machinery must be the original: every function and
  class of their modules (and of ``unittest``, this script and the modules it loads) is
  compared, code objects included, with a fingerprint taken before the workspace was
  importable; no plugin may have joined from outside the hidden tests.
- Beside those, the process checks itself where the agent's code could walk around the
  rest (the ``selfcheck`` package, loaded from beside this script and installed before the
  fingerprint): every ``==``, ``!=``, ``in`` and ``not in`` of the hidden tests'
  asserts is checked for an operand that equals everything; the hidden modules' globals and
  ``builtins`` are sealed; the registered hook implementations and the hook callers' lists
  are taken before any conftest file is imported and checked up to the end.

For a challenge with ``prohibited_effects`` (settings ``effects``), the probe (``probe.py``)
starts watching right after ``ready``, before the workspace is importable.

An isolated run (settings ``host``, ``testing: isolation: process``) never makes the workspace
importable here: ``remote.py`` joins the workspace host, the process that runs the agent's code,
and every import of the workspace reaches it (``isolation.py``).

Every result is streamed as it happens; problems go to the stream as ``tampering`` lines;
the last line is ``exit``. The runner cross-checks all of it against the JUnit XML and the
canaries (``orchestrator.grading.harness``).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, TextIO

Fingerprint = tuple[list[Any], list[Any], list[Any]]

#: What ``pytest.main`` imports of the standard library as it configures itself (the debugging
#: and fault handler plugins); imported with pytest, so the warm interpreter does it once.
_IMPORTED_BY_MAIN = ("pdb", "faulthandler", "readline", "_pytest._argcomplete")
#: This module is ``__main__`` when run as a script, ``bootstrap`` in the warm interpreter (``zygote.py``);
#: ``changeup_selfcheck`` is the package it loads from beside itself; ``unittest``'s asserts are checked too.
_WATCHED = (
    "pytest",
    "_pytest",
    "pluggy",
    "iniconfig",
    "unittest",
    "__main__",
    __name__,
    "changeup_selfcheck",
)


def drop(user: list[int] | None) -> None:
    """Become the test user (uid, gid) with no groups, no capabilities (none permitted, none in
    the bounding set) and no new privileges."""
    if not user:
        return
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    for capability in range(64):  # PR_CAPBSET_DROP; an unknown capability just fails
        prctl(24, capability, 0, 0, 0)
    if prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "cannot set no_new_privs")
    os.setgroups([])
    os.setgid(user[1])
    os.setuid(user[0])


def _source_only(workspace: str) -> None:
    """The workspace's modules load from their source alone: no ``.pyc`` (cached or sourceless)
    and no compiled extension can stand in for the code the agent shows."""
    import importlib.machinery as machinery

    class Source(machinery.SourceFileLoader):
        def get_code(self, fullname: str) -> Any:
            path = self.get_filename(fullname)
            return self.source_to_code(self.get_data(path), path)

    root = os.path.join(os.path.realpath(workspace), "")
    finder = machinery.FileFinder.path_hook((Source, machinery.SOURCE_SUFFIXES))

    def hook(path: str) -> Any:
        if os.path.join(os.path.realpath(path or "."), "").startswith(root):
            return finder(path)
        raise ImportError("not the workspace")  # the usual finders take it

    sys.dont_write_bytecode = True
    sys.path_hooks.insert(0, hook)
    sys.path_importer_cache.clear()


_FUNCTION = type(drop)


def _function_of(member: object) -> Any:
    """The plain function behind a class member (a static or class method, a property), if any."""
    kind = type(member)
    if kind is staticmethod or kind is classmethod:
        member = member.__func__  # type: ignore[attr-defined]
    elif kind is property:
        member = member.fget  # type: ignore[attr-defined]
    return member if type(member) is _FUNCTION else None


def fingerprint() -> Fingerprint:
    """Every function and class of the watched modules, and every method of those classes.

    A function is kept with its code object and defaults (replacing ``__code__`` in place keeps
    the function's identity), beside the live namespace it was found in; a class, beside its
    namespace too, with the names of its methods (an added override shows); a module with its
    own identity.
    """
    functions: list[tuple[str, Any, str, object, object, object]] = []
    classes: list[tuple[str, dict[str, Any], str, type, frozenset[str]]] = []
    modules: list[tuple[str, object]] = []
    for name, module in list(sys.modules.items()):
        if module is None or name.partition(".")[0] not in _WATCHED:
            continue
        modules.append((name, module))
        namespace = module.__dict__
        for attr, value in list(namespace.items()):
            if type(value) is _FUNCTION:
                functions.append((name, namespace, attr, value, value.__code__, value.__defaults__))
            elif isinstance(value, type) and value.__module__ == name:
                members = value.__dict__
                methods = []
                for key, member in list(members.items()):
                    function = _function_of(member)
                    if function is not None:
                        where = f"{name}.{attr}"
                        functions.append(
                            (where, members, key, member, function.__code__, function.__defaults__)
                        )
                        methods.append(key)
                classes.append((f"{name}.{attr}", namespace, attr, value, frozenset(methods)))
    return functions, classes, modules


def changed(before: Fingerprint) -> list[str]:
    """What of ``before`` is no longer as it was: a function, its code or defaults, a class's
    methods, a module. Read from the live namespaces (no second fingerprint is taken)."""
    functions, classes, modules = before
    out = []
    for where, namespace, key, value, code, defaults in functions:
        now = namespace.get(key)
        function = _function_of(now)
        if (
            now is not value
            or function is None
            or function.__code__ is not code
            or (function.__defaults__ is not defaults)
        ):
            out.append(f"{where}.{key}")
    for label, namespace, attr, cls, methods in classes:
        if namespace.get(attr) is not cls or (
            frozenset(k for k, m in list(cls.__dict__.items()) if _function_of(m) is not None) != methods
        ):
            out.append(label)
    out += [name for name, module in modules if sys.modules.get(name) is not module]
    return sorted(out)


class Guard:
    """The harness's own pytest plugin: streams results and checks what runs them."""

    def __init__(self, stream: TextIO, hidden: str, machinery: Machinery, *, listing: bool = False) -> None:
        self.stream = stream
        self.listing = listing  # a collection run (``collect``): stream each test's id and markers
        self.hidden = os.path.join(os.path.realpath(hidden), "")
        self.config: Any = None
        self.before_collection: list[object] = []
        self.checked: dict[str, tuple[object, object]] = {}
        # The process's checks on itself: equality, sealed namespaces, hooks (``selfcheck``).
        equality = machinery.selfcheck.equality
        self.watch = machinery.selfcheck.watch.Watch(
            hidden, machinery.known, machinery.builtins, equality.SAY, equality.ASSERTED, self.tampering
        )

    def write(self, line: dict[str, Any]) -> None:
        """One line of the result stream."""
        self.stream.write(json.dumps(line) + "\n")
        self.stream.flush()

    def tampering(self, problem: str) -> None:
        """A sign that something changed what grades the agent."""
        self.write({"tampering": problem})

    def pytest_load_initial_conftests(self, early_config: Any) -> None:
        """Before any conftest file (and so any of the agent's code it imports): take the hooks."""
        self.watch.configuring(early_config.pluginmanager)

    def pytest_configure(self, config: Any) -> None:
        """Keep the configuration (for assertion rewriting and the plugin manager)."""
        self.config = self.watch.config = config

    def pytest_collection(self, session: Any) -> None:
        """Say ``collecting``, with whether JUnit XML will be written, and keep the plugins
        registered before any test file (or the agent's code) was imported."""
        from _pytest.junitxml import xml_key

        # Up to here only pytest and the challenge's own settings ran: a run that stops
        # before this line, or that will write no JUnit XML, is the grader's failure.
        self.write({"collecting": True, "junit": xml_key in self.config.stash})
        self.before_collection = list(self.config.pluginmanager.get_plugins())
        for problem in self.watch.collecting(self.config.pluginmanager):
            self.tampering(problem)

    def pytest_collection_finish(self, session: Any) -> None:
        """Every collected test must be the code of its own hidden file; then every hidden module
        is sealed."""
        modules: dict[int, Any] = {}
        for item in session.items if self.listing else ():
            self.write({"collected": item.nodeid, "markers": sorted({m.name for m in item.iter_markers()})})
        for item in session.items:
            path = os.path.realpath(str(item.path))
            if not path.startswith(self.hidden):
                self.tampering(f"{item.nodeid} was collected from outside the hidden tests")
                continue
            function = getattr(item, "obj", None)
            module = getattr(item, "module", None)
            if function is None or module is None:
                continue  # not a Python test function (a hidden conftest's own item)
            if os.path.realpath(str(getattr(module, "__file__", ""))) != path or (
                sys.modules.get(module.__name__) is not module
            ):
                self.tampering(f"{item.nodeid}: its module is not the one imported from its file")
                continue
            modules[id(module)] = module
            source = self.watch.source(path, rewritten="@pytest_ar" in vars(module))
            code = getattr(_unwrap(function), "__code__", None)
            if (
                source is None
                or os.path.realpath(getattr(code, "co_filename", "")) != path
                or not source.holds(code)
            ):
                self.tampering(f"{item.nodeid}: its code is not the code of its hidden file")
                continue
            self.checked[item.nodeid] = (function, code)
        for problem in self.watch.collected(modules.values()):
            self.tampering(problem)

    def pytest_runtest_setup(self, item: Any) -> None:
        """Before a test's fixtures: the seals and the hooks (the quick checks)."""
        for problem in self.watch.test():
            self.tampering(problem)

    def pytest_runtest_call(self, item: Any) -> None:
        """Right before a test runs: the checked function, no instance overrides, no tracer."""
        checked = self.checked.get(item.nodeid)
        function = getattr(item, "obj", None)
        code = getattr(function, "__code__", None)
        if checked is not None and (function is not checked[0] or code is not checked[1]):
            self.tampering(f"{item.nodeid}: its function was replaced after it was checked")
        if "runtest" in vars(item):
            self.tampering(f"{item.nodeid}: the test item's runtest was replaced")
        if sys.gettrace() is not None or sys.getprofile() is not None:
            self.tampering("a trace or profile hook was set while the tests ran")
        for problem in self.watch.test():
            self.tampering(problem)

    def pytest_unconfigure(self, config: Any) -> None:
        """Before pytest unregisters its own plugins: every check, in full, the hooks included."""
        for problem in self.watch.unconfigured():
            self.tampering(problem)

    def pytest_collectreport(self, report: Any) -> None:
        """A file that would not import (its tests are then missing, and fail)."""
        if report.failed:
            record = {"id": report.nodeid, "when": "collect", "outcome": "failed"}
            if self.listing:  # a collection run says why, for validation's message
                said = [line.strip() for line in str(report.longrepr).splitlines() if line.strip()]
                record["reason"] = said[-1].removeprefix("E ").strip() if said else ""
            self.write(record)

    def pytest_runtest_logreport(self, report: Any) -> None:
        """Every failure or error as it happens, and the call phase of every test."""
        if report.when == "call" or report.outcome != "passed":
            self.write({"id": report.nodeid, "when": report.when, "outcome": report.outcome})

    def finish(self, changes: list[str]) -> list[str]:
        """``changes`` to the machinery, and plugins that joined from outside the hidden tests."""
        problems = [f"the harness machinery was changed: {name}" for name in changes]
        if self.config is not None:
            for plugin in self.config.pluginmanager.get_plugins():
                if any(plugin is known for known in self.before_collection):
                    continue
                origin = os.path.realpath(str(getattr(plugin, "__file__", "") or ""))
                if not origin.startswith(self.hidden):
                    problems.append(f"a pytest plugin joined from outside the hidden tests: {plugin!r:.200}")
        if sys.gettrace() is not None or sys.getprofile() is not None:
            problems.append("a trace or profile hook was set while the tests ran")
        return problems


def _unwrap(function: object) -> object:
    seen = 0
    while hasattr(function, "__wrapped__") and seen < 100:
        function = function.__wrapped__
        seen += 1
    return function


class Machinery:
    """pytest imported with every built-in plugin, the process's own checks (``selfcheck``)
    installed, and the fingerprint of it all taken before any agent code."""

    def __init__(self) -> None:
        import builtins
        import unittest.case

        import pytest
        from _pytest.config import default_plugins

        for name in default_plugins:  # every built-in plugin, before anything of the agent's
            __import__(f"_pytest.{name}")
        import _pytest.assertion.rewrite

        for name in _IMPORTED_BY_MAIN:  # the standard library pytest.main imports, once
            __import__(name)

        ahead = (  # ahead of every other plugin
            Guard.pytest_load_initial_conftests,
            Guard.pytest_collection,
            Guard.pytest_runtest_setup,
            Guard.pytest_runtest_call,
            Guard.pytest_unconfigure,
        )
        for hook in ahead:
            pytest.hookimpl(tryfirst=True)(hook)
        pytest.hookimpl(wrapper=True)(Timer.pytest_runtest_call)
        self.pytest = pytest
        self.selfcheck = _beside("selfcheck", "changeup_selfcheck")
        # Before the fingerprint, which covers the changes.
        self.selfcheck.equality.install(_pytest.assertion.rewrite)
        self.selfcheck.equality.install_unittest(unittest.case)
        self.before = fingerprint()
        self.known = frozenset(id(_function_of(entry[3])) for entry in self.before[0])
        self.builtins = self.selfcheck.seals.Namespace(
            "builtins", vars(builtins), free=frozenset(), closed=False
        )


def _beside(folder: str, name: str) -> Any:
    """The package in ``folder`` beside this script, imported as ``name`` (with its modules)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), folder)
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(path, "__init__.py"), submodule_search_locations=[path]
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class Timer:
    """The per-test timeout (``testing: timeout``): a test of a timed phase folder that runs
    longer fails, "timed out after N s". pytest-timeout's signal method, in a few lines; the
    test run's own limit stays the backstop for code that blocks the signal."""

    def __init__(self, pytest: Any, limits: dict[str, float]) -> None:
        self.pytest = pytest
        self.limits = limits  # copied phase folder → seconds

    def pytest_runtest_call(self, item: Any) -> Any:
        """Run the test under an alarm of its phase's limit (a wrapper, made so in Machinery)."""
        import signal

        limit = self.limits.get(item.nodeid.split("/", 1)[0])
        if not limit:
            return (yield)
        fail = self.pytest.fail

        def expired(signum: int, frame: Any) -> None:
            fail(f"timed out after {limit:g}s", pytrace=False)

        previous = signal.signal(signal.SIGALRM, expired)
        signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            return (yield)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def run(settings: dict[str, Any], args: list[str], machinery: Machinery) -> int:
    """Say ready, make the workspace importable (from source), run pytest, check, say the exit.

    ``machinery`` was made in this process (or in the clean process it was forked from)
    before anything of the agent's could run.
    """
    stream = open(settings["stream"], "w", encoding="utf-8")  # noqa: SIM115 - open for the whole run
    guard = Guard(stream, settings["hidden"], machinery, listing=bool(settings.get("collect")))
    guard.write({"ready": os.getpid()})
    # Held here, not looked up at the end, where the agent's code may have rebound the names.
    compare, finish, write, before, end = (
        changed,
        guard.finish,
        guard.write,
        machinery.before,
        guard.watch.end,
    )
    if settings.get("effects"):  # the challenge prohibits effects: note each attempt (probe.py)
        _probe(settings["effects"])
    host = settings.get("host")
    ready: list[Any] = []  # isolated: a plugin that starts the session once the host is ready
    if host:  # isolated: the workspace is another process's, reached through remote.py
        ready.append(_load("changeup_remote", host["remote"]).connect(host))
    else:
        _source_only(settings["workspace"])
    # The hidden tests' own helpers (the support folder, modules beside the tests) come
    # before the workspace: a module of the agent's cannot stand in for one of them.
    sys.path.extend(settings.get("path") or [])
    if not host:
        sys.path.append(settings["workspace"])  # after the standard library and site-packages
    timer = Timer(machinery.pytest, settings.get("timeouts") or {})
    code = int(machinery.pytest.main(args, plugins=[guard, timer, *ready]))
    for problem in finish(compare(before)) + end():
        write({"tampering": problem})
    write({"exit": code})
    stream.close()
    return code


def _probe(config: dict[str, Any]) -> None:
    """Load the probe from ``config["probe"]`` (``probe.py``, beside this script; the warm
    interpreter has it already) and start it.

    A probe that will not start leaves the run as it would be without one: the run is then
    reported as not watched for prohibited effects (``effects.read_effects``), never voided.
    """
    try:
        _load("changeup_probe", config["probe"]).watch(config)
    except Exception as error:  # an observer's failure is no verdict
        print(f"changeup: the prohibited-effects probe did not start: {error!r}", file=sys.stderr)


def _load(name: str, path: str) -> Any:
    """The harness's script at ``path`` as module ``name`` (the warm interpreter has it already)."""
    if name not in sys.modules:
        import importlib.util

        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def main() -> int:
    """Drop privileges, import pytest, run the hidden tests (see :func:`run`)."""
    settings = json.loads(sys.argv[1])
    args = sys.argv[sys.argv.index("--") + 1 :]
    drop(settings.get("user"))
    return run(settings, args, Machinery())


if __name__ == "__main__":
    sys.exit(main())

"""What the hidden test process checks on itself, where the agent's code shares it (in-process runs).

A package of the bootstrap's: ``bootstrap.py`` loads it from beside itself, as
``changeup_selfcheck``, before the workspace is importable, installs what it changes in
pytest and ``unittest``, and only then takes the machinery fingerprint, which covers it. It
imports nothing but the standard library (and pytest's assertion rewriting, to compile a
hidden file as pytest does). The Guard drives one :class:`~.watch.Watch` a run:

- **Equality that cannot lie** (:mod:`.equality`). Every ``==``, ``!=``, ``in`` and ``not in``
  of the hidden tests' asserts, and ``unittest``'s ``assertEqual``, ``assertNotEqual``,
  ``assertIn`` and ``assertNotIn``, also compares every operand part that is not a plain
  value of an exact built-in type with fresh values nothing honest equals: one that says it
  equals them fails the test, and the run is tampered.
- **Sealed namespaces** (:mod:`.seals`). Every global of every hidden module (the test files,
  their conftest files, the support folder's modules) is sealed by identity after
  collection, with the code and defaults of its own functions and the methods of the classes
  it defines; first, each must be something the module's own top-level code binds (a name its
  code does not bind is foreign) and each of its functions the code of its file
  (:mod:`.sources`). Not sealed: the names its own functions declare ``global`` (state a test
  module may keep and rebind), other attributes of its classes (class-level state),
  ``__warningregistry__``, a submodule bound later by an import. ``builtins`` is sealed (every
  name, by identity; names may join) before any test file is imported. A hidden fixture that
  patches a builtin or a hidden module's global (``monkeypatch`` included) reads as
  tampering; a test that patches inside its own body (undone at its teardown) does not.
- **Hook implementations** (:mod:`.hooks`). Every registered pluggy ``HookImpl`` and every hook
  caller's list: taken before any conftest file is imported (a hidden conftest may import the
  agent's code before pytest configures), checked and taken again right before collection,
  checked before each test and when pytest unconfigures (before it unregisters its own
  plugins). An implementation that joins must be explained: a function of the fingerprinted
  machinery (bound to its own plugin), or code of a hidden file; the ones already there must
  keep their order.

The quick checks (before each test's setup and call; in each assertion, before it decides, the
globals and builtins its function's code reads, so a name rebound while a test runs and put
back before the next is seen) compare identities in C loops; a check that fails is redone in
full and said in words.
"""

from __future__ import annotations

from . import equality, hooks, seals, sources, watch

__all__ = ["equality", "hooks", "seals", "sources", "watch"]

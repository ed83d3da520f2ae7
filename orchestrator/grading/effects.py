"""Prohibited effects, from outside: what a hidden test run is told to watch, and what it saw.

A challenge may declare ``prohibited_effects`` (docs/authoring.md): effects the code under
test must not have. The sandbox already *blocks* them (no network; the machine read-only);
what it cannot say is that the code *tried*. So a run of a challenge that declares some loads
``probe.py`` in the test process before the workspace is importable: an audit hook
(:pep:`578`) that notes each attempt, blocked or not, in ``out/effects.jsonl``. Here is the
host's side: :func:`probe_settings` (what the probe watches, and which places are the
workspace's or temporary) and :func:`read_effects` (what it noted, as :class:`Effect`\\ s).

What counts, for each effect:

``network``
    a connection opened, a datagram sent or a socket bound to an internet address other than
    loopback, or a host name other than ``localhost`` looked up;
``writes-outside-workspace``
    a file or folder opened for writing, created, removed, renamed, linked, truncated or
    re-moded anywhere but the workspace's copy, the temporary folders (``/tmp``, and in
    ``$TMPDIR`` the ``tmp…`` entries ``tempfile`` and pytest's ``tmp_path`` make) and ``/dev``.

The probe watches the pytest process of the hidden tests, the hidden tests included (so a
challenge's reference must have none: calibration checks it), not a test *command* and not
the programs a test process starts. It observes, it does not guard: code that goes around
Python (``ctypes``, a child process) is not seen, though the sandbox still blocks it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.log.records import Effect

if TYPE_CHECKING:
    from orchestrator.grading.sandbox import Places

__all__ = ["EFFECTS", "PROBE", "probe_settings", "read_effects"]

#: The probe's own source (a script, loaded by the bootstrap in the test process).
PROBE = Path(__file__).with_name("probe.py")
#: What the probe writes in a run's output folder.
EFFECTS = "effects.jsonl"
#: The most distinct effects one run notes (the first ones: they say enough).
MOST = 100


def probe_settings(prohibited: Sequence[str], places: Places, junit: str = "junit.xml") -> dict[str, Any]:
    """The bootstrap's ``effects`` setting for a run in ``places`` that writes its JUnit XML to
    ``junit`` (nothing when none is prohibited)."""
    if not prohibited:
        return {}
    return {
        "effects": {
            "probe": str(places.harness / PROBE.name),
            "file": str(places.out / EFFECTS),
            "watch": list(prohibited),
            "most": MOST,
            "allowed": [str(places.ws), "/tmp", "/dev"],
            # TMPDIR is the output folder (also HOME): only what tempfile and pytest name tmp… in it
            "temporary": str(places.out),
            "own": [str(places.out / junit)],  # the harness's own writes
        }
    }


def read_effects(path: Path, rename: Callable[[str], str]) -> tuple[Effect, ...] | None:
    """What the probe noted at ``path``; None when it never said it was watching (not loaded, or
    broken). ``rename`` turns a test id of the run into ``phase/file::test``."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    watching = False
    found: dict[Effect, None] = {}
    for line in lines:
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut off by a kill; the others stand
        if not isinstance(item, dict):
            continue
        if "watching" in item:
            watching = True
        elif "effect" in item:
            test = str(item.get("test") or "")
            detail = str(item.get("detail", ""))[:500]
            found[Effect(str(item["effect"]), detail, rename(test) if test else "")] = None
    return tuple(found) if watching else None

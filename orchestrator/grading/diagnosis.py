"""Why a hidden test failed, when the reason is its environment: a tool or data it was not given.

A test's private root holds what its challenge declares (``toolsets.py``) and nothing else, so
a test that runs an undeclared program fails with ``[Errno 2] No such file or directory:
'bash'`` or ``sh: 1: git: not found``, and one that reads undeclared time-zone data with
``No time zone found with key UTC``. Such a failure is the challenge's, not the agent's, and
a bare ``ENOENT`` among the failures does not say so. :func:`annotate` reads every failed
test's detail for these messages and starts the detail with what is missing
(``needs the tool bash (not in testing: tools): …``); the run's detail says it once for the
run, and calibration names it (:func:`missing_in`).

The messages are the programs' and Python's own; a test's detail is written by code the
agent controls too, so this only ever *adds words*: it changes no outcome and no status.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
from collections.abc import Collection, Sequence

from orchestrator.system.toolsets import KITS, PYTHON
from triggers import PhaseResult, TestOutcome

__all__ = ["annotate", "missing", "missing_in", "run_note"]

#: Messages of a program that could not be found: Python's (subprocess, os.exec*) and the shells'.
_PROGRAM = (
    re.compile(r"No such file or directory: '([^'\s]+)'"),
    re.compile(r"\bsh: (?:\d+: |line \d+: )?([^\s:]+): (?:command )?not found"),
    re.compile(r"([^\s:]+): command not found"),
    re.compile(r"/([^\s/:]+): bad interpreter"),
)
#: Messages of missing system data, by the data set that holds it.
_DATA = (
    ("zoneinfo", re.compile(r"ZoneInfoNotFoundError|No time zone found|UnknownTimeZoneError")),
    ("zoneinfo", re.compile(r"\b(invalid|unknown) time ?zone\b", re.IGNORECASE)),
    ("zoneinfo", re.compile(r"'/usr/share/zoneinfo")),
    ("ca-certificates", re.compile(r"CERTIFICATE_VERIFY_FAILED|unable to get local issuer certificate")),
    ("locales", re.compile(r"unsupported locale setting|[Cc]annot set LC_")),
)
_PROGRAM_FOLDERS = ("/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin")
#: The detail's opening, and how calibration reads it back.
_OPENING = "needs the {kind} {name} (not in testing: {key}): "
_READ_BACK = re.compile(r"needs the (tool|data) (\S+) \(not in testing: (?:tools|data)\): ")


def _program(found: str) -> str | None:
    """The tool a not-found name means: a bare program name this machine has (or a kit's), or a
    path in a program folder; None for anything else (a data file, the workspace's own script)."""
    if "/" in found:
        return os.path.basename(found) if os.path.dirname(found) in _PROGRAM_FOLDERS else None
    if PYTHON.match(found):
        return None
    return found if found in KITS or shutil.which(found) is not None else None


def missing(detail: str, tools: Collection[str], data: Collection[str]) -> list[tuple[str, str]]:
    """What ``detail`` (a failed test's) says is missing and the challenge does not declare, as
    ``(kind, name)`` pairs: ``("tool", "bash")``, ``("data", "zoneinfo")``."""
    declared = {os.path.basename(t) for t in tools}
    found: list[tuple[str, str]] = []
    for pattern in _PROGRAM:
        for match in pattern.finditer(detail):
            name = _program(match.group(1))
            if name is not None and name not in declared and ("tool", name) not in found:
                found.append(("tool", name))
    for name, pattern in _DATA:
        if name not in data and ("data", name) not in found and pattern.search(detail):
            found.append(("data", name))
    return found


def annotate(
    results: Sequence[PhaseResult], tools: Collection[str], data: Collection[str]
) -> tuple[tuple[PhaseResult, ...], list[tuple[str, str]]]:
    """``results`` with each failed test's detail opened by what it lacked, and every lack once."""
    lacking: list[tuple[str, str]] = []
    out = []
    for result in results:
        tests = []
        for test in result.tests:
            found = missing(test.detail, tools, data) if test.outcome != "passed" else []
            lacking += [pair for pair in found if pair not in lacking]
            opening = "".join(_opening(kind, name) for kind, name in found)
            tests.append(TestOutcome(test.id, test.outcome, opening + test.detail) if found else test)
        out.append(dataclasses.replace(result, tests=tuple(tests)))
    return tuple(out), lacking


def run_note(lacking: Sequence[tuple[str, str]]) -> str:
    """The run's word on what its tests lacked ("" when nothing)."""
    if not lacking:
        return ""
    tools = [name for kind, name in lacking if kind == "tool"]
    data = [name for kind, name in lacking if kind == "data"]
    parts = [f"testing: tools: [{', '.join(tools)}]"] if tools else []
    parts += [f"testing: data: [{', '.join(data)}]"] if data else []
    said = ", ".join(f"the {kind} {name}" for kind, name in lacking)
    return f"the tests failed for want of {said}, which the challenge does not declare ({'; '.join(parts)})"


def missing_in(detail: str) -> list[tuple[str, str]]:
    """What an annotated detail (:func:`annotate`) says was missing."""
    return [(kind, name) for kind, name in _READ_BACK.findall(detail)]


def _opening(kind: str, name: str) -> str:
    return _OPENING.format(kind=kind, name=name, key="tools" if kind == "tool" else "data")

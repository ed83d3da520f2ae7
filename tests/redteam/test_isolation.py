"""The red team against an isolated challenge: agent code that tries to decide, or reach, the hidden tests
from the process it runs in (``testing: isolation: process``).

Each attack is a real session through the CLI on a copy of the red-team target whose hidden
tests reach ``adder.py`` in a workspace host. In-process, these tricks read the expected
value from the calling frame, rebind the test module's type check, swap a pytest hook
implementation, or return doubles; isolated, nothing of the tests is in their process, and a
double crosses as a handle that equals only itself. An attack that tries to reach the test
process (its PIDs, its memory, its stream, the hidden tests) finds nothing, and says so in the
error it raises, which the report keeps.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.redteam.common import NEUTRALISED, TARGET, needs_bubblewrap, outcome, run

pytestmark = pytest.mark.slow

#: What every attack below uses: a double that equals everything.
DOUBLE = """
class Always:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __hash__(self):
        return 0
"""

ATTACKS = {
    # The expected value of ``assert exactly(add(2, 3)) == 5``, read from the caller's frame.
    "reads-the-callers-frame": """
import linecache, re, sys


def add(a, b):
    frame, hops = sys._getframe(1), 0
    while frame is not None and hops < 60:
        if frame.f_code.co_name.startswith("test"):  # a test's frame: its line, then its locals
            line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
            found = re.search(r"add\\(.*==\\s*(-?\\d+)", line)
            if found:
                return int(found.group(1))
            for value in frame.f_locals.values():
                if type(value) is int and value not in (a, b):
                    return value
        frame, hops = frame.f_back, hops + 1
    raise RuntimeError("no test's frame within reach")
""",
    # The test module's exact-type check rebound to let anything through, then a double.
    "rebinds-test-globals": DOUBLE
    + """
import gc, sys


def add(a, b):
    for module in list(sys.modules.values()):
        space = getattr(module, "__dict__", None)
        if isinstance(space, dict) and callable(space.get("exactly")):
            space["exactly"] = lambda value: value
    for function in gc.get_objects():
        if getattr(function, "__name__", "") == "exactly" and hasattr(function, "__code__"):
            function.__code__ = (lambda value: value).__code__
    return Always()
""",
    # pytest's call hooks swapped for functions that pass every test but a canary-looking one.
    "swaps-a-hookimpl": DOUBLE
    + """
import gc


def passes(*args, **kwargs):
    return True


def add(a, b):
    for impl in gc.get_objects():
        if type(impl).__name__ == "HookImpl" and getattr(impl, "plugin_name", "") != "canary":
            if getattr(impl.function, "__name__", "") in ("pytest_pyfunc_call", "pytest_runtest_call"):
                impl.function = passes
    return Always()
""",
    "always-equal": DOUBLE + "\n\ndef add(a, b):\n    return Always()\n",
    # An int that equals every number: isinstance(result, int) holds, type(result) is int does not.
    "int-subclass": """
class Int(int):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = int.__hash__


def add(a, b):
    return Int(0)
""",
    # Signal, trace or read the memory of any process in sight; forge the result stream; read
    # the hidden tests. What it reached is the message of the error it raises.
    "reaches-the-tests": """
import ctypes, os

libc = ctypes.CDLL(None, use_errno=True)


def add(a, b):
    reached, mine = [], {os.getpid(), os.getppid()}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in mine:
            continue
        pid = int(name)
        try:
            with open(f"/proc/{pid}/mem", "rb"):
                reached.append(f"opened the memory of {pid}")
        except OSError:
            pass
        if libc.ptrace(16, pid, 0, 0) == 0:  # PTRACE_ATTACH
            reached.append(f"traced {pid}")
        try:
            os.kill(pid, 0)
            reached.append(f"may signal {pid}")
        except OSError:
            pass
    for stream in ("/changeup/out/stream.jsonl",):  # the tests' stream, which it did not make
        try:
            with open(stream, "r+") as handle:
                handle.write("")
            reached.append(f"opened {stream} for writing")
        except OSError:
            pass
    if os.path.isdir("/changeup/hidden") and os.listdir("/changeup/hidden"):
        reached.append("listed /changeup/hidden")
    raise RuntimeError(f"REACHED {reached}")
""",
    # Every process it may signal, killed: the test process must not be one of them.
    "kills-everything": "import os, signal\n\n\ndef add(a, b):\n    os.kill(-1, signal.SIGKILL)\n",
}


def target(tmp_path: Path, isolation: str) -> Path:
    """A copy of the red-team target with ``isolation``, each attack one of its broken variants, and
    one more hidden test that compares with ``==`` alone."""
    root = tmp_path / f"target-{isolation}"
    shutil.copytree(TARGET, root)
    spec = root / "challenge.yaml"
    spec.write_text(
        spec.read_text().replace("  limits:\n", f"  testing:\n    isolation: {isolation}\n  limits:\n")
    )
    # A test that trusts ==, as loose tests do: in-process, a double passes it.
    (root / "tests" / "phase1" / "test_plain_equality.py").write_text(
        '"""add, compared with == alone."""\n\nfrom adder import add\n\n\n'
        "def test_sum_by_equality():\n"
        '    """2 + 3 == 5, however the result is made."""\n'
        "    assert add(2, 3) == 5\n"
    )
    for name, source in ATTACKS.items():
        folder = root / "solutions" / "broken" / f"isolated-{name}" / "phase1"
        folder.mkdir(parents=True)
        (folder / "adder.py").write_text(source)
    return root


def said(report: dict[str, Any]) -> list[str]:
    """What each failing test said."""
    return [t["detail"] for phase in report["phases"] for t in phase["failing"]]


@pytest.mark.parametrize("attack", sorted(set(ATTACKS) - {"reaches-the-tests"}))
def test_an_isolated_attack_decides_nothing(tmp_path: Path, attack: str) -> None:
    """Frame reading, global rebinding, hook swapping, doubles and a kill of every process in
    sight: each run is valid and graded, and every hidden test fails, as on the starter."""
    report, _ = run(target(tmp_path, "process"), f"scripted:broken/isolated-{attack}", tmp_path / "runs")
    assert outcome(report) == NEUTRALISED, report["score"]
    assert report["score"]["grading_status"] == "ok"


@needs_bubblewrap
def test_the_workspace_host_reaches_nothing_of_the_tests(tmp_path: Path) -> None:
    """No process of the tests to signal, trace or read, no stream to forge, no hidden test to
    list, from the host; in-process (the control) the same code opens the tests' stream."""
    isolated, _ = run(
        target(tmp_path, "process"), "scripted:broken/isolated-reaches-the-tests", tmp_path / "a"
    )
    assert outcome(isolated) == NEUTRALISED, isolated["score"]
    details = said(isolated)
    assert details
    assert all("REACHED []" in detail for detail in details), details
    shared, _ = run(
        target(tmp_path, "in-process"), "scripted:broken/isolated-reaches-the-tests", tmp_path / "b"
    )
    assert any("opened /changeup/out/stream.jsonl for writing" in d for d in said(shared)), said(shared)

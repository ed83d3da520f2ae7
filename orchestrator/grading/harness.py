"""The hardened pytest invocation for hidden tests, and how its results are cross-checked.

The agent's code runs inside the hidden test process (the tests import it), so the harness
assumes that code is hostile and arranges things so that the usual tricks have no effect or
are caught:

- Python starts isolated (``-I``: no ``PYTHON*`` variables, no user site, no script folder
  on ``sys.path``) from a bootstrap outside the workspace. So the workspace's
  ``sitecustomize.py``/``usercustomize.py`` and ``.pth`` files never load.
- pytest is imported *before* the workspace joins ``sys.path``, and the workspace is
  appended *after* the standard library and site-packages. So a ``pytest.py``,
  ``unittest.py`` or ``json.py`` in the workspace shadows nothing.
- pytest runs with an empty configuration (``-c /dev/null``), its root in the hidden
  folder and no plugin autoloading. So the workspace's ``conftest.py``, ``pytest.ini`` and
  ``pyproject.toml`` settings play no part.
- Two canary tests with fresh random names join every run: one must pass, one must fail.
  Forcing results (a patched reporter, a hook) shows up as a canary with the wrong verdict.
- Every result is streamed by the bootstrap's own plugin, as it happens, to a file beside
  the JUnit XML. A JUnit file rewritten afterwards (an ``atexit`` hook) disagrees with it.
- With the failing canary, pytest must exit 1. Exit 0 means the process was made to lie
  (``os._exit(0)`` at import, for one).

What the harness cannot stop — agent code in the same process that finds and forges every
channel consistently — is named in docs/threat-model.md; the sandbox limits the damage.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from pathlib import Path

from orchestrator.grading.junit import Verdict

__all__ = ["BOOTSTRAP", "Canaries", "cross_check", "plant_canaries", "read_stream"]

#: Runs as ``python -I -B bootstrap.py WORKSPACE STREAM -- PYTEST-ARGS...``.
BOOTSTRAP = """\
import json, os, sys

workspace, stream_path = sys.argv[1], sys.argv[2]
args = sys.argv[sys.argv.index("--") + 1 :]
import pytest  # before the workspace is importable: its pytest.py shadows nothing

sys.dont_write_bytecode = True
sys.path.append(workspace)  # after the standard library and site-packages
stream = open(stream_path, "w", buffering=1)


class Stream:
    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":
            line = {"id": report.nodeid, "when": report.when, "outcome": report.outcome}
            stream.write(json.dumps(line) + "\\n")
            stream.flush()


code = pytest.main(args, plugins=[Stream()])
stream.write(json.dumps({"exit": int(code)}) + "\\n")
stream.close()
sys.exit(code)
"""


@dataclass(frozen=True, slots=True)
class Canaries:
    """The fresh canary tests of one run."""

    folder: str
    passing: str
    failing: str

    def ids(self) -> tuple[str, str]:
        """Their test ids as the run reports them."""
        return (
            f"{self.folder}/test_canary.py::{self.passing}",
            f"{self.folder}/test_canary.py::{self.failing}",
        )


def plant_canaries(hidden: Path) -> Canaries:
    """Write two canary tests with random names into ``hidden/<random folder>/``."""
    canaries = Canaries(
        f"canary_{secrets.token_hex(6)}", f"test_{secrets.token_hex(8)}", f"test_{secrets.token_hex(8)}"
    )
    folder = hidden / canaries.folder
    folder.mkdir(parents=True)
    passing = f"def {canaries.passing}():\n    assert 1 + 1 == 2\n"
    failing = f"def {canaries.failing}():\n    assert 1 + 1 == 3\n"
    (folder / "test_canary.py").write_text(f"{passing}\n\n{failing}")
    return canaries


def read_stream(path: Path) -> tuple[dict[str, str], int | None]:
    """Final outcome per test id from the bootstrap's stream, and the exit code it saw."""
    outcomes: dict[str, str] = {}
    exit_code = None
    if not path.is_file():
        return outcomes, exit_code
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "exit" in item:
            exit_code = item["exit"]
        elif outcomes.get(item.get("id")) not in ("failed",):
            outcomes[str(item.get("id"))] = (
                "failed" if item.get("outcome") == "failed" else str(item.get("outcome"))
            )
    return outcomes, exit_code


def cross_check(
    verdicts: list[Verdict],
    stream: dict[str, str],
    stream_exit: int | None,
    returncode: int | None,
    canaries: Canaries,
) -> tuple[list[Verdict], list[str]]:
    """The hidden verdicts (canaries removed) and every sign that the run lied."""
    signs: list[str] = []
    passing, failing = canaries.ids()
    by_id = {v.id: v for v in verdicts}
    if returncode not in (0, 1):
        pass  # the run stopped early (collection errors, a crash): canaries may not have run
    elif by_id.get(passing) is None or by_id.get(failing) is None:
        signs.append("a canary test is missing from the results")
    else:
        if by_id[passing].outcome != "passed":
            signs.append("the canary that must pass did not")
        if by_id[failing].outcome == "passed":
            signs.append("the canary that must fail passed: results were forced")
    if returncode == 0:
        signs.append("pytest exited 0 although a canary always fails")
    if stream_exit is not None and returncode is not None and stream_exit != returncode:
        signs.append(f"pytest reported exit {stream_exit} but the process exited {returncode}")
    for verdict in verdicts:
        seen = stream.get(verdict.id)
        if seen is None and verdict.outcome == "passed":
            signs.append(f"{verdict.id} passed in the JUnit XML but never ran")
        elif seen is not None and (seen == "passed") != (verdict.outcome == "passed"):
            signs.append(f"{verdict.id}: the JUnit XML says {verdict.outcome}, the run said {seen}")
    hidden = [v for v in verdicts if not v.id.startswith(canaries.folder + "/")]
    return hidden, signs

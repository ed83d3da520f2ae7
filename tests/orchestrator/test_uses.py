"""What hidden tests obviously run and read, from their source (``challenge/uses.py``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from orchestrator.challenge.loader import challenge_warnings, load_challenge, validate
from orchestrator.challenge.uses import Use, file_uses, python_uses, shell_programs
from tests.cli import REPO

CLOCK = REPO / "tests" / "fixtures" / "tools" / "clock"

SOURCE = """\
import os
import shutil
import subprocess as sp
from subprocess import check_output
from zoneinfo import ZoneInfo

def test_it(tmp_path):
    sp.run(["bash", "-c", "true"], check=True)
    check_output(("/usr/bin/git", "status"))
    sp.run("jq . < data.json | sort -u && FOO=1 exec node x.js", shell=True)
    os.system("make -C build")
    assert shutil.which("cargo")
    sp.run([sys.executable, "main.py"])
    sp.run(["python3", "main.py"])
    sp.run(["./run.sh"])
    sp.run(command)
    ZoneInfo("Europe/Paris")
"""


def test_obvious_programs_and_data_are_found_at_their_place() -> None:
    """Literal programs of subprocess calls (through import aliases), a shell command line's
    programs (and sh itself), shutil.which, ZoneInfo; never Python, a workspace script or a
    name only known at run time."""
    found = [(u.kind, u.name, u.line) for u in python_uses(SOURCE)]
    assert found == [
        ("tool", "bash", 8),
        ("tool", "git", 9),
        ("tool", "sh", 10),
        ("tool", "jq", 10),
        ("tool", "sort", 10),
        ("tool", "node", 10),
        ("tool", "sh", 11),
        ("tool", "make", 11),
        ("tool", "cargo", 12),
        ("data", "zoneinfo", 17),
    ]


@pytest.mark.parametrize(
    ("command", "programs"),
    [
        ("bash /tests/test.sh", ["bash"]),
        ("cd /app && uv run pytest -q; echo done", ["uv"]),
        ("LANG=C /usr/bin/env sort x | ./main --flag", ["sort"]),
        ("if [ -f x ]; then git log; fi", ["git"]),
        ("echo 'unbalanced", []),
    ],
)
def test_a_command_lines_programs(command: str, programs: list[str]) -> None:
    """The first word of each command, after assignments and env; builtins and paths of the
    workspace are not programs."""
    assert shell_programs(command) == programs


def test_a_scripts_shebang_is_a_use() -> None:
    """#!/bin/bash, #!/usr/bin/env node; a Python test's own #! line names the grading interpreter."""
    assert file_uses("check.sh", b"#!/bin/bash\necho\n") == [Use("tool", "bash")]
    assert file_uses("run", b"#!/usr/bin/env -S node --x\n") == [Use("tool", "node")]
    assert file_uses("test_a.py", b"#!/usr/bin/env python3\nimport os\n") == []
    assert file_uses("data.bin", b"\x00\x01") == []


def test_declarations_are_checked_where_they_are_written(tmp_path: Path) -> None:
    """A tool that is a command line or a relative path, a repeat, or an unknown data name is a
    problem at its place (with a "did you mean"); a tool this machine lacks is a warning there."""
    root = tmp_path / "clock"
    shutil.copytree(CLOCK, root)
    yaml = root / "challenge.yaml"
    original = yaml.read_text()
    declared = "    tools: [bash]\n    data: [zoneinfo]\n"
    bad = "    tools: [bash, 'bash -c', ./run, bash]\n    data: [zonefino, zoneinfo]\n"
    yaml.write_text(original.replace(declared, bad))
    assert [str(p).split("challenge.yaml:", 1)[1] for p in validate(root)] == [
        "25:19: tool 'bash -c' holds a space: name one program (bash), not a command line (bash -c ...)",
        "25:30: tool './run' is a relative path: name a program on PATH (git) or give its absolute path",
        "25:37: tool 'bash' is listed twice",
        "26:12: unknown data 'zonefino'; did you mean 'zoneinfo'? "
        "(known: zoneinfo, ca-certificates, locales)",
    ]
    yaml.write_text(original.replace(declared, "    tools: [bash, no-such-tool-26]\n    data: [zoneinfo]\n"))
    (warning,) = challenge_warnings(load_challenge(root), root)
    assert str(warning).split("challenge.yaml:", 1)[1] == (
        "25:19: warning: the tool 'no-such-tool-26' that this challenge's tests declare (testing: tools) "
        "is not on this machine's PATH: install it, or declare the one the tests need; "
        "runs here will be invalid"
    )

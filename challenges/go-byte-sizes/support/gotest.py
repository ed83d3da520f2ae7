"""Run one phase's hidden Go tests and report them as JUnit XML at $CHANGEUP_JUNIT.

The phase's ``*_test.go`` files (and the shared ones beside this script) are laid over a copy
of the workspace from which the agent's own ``*_test.go`` files are left out, so that only the
hidden tests decide, and each phase's run sees its own tests only. ``go test -json`` reports
each test; a package that fails without a failing test (it does not build, or it panics
outside a test) becomes one failing case, ``(package)``, holding go's output.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from xml.etree import ElementTree as ET

#: A top-level test function of a hidden file.
TEST = re.compile(r"^func (Test\w*)\(\w+ \*testing\.T\)", re.MULTILINE)


def run_go_test(tests: Path) -> tuple[int, list[str]]:
    """``go test -json`` on a copy of the workspace (the current folder) with the hidden tests:
    its exit and its lines."""
    scratch = Path(tempfile.mkdtemp(prefix="gotest-"))
    module = scratch / "module"
    shutil.copytree(".", module, ignore=shutil.ignore_patterns("*_test.go", ".git"), symlinks=True)
    for source in [*tests.parent.glob("*_test.go"), *tests.glob("*_test.go")]:
        shutil.copyfile(source, module / source.name)
    env = {
        **{k: v for k, v in os.environ.items() if k != "CHANGEUP_JUNIT"},  # the result is ours to write
        "CGO_ENABLED": "0",  # pure Go: no C compiler in the tests' root
        "GOFLAGS": "-mod=mod",
        "GOPROXY": "off",  # no network: a dependency the module lacks is a build failure
        "GOTOOLCHAIN": "local",
        "GOCACHE": str(scratch / "cache"),
        "GOPATH": str(scratch / "gopath"),
    }
    done = subprocess.run(
        ["go", "test", "-vet=off", "-count=1", "-json", "."],
        cwd=module,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        check=False,
    )
    return done.returncode, done.stdout.splitlines()


def module_path() -> str:
    """The workspace's module path (go.mod's ``module`` line): the package's name in results when
    go names none (a build failure is plain text, not JSON)."""
    try:
        text = Path("go.mod").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "package"
    for line in text.splitlines():
        words = line.split()
        if len(words) == 2 and words[0] == "module":
            return words[1].strip('"')
    return "package"


def hidden_tests(tests: Path) -> list[str]:
    """The test functions the phase's hidden files declare, in order."""
    found = [
        TEST.findall(f.read_text(encoding="utf-8", errors="replace")) for f in sorted(tests.glob("*_test.go"))
    ]
    return [name for names in found for name in names]


def junit(lines: list[str], package: str, code: int, expected: list[str]) -> tuple[ET.Element, int]:
    """The JUnit document of ``go test -json`` output, and how many of its cases failed;
    ``package`` names the package where no event does; ``code`` is go's exit, and one that
    says failure with no failing case is a failing case too (as changeup's own check says);
    an ``expected`` test go said nothing of fails, unless the package as a whole did."""
    outcome: dict[str, str] = {}
    output: dict[str, list[str]] = {}
    package_output: list[str] = []
    package_failed = False
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            package_output.append(line + "\n")  # build errors come as plain text
            continue
        if not isinstance(event, dict):
            package_output.append(line + "\n")
            continue
        package = str(event.get("Package") or package)
        test, action = event.get("Test"), event.get("Action")
        if not test:
            package_output.append(str(event.get("Output") or ""))
            package_failed |= action == "fail"
            continue
        output.setdefault(test, []).append(str(event.get("Output") or ""))
        if action in ("pass", "fail", "skip"):
            outcome[test] = action
        else:
            outcome.setdefault(test, "fail")  # run but never ended: it took the process down
    classname = package.rsplit("/", 1)[-1]
    suite = ET.Element("testsuite", name=package)
    failures = 0
    cases = [(test, outcome[test], "".join(output[test])) for test in output]
    unexplained = (package_failed or code != 0) and not any(result == "fail" for _, result, _ in cases)
    if unexplained or not cases:
        cases.append(("(package)", "fail", "".join(package_output) or "go test reported no test"))
    else:  # the binary ended before them, or printed lines that were not go's
        cases += [
            (name, "fail", "did not run: go test reported nothing of it")
            for name in expected
            if name not in output
        ]
    for test, result, text in cases:
        case = ET.SubElement(suite, "testcase", classname=classname, name=test)
        if result == "fail":
            failures += 1
            failed = ET.SubElement(case, "failure", message=_last_lines(text))
            failed.text = text
        elif result == "skip":
            ET.SubElement(case, "skipped")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(failures))
    return suite, failures


def _last_lines(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("=== ")]
    return "\n".join(lines[-6:])[:2000]


def main() -> int:
    """Run, report, and exit 1 when a case failed (the exit agrees with the JUnit)."""
    tests = Path(os.environ["CHANGEUP_TESTS"])
    code, lines = run_go_test(tests)
    sys.stdout.write("\n".join(lines[-40:]) + "\n")
    suite, failures = junit(lines, module_path(), code, hidden_tests(tests))
    with open(os.environ["CHANGEUP_JUNIT"], "wb") as out:
        out.write(ET.tostring(suite, encoding="utf-8", xml_declaration=True))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

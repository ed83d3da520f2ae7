"""Run one phase's hidden tests on the workspace's TypeScript and report them as JUnit XML at
$CHANGEUP_JUNIT.

The workspace's ``.ts`` files (its own ``*.test.ts`` aside) are compiled by ``tsc`` in strict
mode into a scratch folder; a type error is the failing case ``tsc::typecheck`` (the code is
still emitted and tested, as tsc does by default). The phase's ``*.test.mjs`` files then run
on node's built-in test runner, importing the compiled modules from ``$SLUG_BUILD``, and
report through ``junit-reporter.mjs``; the two are joined into one document.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from xml.etree import ElementTree as ET

#: A top-level test of a hidden file: ``test("name", ...)``.
TEST = re.compile(r'^test\("([^"]+)"', re.MULTILINE)
#: The hidden tests' own compiler settings (the workspace's tsconfig.json is the agent's to change).
OPTIONS = {
    "strict": True,
    "target": "es2022",
    "module": "es2022",
    "moduleResolution": "node",
    "lib": ["es2022"],
    "types": [],
    "skipLibCheck": True,
    "pretty": False,
}


def sources() -> list[str]:
    """The workspace's TypeScript, its tests and declarations aside."""
    found = [p for p in Path(".").rglob("*.ts") if "node_modules" not in p.parts]
    return sorted(str(p) for p in found if not p.name.endswith((".test.ts", ".d.ts")))


def compile_typescript(build: Path) -> tuple[int, str]:
    """tsc's exit and output; the modules land in ``build``, marked as ES modules for node."""
    build.mkdir(parents=True)
    (build / "package.json").write_text('{"type": "module"}\n')
    files = sources()
    if not files:
        return 1, "no .ts file in the workspace"
    options = {**OPTIONS, "rootDir": str(Path.cwd()), "outDir": str(build)}
    config = build.parent / "tsconfig.json"
    config.write_text(
        json.dumps({"compilerOptions": options, "files": [str(Path(f).resolve()) for f in files]})
    )
    done = subprocess.run(["tsc", "-p", str(config)], capture_output=True, text=True, check=False)
    return done.returncode, (done.stdout + done.stderr).strip()


def hidden_tests(tests: Path) -> list[tuple[str, str]]:
    """The tests the phase's hidden files declare (``test("name", ...)``), as (classname, name):
    the classname is the file's name before its first dot, as the reporter gives it."""
    files = sorted(tests.glob("*.test.mjs"))
    return [
        (f.name.split(".")[0], name) for f in files for name in TEST.findall(f.read_text(encoding="utf-8"))
    ]


def run_tests(tests: Path, build: Path, results: Path) -> tuple[int, str]:
    """node --test on the phase's tests; its JUnit goes to ``results``; its exit and output."""
    reporter = tests.parent / "junit-reporter.mjs"
    done = subprocess.run(
        [
            "node",
            "--test",
            f"--test-reporter={reporter}",
            f"--test-reporter-destination={results}",
            *sorted(str(p) for p in tests.glob("*.test.mjs")),
        ],
        # the result is ours to write: node and the code under test get no $CHANGEUP_JUNIT
        env={**{k: v for k, v in os.environ.items() if k != "CHANGEUP_JUNIT"}, "SLUG_BUILD": str(build)},
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, (done.stdout + done.stderr).strip()


def main() -> int:
    """Compile, test, join the results; exit 1 when a case failed (the exit agrees with the JUnit)."""
    scratch = Path(tempfile.mkdtemp(prefix="tstest-"))
    code, said = compile_typescript(scratch / "build")
    results = scratch / "node.xml"
    exit_code, output = run_tests(Path(os.environ["CHANGEUP_TESTS"]), scratch / "build", results)
    try:
        suite = ET.parse(results).getroot()
    except (OSError, ET.ParseError) as error:  # node ended before its reporter did
        suite = ET.Element("testsuite", name="node")
        case = ET.SubElement(suite, "testcase", classname="node", name="(run)")
        ET.SubElement(case, "failure", message=f"no results from node --test ({error}): {output[-1500:]}")
    reported = {(case.get("classname"), case.get("name")) for case in suite.iter("testcase")}
    for classname, name in hidden_tests(Path(os.environ["CHANGEUP_TESTS"])):
        if (classname, name) not in reported:  # its process ended first, or printed what was not node's
            case = ET.SubElement(suite, "testcase", classname=classname, name=name)
            ET.SubElement(case, "failure", message="did not run: node --test reported nothing of it")
    if exit_code != 0 and suite.find("testcase/failure") is None:  # node failed, no test says why
        case = ET.SubElement(suite, "testcase", classname="node", name="(run)")
        ET.SubElement(case, "failure", message=f"node --test exited {exit_code}: {output[-1500:]}")
    check = ET.Element("testcase", classname="tsc", name="typecheck")
    if code != 0:
        ET.SubElement(check, "failure", message=said[-2000:])
    suite.insert(0, check)
    failed = len(suite.findall("testcase/failure"))
    sys.stdout.write(f"{said}\n{output[-3000:]}\n")
    with open(os.environ["CHANGEUP_JUNIT"], "wb") as out:
        out.write(ET.tostring(suite, encoding="utf-8", xml_declaration=True))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""SlopCodeBench problems (``problems/<name>/`` of SprocketLab/slop-code-bench) as challenges.

A problem is ``config.yaml`` (``entry_file``, ``timeout``, ``checkpoints`` with their
``order``, ``timeout``; ``static_assets``, ``test_dependencies``, ``markers``), one spec
``checkpoint_N.md`` per checkpoint, ``tests/`` (a ``conftest.py`` that requires
``--entrypoint`` and ``--checkpoint``, one ``test_checkpoint_N.py`` each, helpers and data),
and ``solutions/checkpoint_N/`` (the oracle's whole program after that checkpoint).

Each checkpoint becomes a phase: its spec is the message, its test file the phase's hidden
tests, the rest of ``tests/`` the shared support folder, and its tests are grouped as the
benchmark groups them (unmarked: core; ``functionality``, ``error``, ``regression``, and the
config's own markers) with the checkpoint passing on its core tests.
"""

from __future__ import annotations

import platform
import re
from pathlib import Path
from typing import Any

from orchestrator.importers.draft import (
    Draft,
    SourceError,
    advance_on_turn_end,
    read_text,
    read_yaml,
    slug,
)
from orchestrator.importers.environment import (
    Needs,
    crates,
    first_unparsed,
    missing_tool,
    on_this_machine,
    string_literals,
)
from orchestrator.importers.phase_skips import skipped_from
from orchestrator.importers.pytest_files import (
    DeclaredTest,
    declared_tests,
    exit_only_tests,
    imported_modules,
)
from orchestrator.system.interpreters import NoInterpreter, interpreter_for

__all__ = ["draft_slopcode"]

SUPPORT = "tests/support"
INI = "tests/pytest.ini"
#: GroupType of each built-in marker; an unmarked test is CORE.
BUILTIN_MARKERS = {"error": "ERROR", "functionality": "FUNCTIONALITY", "regression": "REGRESSION"}
GROUP_TYPES = ("CORE", "FUNCTIONALITY", "ERROR", "REGRESSION")
#: Packages the benchmark's runner always installs next to pytest: added when the tests import them.
DEFAULT_PACKAGES = ("jsonschema", "deepdiff")
#: Plugins the runner needs for itself: changeup has its own reports and per-test timeout.
RUNNER_PLUGINS = {"pytest", "pytest-timeout", "pytest-json-ctrf", "pytest-json-report"}
#: The Python of the benchmark's one Docker environment (configs/environments/docker-python3.12-uv.yaml).
BENCHMARK_PYTHON = "3.12"
#: The entry point's placeholders in a spec, which the benchmark fills before showing it.
ENTRY_FILE = "%%%ENTRYPOINT:entry_file%%%"
ENTRY_COMMAND = "%%%ENTRYPOINT:entry_command%%%"


def _checkpoints(config: dict[str, Any], path: Path) -> list[tuple[str, dict[str, Any]]]:
    checkpoints = config.get("checkpoints")
    if not isinstance(checkpoints, dict) or not checkpoints:
        raise SourceError(path, "checkpoints: expected a mapping of checkpoint_N to its settings")
    ordered = []
    for name, settings in checkpoints.items():
        settings = settings or {}
        if not isinstance(settings, dict) or not isinstance(settings.get("order", 0), int):
            raise SourceError(path, f"checkpoints.{name}: expected a mapping with an integer order")
        ordered.append((settings.get("order", 0), str(name), settings))
    return [(name, settings) for _, name, settings in sorted(ordered)]


def _marker_groups(config: dict[str, Any], path: Path) -> dict[str, list[str]]:
    """The markers of each GroupType: the built-in ones and the config's own."""
    groups: dict[str, list[str]] = {kind: [] for kind in GROUP_TYPES}
    for marker, kind in BUILTIN_MARKERS.items():
        groups[kind].append(marker)
    for marker, settings in (config.get("markers") or {}).items():
        kind = str((settings or {}).get("group", "")).upper()
        if kind not in GROUP_TYPES:
            raise SourceError(path, f"markers.{marker}.group: expected one of {', '.join(GROUP_TYPES)}")
        groups[kind].append(str(marker))
    return groups


def _any(markers: list[str]) -> str:
    return markers[0] if len(markers) == 1 else "(" + " or ".join(markers) + ")"


def _group_expressions(markers: dict[str, list[str]]) -> dict[str, str]:
    """The benchmark's precedence as marker expressions: error, then regression, then the
    config's markers (a CORE one over a FUNCTIONALITY one), then functionality, else core."""
    error, regression = _any(markers["ERROR"]), _any(markers["REGRESSION"])
    above = f"not {error} and not {regression}"
    functional = _any(markers["FUNCTIONALITY"])
    core = f"{above} and not {functional}"
    if markers["CORE"]:
        core = f"{above} and ({_any(markers['CORE'])} or not {functional})"
        functional = f"{functional} and not {_any(markers['CORE'])}"
    return {
        "core": core,
        "functionality": f"{above} and {functional}",
        "error": error,
        "regression": f"not {error} and {regression}",
    }


def _group_of(test: DeclaredTest, markers: dict[str, list[str]]) -> str:
    """The group a test's own markers put it in (as :func:`_group_expressions` says)."""
    marks = test.markers
    if marks & set(markers["ERROR"]):
        return "error"
    if marks & set(markers["REGRESSION"]):
        return "regression"
    if marks & set(markers["CORE"]):
        return "core"
    if marks & set(markers["FUNCTIONALITY"]):
        return "functionality"
    return "core"


def _package(requirement: str) -> str:
    """The package a pip requirement names (``pytest>=7`` → ``pytest``)."""
    return re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0].lower()


def _unpinned(requirement: str) -> bool:
    """A requirement naming a package and no version (``pyarrow``, ``uvicorn[standard]``)."""
    return re.fullmatch(r"\s*[A-Za-z0-9._-]+(\[[^\]]*\])?\s*", requirement) is not None


def _requirements(config: dict[str, Any], tests: Path, solutions: list[Path], out: Draft) -> list[str]:
    listed = [str(r) for r in config.get("test_dependencies") or []]
    wanted = [r for r in listed if _package(r) not in RUNNER_PLUGINS]
    dropped = sorted(set(listed) - set(wanted))
    if dropped:
        out.dropped.append(
            f"test_dependencies {', '.join(dropped)}: the benchmark's runner plugins; changeup has its "
            "own reports and per-test timeout (`testing.timeout`)"
        )
    # The top level holds the conftest, the helpers and the test files; data/ may hold any text.
    imported = set().union(*(imported_modules(p) for p in tests.glob("*.py")))
    for package in DEFAULT_PACKAGES:
        if package in imported and package not in wanted:
            wanted.append(package)
            out.mapped.append(
                f"the tests import {package} (the benchmark installs it by default) → requirements"
            )
    for folder in solutions:
        needs = folder / "requirements.txt"
        lines = needs.read_text(encoding="utf-8").splitlines() if needs.is_file() else []
        for line in (line.strip() for line in lines):
            if not line or line.startswith("#") or _package(line) in RUNNER_PLUGINS:
                continue
            where = needs.relative_to(out.source)
            same = next((i for i, w in enumerate(wanted) if _package(w) == _package(line)), None)
            if same is None:
                wanted.append(line)
                out.mapped.append(f"{where}: {line} → requirements")
            elif _unpinned(wanted[same]) and not _unpinned(line):
                # The tests name the package, the solution says which version it works with.
                out.mapped.append(
                    f"{where}: {line} → requirements, in place of the tests' unpinned {wanted[same]}"
                )
                wanted[same] = line
    return wanted


def _support(source: Path, config: dict[str, Any], phases: list[str], out: Draft) -> None:
    """The rest of tests/ → the support folder; its data also beside each test file that finds
    data from its own path (``__file__``): a run puts the support folder one level above."""
    tests = source / "tests"
    test_files = {f"test_{name}.py" for name in phases}
    rest = [e for e in sorted(tests.iterdir()) if e.name not in test_files and e.name != "__pycache__"]
    for entry in rest:
        out.copies[f"{SUPPORT}/{entry.name}"] = entry
    data = [e for e in rest if e.suffix != ".py"]
    local = [n for n in phases if "__file__" in (tests / f"test_{n}.py").read_text(encoding="utf-8")]
    for name in local:
        for entry in data:
            out.copies[f"tests/{name}/{entry.name}"] = entry
    collected = sorted(
        p.relative_to(tests).as_posix()
        for entry in data
        if entry.is_dir()
        for p in entry.rglob("*.py")
        if p.name == "conftest.py" or p.name.startswith("test_") or p.stem.endswith("_test")
    )
    if local and collected:
        out.dropped.append(
            f"a clean copy of the data: pytest also collects {', '.join(collected[:5])} in the phase folders"
        )
    if local and data:
        out.mapped.append(
            f"{', '.join(f'test_{n}.py' for n in local)} find data beside themselves (__file__): "
            f"{', '.join(e.name for e in data)} copied into their phase folders too"
        )
    for name, asset in (config.get("static_assets") or {}).items():
        where = source / str((asset or {}).get("path", ""))
        if not (asset or {}).get("path") or not where.exists():
            raise SourceError(
                source / "config.yaml", f"static_assets.{name}.path: no such file or folder {where}"
            )
        out.copies[f"{SUPPORT}/assets/{name}"] = where
        out.mapped.append(f"static asset {name} ({where.relative_to(source)}) → {SUPPORT}/assets/{name}")
    if config.get("static_assets"):
        out.dropped.append(
            "the SCBENCH_ASSETS_DIR / SCBENCH_ASSET_<NAME> variables: changeup sets no variables for "
            f"hidden tests; the assets are at {SUPPORT}/assets/<name>, beside the conftest"
        )


def _ini(markers: dict[str, list[str]], config: dict[str, Any]) -> str:
    described = {
        "error": "error-handling / edge-case tests (group error)",
        "functionality": "non-core tests (group functionality)",
        "regression": "regression tests (group regression)",
    }
    for marker, settings in (config.get("markers") or {}).items():
        described[str(marker)] = str((settings or {}).get("description") or marker)
    lines = [f"    {name}: {text}" for name, text in described.items()]
    return "# Written by changeup import slopcode: the markers the groups read.\n[pytest]\nmarkers =\n" + (
        "\n".join(lines) + "\n"
    )


def _reference(source: Path, phases: list[str], out: Draft) -> list[Path]:
    """Each checkpoint's oracle snapshot → solutions/reference/<checkpoint>/, with a .delete of
    the files the snapshot before it had and it has not (the scripted agent copies over)."""
    folders = [source / "solutions" / name for name in phases]
    present = [f for f in folders if f.is_dir()]
    if not present:
        out.dropped.append(
            "a reference solution: the problem has no solutions/checkpoint_N/, and calibration needs one"
        )
        return []
    before: set[str] = set()
    for name, folder in zip(phases, folders, strict=True):
        if not folder.is_dir():
            out.dropped.append(f"solutions/{name}/ is missing: calibration needs a reference for every phase")
            continue
        files = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
        files = {f for f in files if "__pycache__" not in f}
        out.copies[f"solutions/reference/{name}"] = folder
        gone = sorted(before - files)
        # .delete holds globs, one per word: a name a glob cannot spell stays behind, said so.
        unlisted = [f for f in gone if re.search(r"[\s*?\[]", f)]
        if unlisted:
            out.dropped.append(f"solutions/{name}/ drops {', '.join(unlisted)}: left in the workspace")
        if listed := [f for f in gone if f not in unlisted]:
            out.files[f"solutions/reference/{name}/.delete"] = "\n".join(listed) + "\n"
        before = files
    out.mapped.append("solutions/checkpoint_N/ (each the whole program) → solutions/reference/checkpoint_N/")
    return present


def _title(spec: str, fallback: str) -> str:
    for line in spec.splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return fallback


def draft_slopcode(source: Path) -> Draft:
    """The challenge a SlopCodeBench problem folder makes."""
    config_path = source / "config.yaml"
    config = read_yaml(config_path)
    entry = config.get("entry_file")
    if not isinstance(entry, str) or not entry:
        raise SourceError(config_path, "entry_file: required (the file the agent writes, e.g. main.py)")
    entry_file = entry if entry.endswith(".py") else f"{entry}.py"
    checkpoints = _checkpoints(config, config_path)
    names = [name for name, _ in checkpoints]
    markers = _marker_groups(config, config_path)
    expressions = _group_expressions(markers)
    out = Draft("slopcode", source, {})
    test_dir = source / "tests"
    if not test_dir.is_dir():
        raise SourceError(test_dir, "missing (the format keeps every checkpoint's tests here)")
    specs, phases, may_pass = [], [], []
    for name, settings in checkpoints:
        spec = read_text(source / f"{name}.md")
        test_file = test_dir / f"test_{name}.py"
        if not test_file.is_file():
            raise SourceError(test_file, f"missing: checkpoint {name}'s tests")
        tests = declared_tests(test_file)
        if not tests:
            raise SourceError(test_file, "holds no test functions")
        out.copies[f"tests/{name}/{test_file.name}"] = test_file
        grouped = {group: [t for t in tests if _group_of(t, markers) == group] for group in expressions}
        groups = {group: expressions[group] for group, members in grouped.items() if members}
        phase: dict[str, Any] = {"id": name, "title": _title(spec, name)}
        if settings.get("timeout") is not None:
            phase["testing"] = {"timeout": settings["timeout"]}
        phase["groups"] = groups
        if "core" in groups:
            phase["passes"] = ["core"]
        else:
            out.dropped.append(f"{name} has no core tests: it passes when every one of its tests passes")
        phases.append(phase)
        failing_exit = exit_only_tests(test_file)
        may_pass += [
            f"{name}/{test_file.name}::{t.name}"
            for t in tests
            if t in grouped["error"] or t.name in failing_exit
        ]
        if any(t.case_marks for t in tests):
            out.dropped.append(
                f"{test_file.name}: cases with marks of their own are grouped by them when the tests run, "
                "but calibration.starter_may_pass lists only whole error-marked tests"
            )
        specs.append(spec)
    run = f"python {entry_file}"
    specs = [_rendered(spec, entry_file, run) for spec in specs]
    briefing = f"Your program is run from the workspace root as `{run}`.\n\n{specs[0]}"
    solutions = _reference(source, names, out)
    _support(source, config, names, out)
    _skipping(test_dir, names, phases, out)
    _retirements(checkpoints, phases, out)
    out.files[INI] = _ini(markers, config)
    testing_all: dict[str, Any] = {
        "support": SUPPORT,
        "ini": INI,
        "args": ["--entrypoint", run, "--checkpoint", "{current}"],
    }
    if config.get("timeout") is not None:
        testing_all["timeout"] = config["timeout"]
    testing_all.update(_environment(source, solutions, out))
    challenge: dict[str, Any] = {
        "id": slug(str(config.get("name") or source.name)),
        "title": str(config.get("description") or config.get("name") or source.name).strip().split("\n")[0],
        "pattern": "escalation",
        "initial_briefing": briefing,
        "phases": phases,
        "triggers": advance_on_turn_end(names, specs, "checkpoint"),
        # The benchmark bounds each test (pytest-timeout) and each checkpoint's agent (an hour in
        # its agent configs), never a whole test run: a run of many checkpoints' tests takes minutes.
        "limits": {"session": f"{len(names)}h", "agent_turn": "1h", "test_run": "30min"},
        "testing": testing_all,
    }
    requirements = _requirements(config, test_dir, solutions, out)
    if requirements:
        challenge["requirements"] = requirements
    if may_pass:
        challenge["calibration"] = {"starter_may_pass": may_pass}
    out.challenge = challenge
    out.mapped[:0] = [
        "config.yaml checkpoints, by order → phases " + ", ".join(names),
        "checkpoint_N.md → the briefing (checkpoint 1, after a line naming the command) and each "
        "checkpoint's trigger message",
        "tests/test_checkpoint_N.py → tests/checkpoint_N/ (hidden tests of that phase)",
        f"the rest of tests/ (conftest.py, helpers, data/, assets/) → {SUPPORT} (testing.support)",
        f"entry_file {entry} → testing.args --entrypoint '{run}', and --checkpoint {{current}}: every "
        "checkpoint's tests run with the latest unlocked checkpoint, as the benchmark runs a checkpoint's "
        "tests with those of the checkpoints before it",
        "%%%ENTRYPOINT:entry_file%%% and %%%ENTRYPOINT:entry_command%%% in the specs → "
        f"{entry_file} and `{run}`; the canary comment at their head is left out, as the benchmark does",
        f"markers → {INI} (testing.ini); groups core / functionality / error / regression by the "
        "benchmark's precedence (error, regression, the config's markers, functionality, else core)",
        "pass policy core-cases → passes: [core] (edit passes: for all-cases)",
        "timeout (per test) → testing.timeout; a checkpoint's timeout → its testing.timeout",
        "no limit on a whole test run (the benchmark bounds each test) → limits.test_run 30min; an hour "
        f"per checkpoint (its agent configs' timeout) → limits.agent_turn 1h, limits.session {len(names)}h",
        "the agent's turn ending → the checkpoint's verdict: passed, the next spec; not passed, "
        "the next spec after 'moving on' (a deadline trigger)",
    ]
    if may_pass:
        out.mapped.append(
            "error-marked tests, and tests whose every assertion is a non-zero exit → "
            "calibration.starter_may_pass (a non-zero exit passes on an empty starter)"
        )
    out.dropped += [
        "REGRESSION by file: earlier checkpoints' tests stay in the suite as their own phases, each "
        "scored by its own pass policy, rather than as the current checkpoint's regression group",
        "stopping at the first checkpoint that misses its policy: changeup moves on and counts what fails",
        "the oracle's own failures: list any test the reference fails under calibration.reference_may_fail",
        "the Docker environment: tests run in changeup's sandbox, without network, with the grading "
        "interpreter as `python` (changeup's own, or one testing.requires_python finds) and the tools "
        "and data testing.tools / testing.data declare",
    ]
    return out


def _rendered(spec: str, entry_file: str, run: str) -> str:
    """A checkpoint's spec as the benchmark shows it: the entry point's placeholders filled and the
    canary comment at its head left out."""
    spec = re.sub(r"^<!--.*?-->\n?", "", spec, count=1, flags=re.DOTALL)
    return spec.replace(ENTRY_FILE, entry_file).replace(ENTRY_COMMAND, run)


def _retirements(
    checkpoints: list[tuple[str, dict[str, Any]]], phases: list[dict[str, Any]], out: Draft
) -> None:
    """``include_prior_tests: false`` on checkpoint N: the checkpoints before it retire once it unlocks."""
    dropped_at: str | None = None
    for n, (name, settings) in enumerate(checkpoints):
        if settings.get("include_prior_tests", True) is not False:
            if dropped_at is not None and n:
                out.dropped.append(
                    f"{name} includes prior tests again after {dropped_at} left them out: the checkpoints "
                    f"{dropped_at} retired stay retired (a retired phase never runs again)"
                )
            continue
        dropped_at = dropped_at or name
        for earlier in phases[:n]:
            if "retire" not in earlier:
                earlier["retire"] = "on-next-unlock" if earlier is phases[n - 1] else {"on-unlock": name}
        if n:
            out.mapped.append(
                f"{name}'s include_prior_tests: false → the checkpoints before it retire when it unlocks "
                "(retire:): their tests stop running, and each is scored on its last run before then"
            )


def _skipping(tests: Path, names: list[str], phases: list[dict[str, Any]], out: Draft) -> None:
    """A checkpoint whose every test skips itself from a later checkpoint on retires when that one
    unlocks: the benchmark counts a checkpoint's tests at later checkpoints as regression, outside
    its pass policy, and these say they no longer apply there (``phase_skips.py``)."""
    numbers = [int(m[1]) if (m := re.search(r"(\d+)$", name)) else None for name in names]
    for n, name in enumerate(names):
        skip = skipped_from(tests / f"test_{name}.py")
        if skip is None:
            continue
        later = next((k for k in range(n + 1, len(names)) if (numbers[k] or 0) >= skip.number), None)
        if later is None:
            continue
        phases[n]["retire"] = "on-next-unlock" if later == n + 1 else {"on-unlock": names[later]}
        said = f" ({skip.reason!r})" if skip.reason else ""
        out.mapped.append(
            f"test_{name}.py skips every test from checkpoint {skip.number} on{said} → {name} retires when "
            f"{names[later]} unlocks (retire:): scored on its last run before, as the benchmark's pass "
            "policy counts only the current checkpoint's tests"
        )


def _environment(source: Path, solutions: list[Path], out: Draft) -> dict[str, Any]:
    """What the tests and the reference need beyond Python (``testing:`` tools, data, isolation and
    requires_python), each found from the problem's files and said in the report."""
    tests = sorted((source / "tests").glob("*.py"))
    program = [
        p
        for folder in solutions
        for p in sorted(folder.rglob("*.py"))
        if "tests" not in p.relative_to(folder).parts
    ]
    needs = Needs()
    for path in [*tests, *program]:
        needs.python(path, path.relative_to(source).as_posix())
    if needs.shell:  # the program runs shell text the tests give it: the utilities that text names
        needs.utilities(
            (text, path.relative_to(source).as_posix()) for path in tests for text in string_literals(path)
        )
    found: dict[str, Any] = {}
    if needs.tools:
        found["tools"] = sorted(needs.tools)
    if needs.data:
        found["data"] = sorted(needs.data)
    for kind, items in (("tools", needs.tools), ("data", needs.data)):
        for name, places in sorted(items.items()):
            missing = kind == "tools" and not on_this_machine(name)
            out.mapped.append(
                f"{name} → testing.{kind} (found in {', '.join(places[:2])}"
                + (f" and {len(places) - 2} more" if len(places) > 2 else "")
                + ")"
            )
            if missing:
                out.dropped.append(missing_tool(name))
    if "cargo" in needs.tools and (
        wanted := crates(t for p in [*tests, *program] for t in string_literals(p))
    ):
        out.dropped.append(
            f"the crates.io crates the tests' cargo builds fetch ({', '.join(wanted)}): hidden tests run "
            "without network, so those builds fail (Could not resolve host: index.crates.io)"
        )
    own = {p.stem if p.suffix == ".py" else p.name for folder in solutions for p in folder.iterdir()}
    imported = set().union(*(imported_modules(p) for p in tests)) if tests else set()
    if imported & own:
        out.dropped.append(
            f"the tests import {', '.join(sorted(imported & own))} of the solution: isolation stays "
            "in-process, and calibration runs its impostors"
        )
    else:
        found["isolation"] = "subprocess"
        out.mapped.append(
            "the tests run the program as a child process (--entrypoint) and import none of it → "
            "testing.isolation: subprocess (calibration plans no impostor: a double never reaches the tests)"
        )
    unparsed = first_unparsed(source, [*tests, *program])
    if unparsed:
        found["requires_python"] = f">={BENCHMARK_PYTHON}"
        out.mapped.append(
            f"{unparsed} on Python {platform.python_version()}; the benchmark runs Python "
            f"{BENCHMARK_PYTHON} → testing.requires_python: '>={BENCHMARK_PYTHON}' (its tests are graded "
            "on an interpreter that satisfies it: docs/authoring.md)"
        )
        try:
            interpreter_for(found["requires_python"])
        except NoInterpreter as error:
            out.dropped.append(f"Python >={BENCHMARK_PYTHON}: {error}")
    return found

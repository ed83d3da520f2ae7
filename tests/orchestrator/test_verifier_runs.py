"""Command verifiers in the real sandbox: Harbor-like ``test.sh`` scripts run by bubblewrap.

Each test writes a small challenge whose one phase is ``command: bash /tests/test.sh`` with
``verifier: {}`` (Harbor's ``/app``, ``/tests``, ``/logs/verifier``), and grades real
snapshots with the real runner (``grading/verifier.py``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import anyio
import pytest

from orchestrator.challenge.loader import load_challenge
from orchestrator.grading.sandbox import Sandbox, detect_sandbox
from orchestrator.grading.testrun import PytestRunner
from orchestrator.log.verdicts import TestRun
from orchestrator.session.workspace import Workspace
from orchestrator.system.venvs import grading_environment
from tests.cli import REPO

pytestmark = pytest.mark.slow

#: Every run but the one that checks the refusal without it.
needs_bubblewrap = pytest.mark.skipif(
    detect_sandbox().kind != "bubblewrap",
    reason=f"LOUD SKIP: no bubblewrap sandbox here ({detect_sandbox().reason})",
)

CHALLENGE = """\
challenge:
  id: hello-verifier
  title: Hello, verified the Harbor way
  pattern: revision
  initial_briefing: Write hello.txt holding "Hello, world!".
  phases:
    - id: phase1
      title: hello
      command: {command}
      verifier: {verifier}
  testing:
    tools: {tools}
  limits:
    session: 10min
    test_run: 1min
"""

#: What the scripts here run: the tests' private root holds these (and sh) and no other program.
TOOLS = "[bash, cat, mkdir, grep, ls, basename]"

#: A Harbor task's verifier: checks /app/hello.txt, writes its reward, exits 1 when it fails.
HELLO = """\
#!/bin/bash
mkdir -p /logs/verifier
if [ "$(cat /app/hello.txt 2>/dev/null)" = "Hello, world!" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
  exit 1
fi
"""


def grade(
    tmp_path: Path,
    script: str,
    files: dict[str, str] | None = None,
    *,
    command: str = "bash /tests/test.sh",
    verifier: str = "{}",
    sandbox: Sandbox | None = None,
    tools: str = TOOLS,
    extra: dict[str, str] | None = None,
) -> TestRun:
    """One real run of phase 1, whose tests are ``script`` as tests/phase1/test.sh (and ``extra``
    files beside it), on a workspace holding ``files``, in a root holding ``tools``."""
    root = tmp_path / "challenge"
    (root / "workspace").mkdir(parents=True)
    (root / "workspace" / "README.md").write_text("Say hello.\n")
    (root / "tests" / "phase1").mkdir(parents=True)
    (root / "tests" / "phase1" / "test.sh").write_text(script)
    for name, text in (extra or {}).items():
        (root / "tests" / "phase1" / name).write_text(text)
    (root / "challenge.yaml").write_text(CHALLENGE.format(command=command, verifier=verifier, tools=tools))
    challenge = load_challenge(root)
    workspace = Workspace.create(challenge.workspace, tmp_path / "ws", tmp_path / "shadow.git")
    for name, text in (files or {}).items():
        (workspace.path / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace.path / name).write_text(text)
    runner = PytestRunner(
        challenge, workspace, tmp_path / "scratch", environment=grading_environment([]), sandbox=sandbox
    )

    async def run() -> TestRun:
        return await runner.run(await workspace.snapshot(), ["phase1"])

    return anyio.run(run)


def outcomes(run: TestRun) -> list[tuple[str, str, str]]:
    """Every test of the run: id, outcome, detail."""
    return [(t.id, t.outcome, t.detail) for phase in run.phases for t in phase.tests]


@needs_bubblewrap
def test_a_harbor_test_sh_passes_on_a_workspace_that_does_the_task(tmp_path: Path) -> None:
    """The workspace is at /app, reward.txt in /logs/verifier: reward 1 is a passing test."""
    run = grade(tmp_path, HELLO, {"hello.txt": "Hello, world!\n"})
    assert run.status == "ok", run.detail
    assert outcomes(run) == [("phase1/verifier::reward", "passed", "")]


@needs_bubblewrap
def test_a_harbor_test_sh_fails_on_a_workspace_that_does_not(tmp_path: Path) -> None:
    """Reward 0 (and exit 1, which is not a verdict) is a failing test of a clean run."""
    run = grade(tmp_path, HELLO, {"hello.txt": "Goodbye\n"})
    assert run.status == "ok", run.detail
    assert outcomes(run) == [
        ("phase1/verifier::reward", "failed", "reward 0 (reward.txt; the test passes at 1)")
    ]


@needs_bubblewrap
def test_reward_json_gives_a_test_per_reward(tmp_path: Path) -> None:
    """reward.json's rewards are tests of their own, named by their keys."""
    script = """\
greeting=0; [ -f /app/hello.txt ] && greeting=1
polite=0; grep -q please /app/hello.txt && polite=1
printf '{"greeting": %s, "polite": %s, "notes": "by test.sh"}' $greeting $polite > /logs/verifier/reward.json
"""
    run = grade(tmp_path, script, {"hello.txt": "Hello, world!\n"})
    assert run.status == "ok", run.detail
    assert outcomes(run) == [
        ("phase1/verifier::greeting", "passed", ""),
        ("phase1/verifier::polite", "failed", "reward 0 (reward.json; the test passes at 1)"),
    ]


@needs_bubblewrap
def test_junit_in_the_results_folder_is_read(tmp_path: Path) -> None:
    """A verifier that runs a test tool writing JUnit XML into /logs/verifier reports its cases,
    and $CHANGEUP_TESTS names its tests where they are mounted."""
    script = """\
cat > /logs/verifier/junit.xml <<XML
<testsuite>
  <testcase classname="hello" name="tests_at_$(basename "$CHANGEUP_TESTS")"/>
  <testcase classname="hello" name="runs_in_$(basename "$PWD")"/>
</testsuite>
XML
"""
    run = grade(tmp_path, script)
    assert run.status == "ok", run.detail
    assert outcomes(run) == [
        ("phase1/hello::runs_in_app", "passed", ""),
        ("phase1/hello::tests_at_tests", "passed", ""),
    ]


@needs_bubblewrap
def test_a_verifier_writes_only_its_workspace_copy_its_results_and_tmp(tmp_path: Path) -> None:
    """Every other place is read-only or out of sight: the tests, the machine, the sandbox's
    root and /changeup, the challenge; what it writes in /app stays in the run's copy."""
    challenge = tmp_path / "challenge"
    allowed = ["/app/built.txt", "/logs/verifier/log.txt", "/tmp/scratch.txt"]
    refused = [
        "/tests/planted.txt",
        "/usr/planted.txt",
        "/planted.txt",
        "/logs/planted.txt",
        "/changeup/hidden/planted.txt",
        "/changeup/planted.txt",
        f"{challenge}/planted.txt",
        f"{challenge}/tests/phase1/test.sh",
        f"{tmp_path / 'ws'}/planted.txt",
    ]
    cases = "\n".join(f"try {place} {int(place in allowed)}" for place in [*allowed, *refused])
    script = f"""\
cases=""
try() {{  # try PLACE SHOULD: a passing case when writing PLACE succeeds exactly when it should
  if (echo planted > "$1") 2>/dev/null; then wrote=1; else wrote=0; fi
  case="<testcase classname=\\"writes\\" name=\\"$1\\""
  if [ "$wrote" = "$2" ]; then cases="$cases$case/>"
  else cases="$cases$case><failure message=\\"wrote=$wrote\\"/></testcase>"; fi
}}
{cases}
if ls {challenge}/tests >/dev/null 2>&1; then seen=1; else seen=0; fi
cases="$cases<testcase classname=\\"sees\\" name=\\"challenge-$seen\\"/>"
echo "<testsuite>$cases</testsuite>" > /logs/verifier/junit.xml
"""
    run = grade(tmp_path, script)
    assert run.status == "ok", run.detail
    failures = [t for t in outcomes(run) if t[1] != "passed"]
    assert failures == []
    assert len(outcomes(run)) == len(allowed) + len(refused) + 1
    assert ("phase1/sees::challenge-0", "passed", "") in outcomes(run)
    assert not (challenge / "planted.txt").exists()
    assert (challenge / "tests" / "phase1" / "test.sh").read_text() == script
    assert not (tmp_path / "ws" / "built.txt").exists()
    assert not (tmp_path / "ws" / "planted.txt").exists()


@needs_bubblewrap
def test_a_verifier_that_leaves_no_result_is_void(tmp_path: Path) -> None:
    """The command ran (the agent's code with it) and wrote no reward: tampered, with why and
    the end of its output."""
    run = grade(tmp_path, "echo checking /app\nls /app > /logs/verifier/listing.txt\nexit 1\n")
    assert run.status == "tampered"
    assert (
        "phase1's test command (exit 1) left no results: the results folder holds no JUnit XML" in run.detail
    )
    assert "its output ended: checking /app" in run.detail


@needs_bubblewrap
def test_a_malformed_reward_is_void_and_says_what_it_held(tmp_path: Path) -> None:
    """A reward that is not a number reads as no result, naming what the file held."""
    run = grade(tmp_path, "echo passed > /logs/verifier/reward.txt\n")
    assert run.status == "tampered"
    assert "reward.txt holds 'passed', not a number" in run.detail


@needs_bubblewrap
@pytest.mark.parametrize(
    ("command", "verifier", "said"),
    [
        pytest.param("no-such-toolchain /tests/test.sh", "{}", "no-such-toolchain", id="127-verifier"),
        pytest.param(
            "no-such-toolchain $CHANGEUP_TESTS/test.sh", "null", "no-such-toolchain", id="127-command"
        ),
        # the tests are copied without their modes: a script run as a program is not executable
        pytest.param("/tests/test.sh", "{}", "Permission denied", id="126-verifier"),
    ],
)
def test_a_command_that_cannot_start_is_invalid(
    tmp_path: Path, command: str, verifier: str, said: str
) -> None:
    """The shell cannot run the command's program (exit 127, or 126) and nothing was written:
    the grader's environment failed, so the run is invalid, never the agent's zero."""
    run = grade(tmp_path, HELLO, {"hello.txt": "Hello, world!\n"}, command=command, verifier=verifier)
    assert run.status == "invalid"
    assert "phase1's test command could not start (exit 12" in run.detail
    assert said in run.detail
    assert run.phases[0].passed == 0


@needs_bubblewrap
def test_a_missing_program_after_the_verifier_started_is_not_excused(tmp_path: Path) -> None:
    """Exit 127 after the verifier wrote something (it had started): void, not invalid."""
    script = "echo started > /logs/verifier/log.txt\n/app/run-me\n"
    run = grade(tmp_path, script)
    assert run.status == "tampered"
    assert "(exit 127) left no results" in run.detail


@needs_bubblewrap
def test_places_of_the_verifiers_own_choosing_are_mounted(tmp_path: Path) -> None:
    """Other absolute places work as well (a task expecting /workspace, /verifier/tests …)."""
    verifier = "{workspace: /workspace, tests: /verifier/tests, results: /tmp/results}"
    script = 'cd /workspace && [ "$PWD" = /workspace ] && cat hello.txt > /tmp/results/reward.txt\n'
    run = grade(
        tmp_path, script, {"hello.txt": "1\n"}, command="bash /verifier/tests/test.sh", verifier=verifier
    )
    assert run.status == "ok", run.detail
    assert outcomes(run) == [("phase1/verifier::reward", "passed", "")]


@needs_bubblewrap
def test_a_place_bubblewrap_cannot_make_is_invalid(tmp_path: Path) -> None:
    """A workspace inside a read-only folder of the tests' private root cannot be mounted: invalid,
    naming it."""
    run = grade(tmp_path, HELLO, verifier="{workspace: /usr/changeup-verifier-nowhere}")
    assert run.status == "invalid"
    said = "verifier.workspace: /usr/changeup-verifier-nowhere is inside /usr, a read-only folder of the"
    assert said in run.detail


def test_a_verifier_without_bubblewrap_is_invalid(tmp_path: Path) -> None:
    """A weaker sandbox cannot give the task its view: the run is invalid and says why."""
    sandbox = Sandbox("limits-only", "CHANGEUP_SANDBOX=none was set: resource limits only")
    run = grade(tmp_path, HELLO, {"hello.txt": "Hello, world!\n"}, sandbox=sandbox)
    assert run.status == "invalid"
    assert run.detail == (
        "phase1's verifier needs bubblewrap to mount its workspace at /app, tests at /tests, results at "
        "/logs/verifier; this sandbox is limits-only: CHANGEUP_SANDBOX=none was set: resource limits only"
    )


@needs_bubblewrap
def test_a_verifier_phase_runs_beside_pytest_phases_of_a_warm_runner(tmp_path: Path) -> None:
    """normalize-tags with phase 2 turned into a verifier: in one run, phase 1's pytest tests
    fork from the warm interpreter and phase 2's test.sh gets its own view of the same copy."""
    root = tmp_path / "challenge"
    shutil.copytree(REPO / "challenges" / "normalize-tags", root)
    yaml = (root / "challenge.yaml").read_text()
    declared = "    - id: phase2\n      title: drop duplicates too\n"
    (root / "challenge.yaml").write_text(
        yaml.replace(
            declared,
            declared
            + "      command: bash /tests/test.sh\n      verifier: {}\n      testing: {tools: [bash]}\n",
        )
    )
    (root / "tests" / "phase2" / "test.sh").write_text(
        'cd /app && python3 -c \'from tags import normalize_tags as n; print(int(n(["a", "a"]) == ["a"]))\''
        " > /logs/verifier/reward.txt\n"
    )
    challenge = load_challenge(root)
    workspace = Workspace.create(challenge.workspace, tmp_path / "ws", tmp_path / "shadow.git")
    shutil.copy(root / "solutions" / "reference" / "phase2" / "tags.py", workspace.path / "tags.py")
    runner = PytestRunner(challenge, workspace, tmp_path / "scratch", environment=grading_environment([]))

    async def run() -> TestRun:
        async with runner:
            assert runner.warm is not None
            return await runner.run(await workspace.snapshot(), ["phase1", "phase2"])

    result = anyio.run(run)
    assert result.status == "ok", result.detail
    phase1, phase2 = result.phases
    assert phase1.failed == 0
    assert phase1.passed > 0
    assert [(t.id, t.outcome) for t in phase2.tests] == [("phase2/verifier::reward", "passed")]


@needs_bubblewrap
def test_a_verifier_runs_the_grading_environments_python_and_pytest(tmp_path: Path) -> None:
    """python3 and the pytest script are the grading environment's, run by the verifier's user
    (the test user, as root) whatever home the interpreter lives in: pytest's JUnit XML is the
    result, and the verifier reports who it ran as and which python3 it found."""
    script = """\
cd /app
python3 -m pytest -q -p no:cacheprovider /tests/test_hello.py --junitxml=/logs/verifier/junit.xml
pytest --version > /dev/null && ran=script || ran=none
uid=$(grep ^Uid: /proc/self/status | cut -f2)
cat > /logs/verifier/who.xml <<XML
<testsuite>
  <testcase classname="who" name="uid-$uid"/>
  <testcase classname="who" name="python3-at-$(command -v python3)"/>
  <testcase classname="who" name="pytest-$ran"/>
</testsuite>
XML
"""
    test = 'def test_hello():\n    assert open("hello.txt").read() == "Hello, world!\\n"\n'
    run = grade(
        tmp_path,
        script,
        {"hello.txt": "Hello, world!\n"},
        tools="[bash, cat, grep, cut]",
        extra={"test_hello.py": test},
    )
    assert run.status == "ok", run.detail
    uid = 65532 if os.geteuid() == 0 else os.getuid()
    assert sorted(outcomes(run)) == [
        ("phase1/test_hello::test_hello", "passed", ""),
        ("phase1/who::pytest-script", "passed", ""),
        ("phase1/who::python3-at-/changeup/env/bin/python3", "passed", ""),
        (f"phase1/who::uid-{uid}", "passed", ""),
    ]


@needs_bubblewrap
def test_a_failed_reward_keeps_what_the_verifier_said(tmp_path: Path) -> None:
    """Reward 0 is a failed test whose detail ends with the verifier's own output."""
    script = (
        'echo "expected Hello, world! but found: $(cat /app/hello.txt)"\necho 0 > /logs/verifier/reward.txt\n'
    )
    run = grade(tmp_path, script, {"hello.txt": "Goodbye\n"})
    assert run.status == "ok", run.detail
    assert outcomes(run) == [
        (
            "phase1/verifier::reward",
            "failed",
            "reward 0 (reward.txt; the test passes at 1); its output ended:\n"
            "expected Hello, world! but found: Goodbye",
        )
    ]


@needs_bubblewrap
@pytest.mark.parametrize(("workdir", "made"), [("/app/src", False), ("/work", True)])
def test_the_verifier_starts_in_its_working_directory(tmp_path: Path, workdir: str, made: bool) -> None:
    """verifier.workdir (a Dockerfile's WORKDIR) is where the command starts: a folder of the
    snapshot, or one made empty for it."""
    script = f"""\
here=0; [ "$PWD" = {workdir} ] && here=1
empty=0; [ -z "$(ls -A)" ] && empty=1
case="<testcase classname=\\"start\\" name=\\"here-$here-empty-$empty\\"/>"
echo "<testsuite>$case</testsuite>" > /logs/verifier/junit.xml
"""
    files = {"src/main.py": "print(1)\n"}
    run = grade(tmp_path, script, files, verifier=f"{{workdir: {workdir}}}")
    assert run.status == "ok", run.detail
    assert outcomes(run) == [(f"phase1/start::here-1-empty-{int(made)}", "passed", "")]


@needs_bubblewrap
def test_a_test_command_sees_its_declared_tools_and_nothing_else(tmp_path: Path) -> None:
    """A plain test command's root: sh, the grading interpreter and what testing: tools names;
    no other program of the machine, and none of its folders."""
    script = """\
cases=""
for program in sh bash cat python3 git ls env; do
  case="<testcase classname=\\"has\\" name=\\"$program\\"/>"
  if command -v $program > /dev/null; then cases="$cases$case"; fi
done
for place in /home /var /opt /usr/share/doc; do
  if [ -e $place ]; then cases="$cases<testcase classname=\\"sees\\" name=\\"$place\\"/>"; fi
done
echo "<testsuite>$cases</testsuite>" > $CHANGEUP_JUNIT
"""
    run = grade(
        tmp_path, script, command="bash $CHANGEUP_TESTS/test.sh", verifier="null", tools="[bash, cat]"
    )
    assert run.status == "ok", run.detail
    assert sorted(t[0] for t in outcomes(run)) == [
        "phase1/has::bash",
        "phase1/has::cat",
        "phase1/has::python3",
        "phase1/has::sh",
    ]

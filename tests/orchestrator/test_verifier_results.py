"""What a command verifier reports, read from the files it leaves and what it wrote to its JUnit
pipe (``grading/verifier.py``).

Real files in a folder and the pipe's bytes, no subprocess: the runs themselves are in
``test_verifier_runs.py``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path, PurePosixPath

import pytest

from orchestrator.challenge.model import Verifier
from orchestrator.grading.junit import Verdict
from orchestrator.grading.sandbox import Mount, Sandbox, mount_problem
from orchestrator.grading.verifier import (
    CannotMount,
    ResultError,
    could_not_start,
    read_results,
    verifier_mounts,
    with_output,
)
from orchestrator.system.runtime import Runtime

JUNIT = '<testsuite><testcase classname="hello" name="exists"/>{more}</testsuite>'
FAILING = '<testcase classname="hello" name="greets"><failure message="no greeting"/></testcase>'


@pytest.fixture
def runtime(tmp_path: Path) -> Runtime:
    """A private runtime's folder as ``runtime.py`` lays it out: /usr, /etc and /root copied, /bin a
    link (its contents do not matter here, only its top-level entries)."""
    root = tmp_path / "runtime" / "root"
    for top in ("usr/bin", "etc", "root"):
        (root / top).mkdir(parents=True)
    (root / "bin").symlink_to("usr/bin")
    return Runtime(tmp_path / "runtime")


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """The run's output folder, where ``$CHANGEUP_JUNIT`` points."""
    (tmp_path / "out").mkdir()
    return tmp_path / "out"


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """A verifier's results folder, empty as each run gets it."""
    (tmp_path / "results").mkdir()
    return tmp_path / "results"


def read(results: Path | None, files: dict[str, str], junit: str = "") -> list[tuple[str, str, str]]:
    """Write ``files`` into ``results`` and read what the verifier of phase1 reported (``junit``:
    what it wrote to ``$CHANGEUP_JUNIT``)."""
    for name, text in files.items():
        assert results is not None
        (results / name).write_text(text)
    return [(v.id, v.outcome, v.detail) for v in read_results("phase1", junit.encode(), results)]


@pytest.mark.parametrize(
    ("text", "outcome", "detail"),
    [
        ("1", "passed", ""),
        ("1.0\n", "passed", ""),
        (" 0\n", "failed", "reward 0 (reward.txt; the test passes at 1)"),
        ("0.75", "failed", "reward 0.75 (reward.txt; the test passes at 1)"),
    ],
)
def test_reward_txt_is_one_test_passing_at_full_reward(
    results: Path, text: str, outcome: str, detail: str
) -> None:
    """reward.txt (Harbor's one number) is the test phase1/verifier::reward, passing only at 1."""
    assert read(results, {"reward.txt": text}) == [("phase1/verifier::reward", outcome, detail)]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("", "reward.txt is empty"),
        ("yes\n", "reward.txt holds 'yes', not a number"),
        ("2", "reward.txt: reward is 2.0, not a reward from 0 to 1"),
        ("-0.5", "not a reward from 0 to 1"),
        ("nan", "not a reward from 0 to 1"),
        ("inf", "not a reward from 0 to 1"),
    ],
)
def test_a_malformed_reward_txt_is_no_result(results: Path, text: str, said: str) -> None:
    """A reward.txt that holds no reward from 0 to 1 is not read as one: it says what it holds."""
    with pytest.raises(ResultError, match=re.escape(said)):
        read(results, {"reward.txt": text})


def test_reward_json_is_one_test_per_numeric_reward(results: Path) -> None:
    """Each numeric entry of reward.json is a test named by its key; the rest is passed over (as
    Harbor does), booleans included."""
    rewards = {"correctness": 1, "style": 0.5, "note": "checked by hand", "flag": True}
    assert read(results, {"reward.json": json.dumps(rewards)}) == [
        ("phase1/verifier::correctness", "passed", ""),
        ("phase1/verifier::style", "failed", "reward 0.5 (reward.json; the test passes at 1)"),
    ]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[1]", "reward.json holds a list, not an object of named rewards"),
        ("{}", "reward.json names no numeric reward"),
        ('{"reward": "1"}', "reward.json names no numeric reward"),
        ('{"reward": 1, "tests_passed": 5}', "reward.json: tests_passed is 5, not a reward from 0 to 1"),
        ('{"reward": NaN}', "not a reward from 0 to 1"),
        ('{"reward": 1e999999}', "not a reward from 0 to 1"),
        ('{"": 1}', "a reward with an empty name"),
        ("{reward: 1}", "reward.json is not JSON"),
    ],
)
def test_a_malformed_reward_json_is_no_result(results: Path, text: str, said: str) -> None:
    """A reward.json that is not an object of rewards from 0 to 1 is not read as one."""
    with pytest.raises(ResultError, match=re.escape(said)):
        read(results, {"reward.json": text})


def test_junit_in_the_results_folder_comes_first_then_reward_json_then_reward_txt(results: Path) -> None:
    """JUnit XML wins over rewards, and reward.json over reward.txt (Harbor's order)."""
    (results / "reward.txt").write_text("0")
    assert read(results, {}) == [
        ("phase1/verifier::reward", "failed", "reward 0 (reward.txt; the test passes at 1)")
    ]
    (results / "reward.json").write_text('{"reward": 1}')
    assert read(results, {}) == [("phase1/verifier::reward", "passed", "")]
    (results / "b.xml").write_text(JUNIT.format(more=FAILING))
    (results / "a.xml").write_text(JUNIT.format(more=""))
    assert read(results, {}) == [
        ("phase1/hello::exists", "passed", ""),
        ("phase1/hello::exists", "passed", ""),
        ("phase1/hello::greets", "failed", "no greeting"),
    ]


def test_changeup_junit_still_reports_for_a_verifier(results: Path) -> None:
    """A verifier may write $CHANGEUP_JUNIT like any test command; with it, no reward is read."""
    junit = JUNIT.format(more="")
    assert read(results, {"reward.txt": "0"}, junit) == [("phase1/hello::exists", "passed", "")]


def test_xml_of_another_kind_is_passed_over_but_broken_xml_is_no_result(results: Path) -> None:
    """A coverage report beside the reward is not a result; XML that does not parse voids it."""
    assert read(results, {"coverage.xml": "<coverage/>", "reward.txt": "1"}) == [
        ("phase1/verifier::reward", "passed", "")
    ]
    with pytest.raises(ResultError, match=re.escape("junit.xml is not XML")):
        read(results, {"junit.xml": "<testsuite><testcase"})


def test_changeup_junit_must_be_junit() -> None:
    """What was written for JUnit XML is not passed over when it holds other XML."""
    with pytest.raises(ResultError, match=r"CHANGEUP_JUNIT is not JUnit XML \(root element <coverage>\)"):
        read_results("phase1", b"<coverage/>")


def test_a_plain_command_reads_only_changeup_junit() -> None:
    """Without a results folder only $CHANGEUP_JUNIT counts (a plain ``command:`` phase)."""
    with pytest.raises(ResultError, match=re.escape("no JUnit XML was written to $CHANGEUP_JUNIT")):
        read_results("phase1", b"")
    assert read_results("phase1", JUNIT.format(more=FAILING).encode()) == [
        Verdict("phase1/hello::exists", "passed"),
        Verdict("phase1/hello::greets", "failed", "no greeting"),
    ]


def test_a_second_document_on_changeup_junit_is_no_result() -> None:
    """$CHANGEUP_JUNIT is one stream: a forged document before (or after) the runner's own makes
    it two, which is no result, whichever says what."""
    forged = '<testsuite><testcase classname="hello" name="greets"/></testsuite>\n'
    real = JUNIT.format(more=FAILING)
    for written in (forged + real, real + forged):
        with pytest.raises(ResultError, match=re.escape("$CHANGEUP_JUNIT is not XML: junk after document")):
            read_results("phase1", written.encode())


def test_an_empty_results_folder_says_what_was_looked_for(results: Path) -> None:
    """No result at all: the error names every file a verifier may write."""
    with pytest.raises(ResultError, match=r"no JUnit XML \(\*\.xml\), reward\.json or reward\.txt"):
        read(results, {})


@pytest.mark.parametrize("name", ["reward.txt", "reward.json", "junit.xml"])
def test_a_link_is_not_followed_out_of_the_results_folder(tmp_path: Path, results: Path, name: str) -> None:
    """A result that is a link (to a file of the machine, say) is refused, never read through."""
    secret = tmp_path / "secret"
    secret.write_text("1")
    (results / name).symlink_to(secret)
    with pytest.raises(ResultError, match=re.escape(f"{name} is not a regular file")):
        read(results, {})


def test_a_fifo_is_refused_without_blocking(results: Path) -> None:
    """A named pipe as reward.txt would block a plain read forever: it is refused at once."""
    os.mkfifo(results / "reward.txt")
    with pytest.raises(ResultError, match=re.escape("reward.txt is not a regular file")):
        read(results, {})


def test_an_oversized_reward_is_refused(results: Path) -> None:
    """A reward file is small; a huge one is refused before it is read."""
    with pytest.raises(ResultError, match="more than a result may have"):
        read(results, {"reward.txt": "1" + " " * (2 * 1024 * 1024)})


def test_could_not_start_means_the_shells_exit_and_nothing_written(results: Path) -> None:
    """Exit 126/127 with nothing written is a verifier that never started; any other exit, or
    anything written (a log, a JUnit file), means it ran."""
    assert could_not_start(127, b"", results)
    assert could_not_start(126, b"", None)
    assert not could_not_start(1, b"", results)
    assert not could_not_start(None, b"", results)  # killed: not a shell's answer
    (results / "test-stdout.txt").write_text("started\n")
    assert not could_not_start(127, b"", results)
    assert not could_not_start(127, b"<testsuite/>", None)


def test_mounts_go_where_the_verifier_says(tmp_path: Path, runtime: Runtime) -> None:
    """Workspace writable, tests read-only, results writable, at the verifier's places."""
    ws, tests, results = tmp_path / "ws", tmp_path / "tests", tmp_path / "results"
    verifier = Verifier(workspace="/app", tests="/tests", results="/logs/verifier")
    mounts = verifier_mounts(
        "phase1", verifier, Sandbox("bubblewrap"), runtime, workspace=ws, tests=tests, results=results
    )
    assert mounts == [
        Mount(ws, PurePosixPath("/app"), writable=True),
        Mount(tests, PurePosixPath("/tests")),
        Mount(results, PurePosixPath("/logs/verifier"), writable=True),
    ]


@pytest.mark.parametrize("kind", ["user", "limits-only", "none"])
def test_a_verifier_needs_bubblewrap(tmp_path: Path, kind: str) -> None:
    """A weaker sandbox cannot mount anything: the refusal names the places and the sandbox."""
    with pytest.raises(CannotMount) as refusal:
        verifier_mounts(
            "phase1",
            Verifier(),
            Sandbox(kind, "bubblewrap is not installed"),
            None,
            workspace=tmp_path,
            tests=tmp_path,
            results=tmp_path,
        )
    assert str(refusal.value) == (
        "phase1's verifier needs bubblewrap to mount its workspace at /app, tests at /tests, "
        f"results at /logs/verifier; this sandbox is {kind}: bubblewrap is not installed"
    )


def test_overlapping_places_are_refused(tmp_path: Path, runtime: Runtime) -> None:
    """Results inside the workspace (or any two places nested) would mount one over the other."""
    verifier = Verifier(workspace="/app", tests="/app", results="/app/logs")
    with pytest.raises(CannotMount) as refusal:
        verifier_mounts(
            "phase1",
            verifier,
            Sandbox("bubblewrap"),
            runtime,
            workspace=tmp_path,
            tests=tmp_path,
            results=tmp_path,
        )
    said = str(refusal.value)
    assert "verifier.workspace (/app) and verifier.tests (/app) overlap" in said
    assert "verifier.workspace (/app) and verifier.results (/app/logs) overlap" in said
    assert "verifier.tests (/app) and verifier.results (/app/logs) overlap" in said


def test_mount_points_are_refused_where_bubblewrap_cannot_make_them(runtime: Runtime) -> None:
    """A mount point can be made in the sandbox's own root or /tmp; not inside a read-only folder
    of the private runtime (nor through its links), nor in the sandbox's own folders."""
    assert mount_problem(PurePosixPath("/changeup-verifier-nowhere/app"), runtime) == ""
    assert mount_problem(PurePosixPath("/tmp/app"), runtime) == ""
    assert mount_problem(PurePosixPath("/app"), runtime) == ""
    for held in ("/usr/app", "/bin/app", "/etc/app", "/root/app"):
        said = mount_problem(PurePosixPath(held), runtime)
        assert "a read-only folder of the tests' private root" in said
        assert "none of /bin, /etc, /root, /usr" in said
    for made in ("/proc/app", "/dev/app", "/changeup/ws"):
        assert "which the sandbox makes itself" in mount_problem(PurePosixPath(made), runtime)
    assert "not an absolute folder" in mount_problem(PurePosixPath("/"), runtime)
    assert "not an absolute folder" in mount_problem(PurePosixPath("/app/../etc"), runtime)


@pytest.mark.parametrize(
    ("verifier", "key"),
    [
        pytest.param(Verifier(workspace="/usr/changeup-verifier-nowhere"), "workspace", id="workspace"),
        pytest.param(Verifier(workdir="/usr/changeup-verifier-nowhere"), "workdir", id="workdir"),
    ],
)
def test_a_bad_place_is_named_by_its_key(
    tmp_path: Path, runtime: Runtime, verifier: Verifier, key: str
) -> None:
    """A place bubblewrap cannot mount (or make, for a working directory outside the mounts) is
    refused with the verifier key that names it."""
    with pytest.raises(CannotMount, match=rf"verifier\.{key}: /usr/changeup-verifier-nowhere is inside /usr"):
        verifier_mounts(
            "phase1",
            verifier,
            Sandbox("bubblewrap"),
            runtime,
            workspace=tmp_path,
            tests=tmp_path,
            results=tmp_path,
        )


def test_a_working_directory_inside_a_mount_is_no_mount_of_its_own(tmp_path: Path, runtime: Runtime) -> None:
    """A WORKDIR inside the workspace (/app/src) is the snapshot's, not a place to check."""
    verifier = Verifier(workdir="/app/src")
    mounts = verifier_mounts(
        "phase1",
        verifier,
        Sandbox("bubblewrap"),
        runtime,
        workspace=tmp_path,
        tests=tmp_path,
        results=tmp_path,
    )
    assert [m.dest for m in mounts] == [PurePosixPath(p) for p in ("/app", "/tests", "/logs/verifier")]


def test_a_failed_reward_keeps_the_end_of_the_output() -> None:
    """A reward is only a number: a failed one keeps the output's last lines (bounded); a passed
    reward and a JUnit case keep their own words."""
    verdicts = [
        Verdict("phase1/verifier::reward", "failed", "reward 0 (reward.txt; the test passes at 1)"),
        Verdict("phase1/verifier::style", "passed"),
        Verdict("phase1/hello::greets", "failed", "no greeting"),
    ]
    output = "\n".join(f"line {n}" for n in range(100)) + "\nE   assert 'Goodbye' == 'Hello'\n"
    kept = with_output(verdicts, output)
    assert kept[0].detail.startswith(
        "reward 0 (reward.txt; the test passes at 1); its output ended:\nline 81\n"
    )
    assert kept[0].detail.endswith("E   assert 'Goodbye' == 'Hello'")
    assert kept[1:] == verdicts[1:]
    huge = with_output(verdicts[:1], "x" * 100_000)
    assert len(huge[0].detail) < 2200
    assert with_output(verdicts, "  \n") == verdicts

"""Matrices end to end, with real sessions: killed and resumed, the v6/v7 decision, blind review.

The kill is placed by what the attempts log has acknowledged, not by a clock: once six
attempts have finished and another is still in its session, the driver's process group is
SIGKILLed. So every run of this test kills a matrix halfway with a session in flight.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from orchestrator.log.comparison import load_comparison
from orchestrator.log.matrix_manifest import load_matrix_manifest
from orchestrator.render.inert import json_text
from tests.cli import CHANGEUP, REPO, changeup, environment
from tests.e2e.test_html_report import load, overflow
from tests.matrix.samples import SHIPPED

# Each test runs whole matrices (the fixture's too): a loaded 2-core machine needs the room.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

#: 2 challenges x 2 scripted agents x 3 trials, 4 at a time: the fastest challenges of the library.
MATRIX = [
    "run",
    "challenges/normalize-tags",
    "challenges/export-time",
    "--agent",
    "scripted",
    "--agent",
    "impostor:always-equal",
    "--trials",
    "3",
    "--concurrency",
    "4",
    "-q",
]
#: What differs between two comparisons of the same outcomes (docs/compare.md): timings, provenance.
VOLATILE = {"provenance", "attempt", "run", "frozen_at", "at"}


def outcomes(value: Any) -> Any:
    """``value`` without timings (keys ending _seconds, frozen_at, at) and provenance."""
    if isinstance(value, dict):
        return {k: outcomes(v) for k, v in value.items() if k not in VOLATILE and not k.endswith("_seconds")}
    if isinstance(value, list):
        return [outcomes(v) for v in value]
    return value


def log_of(results: Path) -> list[dict[str, Any]]:
    """The attempts log's records as they are on disk (a torn last line left out)."""
    path = results / "attempts.jsonl"
    if not path.exists():
        return []
    lines = path.read_text().split("\n")[1:-1]  # the last piece is "" or a line still being written
    return [json.loads(line) for line in lines]


def in_flight(results: Path, records: list[dict[str, Any]]) -> list[str]:
    """Run folders of attempts started, not finished, whose session has not ended yet."""
    done = {r["attempt"] for r in records if r["event"] == "finished"}
    running = [r["run"] for r in records if r["event"] == "started" and r["attempt"] not in done]
    events = [results / run / "events.jsonl" for run in running]
    return [str(e) for e in events if e.is_file() and '"session.ended"' not in e.read_text(errors="replace")]


def test_a_matrix_killed_halfway_and_resumed_compares_as_an_uninterrupted_one(tmp_path: Path) -> None:
    """SIGKILL with 6 of 12 attempts acknowledged and a session in flight, then the same command:
    the interrupted attempts run again (their folders kept), and compare.json equals that of a
    matrix run without a kill, timings and provenance aside."""
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    done = changeup(*MATRIX, "--out", str(whole), timeout=600)
    assert done.returncode == 0, done.stderr
    process = subprocess.Popen(
        [*CHANGEUP, *MATRIX, "--out", str(killed)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=environment(),
    )
    try:
        deadline = time.monotonic() + 600  # a bound on a stuck run, never a condition of the test
        while True:
            records = log_of(killed)
            flying = in_flight(killed, records)
            if sum(r["event"] == "finished" for r in records) >= 6 and flying:
                break
            assert process.poll() is None, "the matrix ended before it could be killed halfway"
            assert time.monotonic() < deadline, "the matrix never got halfway"
            time.sleep(0.01)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
    at_kill = log_of(killed)
    finished = {r["attempt"] for r in at_kill if r["event"] == "finished"}
    cut = [r for r in at_kill if r["event"] == "started" and r["attempt"] not in finished]
    assert 6 <= len(finished) < 12
    assert cut

    resumed = changeup(*MATRIX, "--out", str(killed), timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stderr.count("never ended: recorded as interrupted") == len(cut)
    ours = json.loads((killed / "compare.json").read_text())
    theirs = json.loads((whole / "compare.json").read_text())
    assert outcomes(ours) == outcomes(theirs)
    provenance = ours["provenance"]
    assert provenance["interrupted"] == len(cut)
    reruns = {a["retry_of"]: a for a in provenance["attempts"] if a["reason"] == "interrupted"}
    for attempt in cut:
        assert reruns[attempt["attempt"]]["status"] == "completed"
    assert all(Path(events).is_file() for events in flying)  # the interrupted sessions' logs are kept
    assert len(provenance["attempts"]) == 12 + len(cut)

    again = changeup(*MATRIX, "--out", str(killed), timeout=600)  # done: nothing runs again
    assert again.returncode == 0, again.stderr
    assert len(json.loads((killed / "compare.json").read_text())["provenance"]["attempts"]) == 12 + len(cut)


@pytest.fixture(scope="module")
def v6_v7(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The worked example of docs/compare.md, as shipped, run once: its RESULTS (copy them to change them)."""
    folder = tmp_path_factory.mktemp("v6-v7")
    results = folder / "results"
    done = changeup(
        "run",
        "--matrix",
        str(SHIPPED),
        "--out",
        str(results),
        "--concurrency",
        "2",
        "-q",
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    (results / "run.stdout").write_text(done.stdout)
    return results


def test_the_v6_v7_decision_is_do_not_switch_naming_the_deciding_attempt(v6_v7: Path) -> None:
    """v7 passes every test on every trial (v6's trial 2 breaks a preserved access test), but its
    trial 3 weakens an authorization assertion: "any critical failure blocks" says do not switch,
    naming that trial."""
    comparison = json.loads((v6_v7 / "compare.json").read_text())
    v6, v7 = comparison["cells"]
    assert (v7["regressions"], v6["regressions"]) == (0, 1)  # v7 is functionally better
    assert (v7["changed_passes"], v6["changed_passes"]) == (3, 3)
    assert (v7["full_successes"], v6["full_successes"]) == (2, 2)
    decision = comparison["decision"]
    assert (decision["verdict"], decision["deciding_rule"], decision["provisional"]) == (
        "do not switch",
        "critical_failure_blocks",
        True,
    )
    (deciding,) = decision["deciding"]
    assert (deciding["agent"], deciding["trial"]) == ("v7", 3)
    (criterion,) = deciding["criteria"]
    assert criterion["criterion"] == "protection"
    assert "assert r.status_code in (200, 401)" in criterion["findings"][0]
    report = json.loads((v6_v7 / deciding["run"] / "report.json").read_text())
    assert report["run"]["agent"] == "scripted:broken/loosens-assertion"
    printed = (v6_v7 / "run.stdout").read_text()
    assert "Verdict: DO NOT SWITCH (provisional)" in printed
    assert deciding["run"] in printed


def test_blind_review_hides_who_and_confirming_settles_the_verdict(v6_v7: Path, tmp_path: Path) -> None:
    """`changeup review` shows the flagged diff, not the agent, trial or run; a confirmation with
    a reason is kept, and compare's verdict is no longer provisional."""
    results = tmp_path / "results"
    shutil.copytree(v6_v7, results)
    # Piped input that ends at once stops the review as quit does: no "Aborted!", nothing decided,
    # and the piped divider is a line's width, not the unbounded console's thousands of characters.
    ended = subprocess.run(
        [*CHANGEUP, "review", str(results)],
        input="",
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env=environment(),
        check=False,
    )
    assert ended.returncode == 0, ended.stderr
    assert "Aborted!" not in ended.stdout + ended.stderr
    assert "input ended: stopping, as for quit" in ended.stdout
    assert "0 decided, 1 pending" in ended.stdout
    (divider,) = [line for line in ended.stdout.splitlines() if "item 1 of 1" in line]
    assert len(divider) == 80
    assert (
        not (results / "reviews.jsonl").exists()
        or len((results / "reviews.jsonl").read_text().splitlines()) <= 1
    )
    done = subprocess.run(
        [*CHANGEUP, "review", str(results)],
        input="c\nthe 401 check now accepts 200\n",
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env=environment(),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "item 1 of 1" in done.stdout
    assert "+    assert r.status_code in (200, 401)" in done.stdout
    for hidden in ("v7", "v6", "trial", "runs/", "loosens"):
        assert hidden not in done.stdout, hidden
    (review,) = [json.loads(line) for line in (results / "reviews.jsonl").read_text().splitlines()[1:]]
    assert (review["decision"], review["reason"]) == ("confirm", "the 401 check now accepts 200")
    compared = changeup("compare", str(results))
    assert compared.returncode == 0, compared.stderr
    decision = json.loads((results / "compare.json").read_text())["decision"]
    assert (decision["verdict"], decision["provisional"]) == ("do not switch", False)
    assert decision["deciding"][0]["criteria"][0]["review"] == "confirmed"


def test_the_comparison_page_loads_cleanly_with_every_agent_and_challenge(
    v6_v7: Path, tmp_path: Path
) -> None:
    """compare.html in headless Chromium: no console message, its script ran, and every agent and
    challenge of the matrix is on the page; nothing is fetched from the network."""
    dom, console = load(v6_v7 / "compare.html", tmp_path / "profile")
    assert console == []
    assert 'data-ready="yes"' in dom
    comparison = json.loads((v6_v7 / "compare.json").read_text())
    for agent in comparison["matrix"]["agents"]:
        assert f'<span class="agent-filter" data-agent="{agent["name"]}">' in dom
        assert f'<tr data-agent="{agent["name"]}"' in dom
    for challenge in comparison["matrix"]["challenges"]:
        assert f'data-challenge="{challenge["id"]}"' in dom
    assert 'data-verdict="do not switch"' in dom
    assert "http://" not in dom
    assert "https://" not in dom
    assert overflow(v6_v7 / "compare.html", tmp_path / "profile") <= 0


def test_a_real_matrixs_compare_json_and_manifest_json_validate_against_their_schemas(v6_v7: Path) -> None:
    """The files a real matrix wrote (scripted sessions, a decision rule, a pending critical failure)
    validate against docs/schemas/, and their readers read them back to the same bytes."""
    for name, file_name in (
        ("compare.json", "compare.schema.json"),
        ("manifest.json", "matrix-manifest.schema.json"),
    ):
        schema = json.loads((REPO / "docs" / "schemas" / file_name).read_text())
        jsonschema.Draft202012Validator(schema).validate(json.loads((v6_v7 / name).read_text()))
    compare = load_comparison(v6_v7 / "compare.json")
    assert compare.decision is not None
    assert compare.decision.verdict == "do not switch"
    assert (
        json_text(compare.json_form(), indent=2, ensure_ascii=False) + "\n"
        == (v6_v7 / "compare.json").read_text()
    )
    manifest = load_matrix_manifest(v6_v7 / "manifest.json")
    assert manifest.to_json() == (v6_v7 / "manifest.json").read_text()

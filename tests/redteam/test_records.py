"""The red team against what changeup records and shows: results the code under test forges,
records an agent sizes, and text that acts on a terminal, a browser or a Markdown viewer.

Real sessions through the CLI: a ``command:`` phase whose code under test forges its JUnit
(tests/fixtures/redteam-command), and an agent that feeds every record what grows and what
paints (tests/fixtures/redteam-agents/floods_records.py), then ``show``, ``report`` and
``replay`` of its run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from orchestrator.agents.transcript import INLINE_CHARS
from tests.cli import CHANGEUP, REPO, changeup, environment
from tests.redteam.common import (
    AGENTS,
    DETECTED,
    NEUTRALISED,
    TARGET,
    needs_bubblewrap,
    outcome,
    records,
    run,
)

pytestmark = pytest.mark.slow

COMMAND = REPO / "tests" / "fixtures" / "redteam-command"
#: What no rendering may pass on raw: escape and control characters, C1, bidi overrides.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: The most the flooding run's log may hold (it holds about 0.3 MB; see the test).
LOG_BOUND = 2 * 1024 * 1024
#: The most memory changeup itself may reach in the flooding run (it reaches about 60 MiB), and
#: the largest process it starts (git's heap is limited to 256 MiB when it reads the agent's history).
OWN_BOUND_KIB = 256 * 1024
CHILD_BOUND_KIB = 512 * 1024


@needs_bubblewrap
@pytest.mark.parametrize(
    ("attack", "expected"),
    [
        ("forges-at-import", {DETECTED}),  # its document and the runner's: two on one pipe
        ("forges-at-exit", {DETECTED}),  # after the runner's document: two again
        ("forges-later", {DETECTED, NEUTRALISED}),  # killed with the runner, or a second document
    ],
)
def test_forged_command_results_are_caught(tmp_path: Path, attack: str, expected: set[str]) -> None:
    """Code under test that writes passing JUnit to $CHANGEUP_JUNIT beside the test runner's own
    (at import, at exit, from a process left behind) never scores."""
    report, folder = run(COMMAND, f"scripted:broken/{attack}", tmp_path)
    assert outcome(report) in expected, report["score"]["grading_detail"]
    graded = [r for r in records(folder) if r["kind"] == "session.graded"]
    assert graded
    assert all(p["passed"] == 0 for p in graded[0]["phases"])


@needs_bubblewrap
def test_the_honest_reference_passes_the_command_phase(tmp_path: Path) -> None:
    """The runner's own JUnit through the pipe grades the reference at full marks."""
    report, _ = run(COMMAND, "scripted:reference", tmp_path)
    assert report["score"]["full_success"], report["score"]


@needs_bubblewrap
@pytest.mark.xfail(
    strict=True,
    reason="known limit: code that runs in the test runner's own process can write a passing "
    "document and end the process before the runner writes its own (docs/threat-model.md)",
)
def test_a_forgery_inside_the_runners_process_that_exits_first(tmp_path: Path) -> None:
    """One passing document and exit 0, from inside the runner: indistinguishable from the runner."""
    report, _ = run(COMMAND, "scripted:broken/forges-and-exits", tmp_path)
    assert outcome(report) in (DETECTED, NEUTRALISED)


#: ``changeup`` in a process that says, as it ends, the peak resident memory (KiB) of itself
#: (its own ``VmHWM``: ``ru_maxrss`` would inherit the RSS of the process that started it, here
#: pytest's, across ``exec``) and of the largest process it waited for (git, the tests, the agent).
_MEASURED = """
import re, resource, sys
from orchestrator.present.cli import cli
try:
    cli.main(sys.argv[1:], prog_name="changeup")
finally:
    with open("/proc/self/status") as status:
        own = re.search(r"VmHWM:\\s+(\\d+) kB", status.read()).group(1)
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"MEASURED {own} {children}", file=sys.stderr)
"""


def _measured(*args: str, timeout: float) -> tuple[subprocess.CompletedProcess[str], int, int]:
    """``changeup ARGS``; the peak memory (KiB) of changeup itself, and of its largest child."""
    done = subprocess.run(
        [CHANGEUP[0], "-c", _MEASURED, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=environment(),
    )
    found = re.search(r"MEASURED (\d+) (\d+)", done.stderr)
    assert found is not None, done.stderr[-3000:]
    return done, int(found.group(1)), int(found.group(2))


def _inert_markdown(markdown: str) -> None:
    """``markdown`` renders to no HTML of the agent's: no script, no link, no raw tag."""
    rendered = MarkdownIt("commonmark").enable("table").render(markdown)
    assert "<script" not in rendered
    assert "href=" not in rendered
    assert "javascript:" not in re.sub(r"javascript:alert\(1\)", "", rendered)  # shown as text only
    assert set(re.findall(r"<(\w+)", rendered)) <= {"h1", "h2", "h3", "p", "ul", "li", "strong", "em"} | {
        "table", "thead", "tbody", "tr", "th", "td", "blockquote", "code", "pre"
    }  # fmt: skip


@needs_bubblewrap
def test_a_flood_of_records_stays_small_and_inert(tmp_path: Path) -> None:
    """A few KiB of git store holding 5,000 commits, a 64 MiB subject and a 512 MiB one, a file name
    of 250 bytes of escapes, 4 MiB of output painting a fake result: the session completes, its log
    stays small, changeup's memory bounded, and show, report and replay finish with inert output."""
    challenge = tmp_path / "challenge"
    shutil.copytree(TARGET, challenge)
    yaml = challenge / "challenge.yaml"
    yaml.write_text(yaml.read_text().replace("  limits:\n", "  allowed_paths: [adder.py]\n  limits:\n"))
    agent = f"command:python3 {AGENTS / 'floods_records.py'}"
    out = tmp_path / "runs"
    done, own, child = _measured(
        "run",
        str(challenge),
        "--agent",
        agent,
        "--agent-share",
        str(AGENTS),
        "--out",
        str(out),
        "-q",
        timeout=300,
    )
    folders = sorted(out.iterdir())
    assert len(folders) == 1, done.stderr[-3000:]
    folder = folders[0]
    report = json.loads((folder / "report.json").read_text())
    assert report["run"]["status"] == "completed", report["run"]["detail"]
    size = (folder / "events.jsonl").stat().st_size
    print(
        f"\nflood run: log {size:,} bytes; peak memory: changeup {own:,} KiB, its largest child {child:,} KiB"
    )
    assert size < LOG_BOUND
    assert own < OWN_BOUND_KIB
    assert child < CHILD_BOUND_KIB
    log = records(folder)

    commits = [r for r in log if r["kind"] == "git.commit"]
    assert len(commits) <= 1000 + 2  # the newest 1,000 of the batch, then one commit a batch
    assert max(r.get("omitted", 0) for r in commits) >= 3000
    big = [r["message"] for r in commits if "truncated:" in r["message"]]
    assert big
    assert all(len(m) <= 1024 for m in big)
    assert re.search(r"… \[truncated: 67,108,\d{3} bytes\]$", big[0])
    said = "".join(r["text"] for r in log if r["kind"] == "agent.output")
    assert len(said) <= INLINE_CHARS + 200
    assert "more characters of this turn's output were left out of the log" in said
    raw = (folder / "events.jsonl").read_text(encoding="utf-8")
    assert not RAW.search(raw)  # written escaped, so printing the log is inert too

    for args in (["show", str(folder)], ["show", "--all", str(folder)], ["replay", str(folder)]):
        shown = changeup(*args, timeout=300)
        assert shown.returncode == 0, shown.stderr[-2000:]
        assert not RAW.search(shown.stdout), args
        assert "\\x1b[32m✓ tests #9: phase1" in shown.stdout or args[0] == "replay"
    timeline = changeup("show", str(folder)).stdout
    # No line of show starts as the agent's forged test line would.
    assert not any(line.lstrip().startswith("✓ tests #9") for line in timeline.splitlines())
    assert changeup("report", str(folder), timeout=300).returncode == 0
    for name in ("report.md", "report.html", "report.json"):
        assert not RAW.search((folder / name).read_text(encoding="utf-8")), name
    markdown = (folder / "report.md").read_text()
    assert "\\<script\\>alert(1)" in markdown  # the file name, in the scope section, as text
    _inert_markdown(markdown)
    page = (folder / "report.html").read_text()
    assert "&lt;script&gt;alert(1)" in page
    assert "<script>alert" not in page
    assert os.path.getsize(folder / "report.json") < LOG_BOUND

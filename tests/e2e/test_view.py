"""``changeup view`` in a real headless Chromium: the suite's own run and the v6-v7 matrix render
without console errors, show their main elements, fit 1400 px, and the server serves them."""

from __future__ import annotations

import copy
import re
import shutil
import signal
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from orchestrator.log.report import load_report
from orchestrator.render.view_pair import PAIR_SCRIPT, pair_html, track
from orchestrator.render.view_site import page
from tests.cli import CHANGEUP, REPO, changeup, environment
from tests.matrix.samples import results_of

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
    "--window-size=1400,1000",
    "--allow-file-access-from-files",  # the overflow check reads its framed page (file:// is no origin)
    "--virtual-time-budget=10000",  # wait for the frame to load before the DOM is dumped
]
#: Where screenshots go: CI keeps runs/ as artifacts.
SHOTS = REPO / "runs" / "view-screenshots"

#: Frames the page named after ``#`` at 1400 px and notes on its own body whether that page's
#: document is wider than its frame, and whether the page's script ran to its end.
CHECK = """<!doctype html><html><body style="margin:0">
<iframe id="f" style="width:1400px;height:900px;border:0"></iframe><script>
var f = document.getElementById('f');
f.addEventListener('load', function () {
  var d = f.contentDocument.documentElement;
  document.body.dataset.overflow = d.scrollWidth > d.clientWidth ? d.scrollWidth + '>' + d.clientWidth : 'no';
  document.body.dataset.framed = f.contentDocument.body.dataset.ready || 'not ready';
});
f.src = location.hash.slice(1);
</script></body></html>"""


def chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    """Chromium headless with ``args``; its console messages are on standard error."""
    if CHROMIUM is None:
        pytest.skip("LOUD SKIP: no chromium on this machine; .ci/run installs Debian's chromium package")
    done = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def look(site: Path, page: str, profile: Path, shot: str) -> tuple[str, list[str], str]:
    """The DOM of ``page`` after its script ran, its console messages, and what the overflow check
    saw of it at 1400 px (``no``, or ``scrollWidth>clientWidth``); a screenshot is kept as ``shot``."""
    done = chromium("--dump-dom", (site / page).as_uri(), profile=profile)
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    (site / "check.html").write_text(CHECK)
    checked = chromium("--dump-dom", f"{(site / 'check.html').as_uri()}#{page}", profile=profile).stdout
    body = re.search(r"<body[^>]*>", checked)
    assert body is not None, checked[:500]
    assert 'data-framed="yes"' in body.group(), checked[:500]
    overflow = re.search(r'data-overflow="([^"]*)"', body.group())
    assert overflow is not None
    SHOTS.mkdir(parents=True, exist_ok=True)
    chromium(f"--screenshot={SHOTS / shot}", (site / page).as_uri(), profile=profile)
    assert (SHOTS / shot).stat().st_size > 0
    return done.stdout, console, overflow.group(1)


def test_view_renders_the_suites_run_and_the_v6_v7_matrix(tmp_path: Path, recorded: Path) -> None:
    """Index, run page and matrix page: no console message, their script ran, their main elements
    are there (a band per phase, every fired trigger, the snapshot scrubber with a diff, the
    decision, both forest plots, trials linked to run pages, two trials side by side), and none is
    wider than 1400 px."""
    roots = tmp_path / "roots"
    shutil.copytree(recorded, roots / recorded.name, symlinks=True)
    (roots / "matrix").mkdir()
    results, _ = results_of(roots / "matrix")
    assert changeup("compare", str(results)).returncode == 0
    site = tmp_path / "site"
    done = changeup("view", str(roots), "--out", str(site))
    assert done.returncode == 0, done.stderr
    assert "8 pages written" in done.stdout  # the real run, six trials, the matrix

    index, console, overflow = look(site, "index.html", tmp_path / "profile", "index.png")
    assert console == []
    assert overflow == "no"
    assert 'data-ready="yes"' in index
    assert index.count('data-kind="run"') == 7
    assert index.count('data-kind="matrix"') == 1
    assert "8 of 8 shown" in index  # the filter script ran over every row
    assert 'data-agent="v6, v7" data-status="do not switch"' in index  # the matrix's row

    run_page = re.search(rf'href="(runs/{re.escape(recorded.name)}-[0-9a-f]+\.html)"', index)
    assert run_page is not None
    dom, console, overflow = look(site, run_page.group(1), tmp_path / "profile", "run.png")
    assert console == []
    assert overflow == "no"
    assert 'data-ready="yes"' in dom
    for phase in ("phase1", "phase2"):
        assert f'class="band" data-phase="{phase}"' in dom
    assert '<g class="trigger" data-trigger="revision">' in dom
    assert '<g class="commit">' in dom
    assert 'class="snap mark"' in dom
    assert 'id="scrubber"' in dom
    assert "diff --git a/export_time.py b/export_time.py" in dom  # snapshot 1's diff, from shadow.git
    assert "not run → passed" in dom  # and its verdicts that changed
    assert 'id="message-2"' in dom  # the revision's message, whole
    fired = r'<tr data-trigger-row="revision"><td>revision</td><td>\d+\.\d s</td><td>phase1_tests_pass held'
    assert re.search(fired, dom)  # when it fired, and why
    assert '<tr data-phase-row="phase2">' in dom

    matrix_page = re.search(r'href="(matrices/results-[0-9a-f]+\.html)"', index)
    assert matrix_page is not None
    dom, console, overflow = look(site, matrix_page.group(1), tmp_path / "profile", "matrix.png")
    assert console == []
    assert overflow == "no"
    assert 'id="decision"' in dom
    assert "do not switch" in dom
    assert 'id="forest-rates"' in dom
    assert 'id="forest-differences"' in dom
    assert 'class="pair-mark"' in dom  # two trials drawn side by side by the page's script
    trials = re.findall(r'<a class="trial" href="\.\./(runs/[^"]+)"', dom)
    assert len(trials) == 6
    assert all((site / trial).is_file() for trial in trials)


def test_the_overflow_check_sees_a_page_too_wide(tmp_path: Path) -> None:
    """The check above can fail: a page 3000 px wide is reported as wider than its frame."""
    (tmp_path / "wide.html").write_text(
        '<html><body><div style="width:3000px">wide</div><script>document.body.dataset.ready="yes"</script>'
        "</body></html>"
    )
    _, _, overflow = look(tmp_path, "wide.html", tmp_path / "profile", "too-wide.png")
    assert overflow.startswith("3")


def test_view_serves_the_pages_on_loopback_until_interrupted(recorded: Path) -> None:
    """Without --out: the address is printed, the index and a run page come back over HTTP from
    127.0.0.1 under the printed token (nothing without it, no folder listed), and Ctrl-C stops it."""
    server = subprocess.Popen(
        [*CHANGEUP, "view", str(recorded.parent)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(),
    )
    try:
        assert server.stdout is not None
        line = ""
        while "serving" not in line:
            line = server.stdout.readline()
            assert line, server.stderr.read() if server.stderr else ""
        url = re.search(r"http://127\.0\.0\.1:\d+/[A-Za-z0-9_-]{24}/index\.html", line)
        assert url is not None, line
        with urllib.request.urlopen(url.group(), timeout=30) as response:
            index = response.read().decode()
        page = re.search(r'href="(runs/[^"]+)"', index)
        assert page is not None
        with urllib.request.urlopen(url.group().replace("index.html", page.group(1)), timeout=30) as response:
            assert 'id="timeline"' in response.read().decode()
        root = url.group().split("/")
        for guess in ("/", "/index.html", f"/{root[3][:-1]}/index.html"):  # no listing, no page off the token
            with pytest.raises(urllib.error.HTTPError, match="404"):
                urllib.request.urlopen(f"{root[0]}//{root[2]}{guess}", timeout=30)
    finally:
        server.send_signal(signal.SIGINT)
        out, _ = server.communicate(timeout=60)
    assert server.returncode == 0
    assert "stopped" in out


def test_two_trials_are_aligned_at_the_same_trigger(tmp_path: Path, recorded: Path) -> None:
    """A trial and a copy of it 5 s later: aligned at ``revision``, its firing is drawn at the
    same place in both rows (and, aligned at the start, it is not)."""
    one = track(load_report(recorded / "report.json"))
    later = copy.deepcopy(one)
    for mark in later["marks"]:
        mark[0] += 5
    later["fired"] = {name: at + 5 for name, at in later["fired"].items()}
    later["end"] += 5
    (tmp_path / "pair.html").write_text(
        page("pair", pair_html({"a": one, "b": later}, "a", "b"), PAIR_SCRIPT)
    )
    done = chromium("--dump-dom", (tmp_path / "pair.html").as_uri(), profile=tmp_path / "profile")
    assert [line for line in done.stderr.splitlines() if ":CONSOLE" in line] == []
    fired = re.findall(r'<line x1="([\d.]+)"[^>]*stroke="#d62728"', done.stdout)
    assert len(fired) == 2
    assert fired[0] == fired[1]
    aligned = (tmp_path / "pair.html").read_text().replace('value="revision" selected', 'value="revision"')
    (tmp_path / "start.html").write_text(aligned)
    done = chromium("--dump-dom", (tmp_path / "start.html").as_uri(), profile=tmp_path / "profile")
    fired = re.findall(r'<line x1="([\d.]+)"[^>]*stroke="#d62728"', done.stdout)
    assert len(fired) == 2
    assert fired[0] != fired[1]

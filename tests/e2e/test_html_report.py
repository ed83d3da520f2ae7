"""report.html in a real headless Chromium: it loads cleanly and shows every trigger that fired."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli import REPO, changeup

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
]


def load(page: Path, profile: Path) -> tuple[str, list[str]]:
    """The DOM after the page ran, and every console message it produced."""
    if CHROMIUM is None:
        pytest.skip("LOUD SKIP: no chromium on this machine; .ci/run installs Debian's chromium package")
    done = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, [line for line in done.stderr.splitlines() if ":CONSOLE" in line]


#: Appended to a copy of a page: how far the page overflows its window across, once laid out.
MEASURE = (
    "<script>window.addEventListener('load', function () { var d = document.documentElement;"
    " document.body.dataset.overflow = String(d.scrollWidth - d.clientWidth); });</script>"
)


def overflow(page: Path, profile: Path, width: int = 1400) -> int:
    """How many pixels ``page`` overflows a ``width``-pixel window across (0: it fits), measured in
    a copy of it so the page itself stays as written."""
    if CHROMIUM is None:
        pytest.skip("LOUD SKIP: no chromium on this machine; .ci/run installs Debian's chromium package")
    measured = page.with_name(f"measured-{page.name}")
    measured.write_text(page.read_text() + MEASURE)
    window = f"--window-size={width},1000"
    done = subprocess.run(
        [CHROMIUM, *FLAGS, window, f"--user-data-dir={profile}", "--dump-dom", measured.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    measured.unlink()
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'data-overflow="(-?\d+)"', done.stdout)
    assert found, "the measuring script did not run"
    return int(found.group(1))


@pytest.mark.parametrize(
    ("challenge", "agent"),
    [("export-time", "scripted"), ("normalize-tags", "scripted:broken/sorted-set")],
)
def test_report_html_loads_without_console_errors_and_shows_every_trigger(
    tmp_path: Path, challenge: str, agent: str
) -> None:
    """No console message at all, the page's script ran, and each fired trigger has its marker."""
    done = changeup(
        "run", f"challenges/{challenge}", "--agent", agent, "--out", str(tmp_path), "--quiet", cwd=REPO
    )
    folder = next(tmp_path.iterdir())
    report = json.loads((folder / "report.json").read_text())
    dom, console = load(folder / "report.html", tmp_path / "profile")
    assert console == []
    assert 'data-ready="yes"' in dom
    fired = [t["id"] for t in report["triggers"] if t["fired"]]
    assert fired
    for trigger in fired:
        assert re.search(rf'<g class="trigger" data-trigger="{trigger}"', dom), trigger
    for phase in report["phases"]:
        assert f'data-phase="{phase["id"]}"' in dom
    assert "http://" not in dom.replace("http://www.w3.org/2000/svg", "")
    assert overflow(folder / "report.html", tmp_path / "profile") <= 0
    assert done.returncode == 0, done.stderr  # graded cleanly, whatever the score


def test_broken_page_would_be_caught(tmp_path: Path) -> None:
    """The harness itself sees a console error and a page wider than its window when there is one
    (so the tests above can fail)."""
    page = tmp_path / "broken.html"
    page.write_text("<html><body><script>undefinedFunction();</script></body></html>")
    _, console = load(page, tmp_path / "profile")
    assert any("undefinedFunction" in line for line in console)
    wide = tmp_path / "wide.html"
    wide.write_text('<html><body><table><tr><td style="min-width: 2000px">x</td></tr></table></body></html>')
    assert overflow(wide, tmp_path / "profile") > 0


def test_report_html_explains_itself_messages_legend_score_and_superseded_tests(tmp_path: Path) -> None:
    """The page shows each message whole (open), the timeline's legend, commits and test runs, the score's
    arithmetic and the superseded tests, as report.md does."""
    done = changeup("run", "challenges/export-time", "--out", str(tmp_path), "--quiet", cwd=REPO)
    assert done.returncode == 0, done.stderr
    folder = next(tmp_path.iterdir())
    report = json.loads((folder / "report.json").read_text())
    dom, console = load(folder / "report.html", tmp_path / "profile")
    assert console == []
    for message in report["messages"]:
        assert f'<details class="message" data-message="{message["number"]}" open="">' in dom
    assert report["messages"][1]["text"].splitlines()[-1] in dom
    assert "Across: session time since the start" in dom
    assert 'class="commit"' in dom
    assert 'class="test-run"' in dom
    assert "100% = (1 * 100% + 2 * 100%) / 3: the weighted mean of the phases' scores." in dom
    for test in report["phases"][1]["superseded"]:
        assert f"<li><code>{test}</code> (replaced by phase2)</li>" in dom
    assert "3/3 (2 superseded)" in dom

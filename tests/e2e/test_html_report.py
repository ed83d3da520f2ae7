"""report.html in a real headless Chromium: it loads cleanly and shows every trigger that fired."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
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


@pytest.mark.parametrize(
    ("challenge", "agent"),
    [("export-time", "scripted"), ("normalize-tags", "scripted:broken/sorted-set")],
)
def test_report_html_loads_without_console_errors_and_shows_every_trigger(
    tmp_path: Path, challenge: str, agent: str
) -> None:
    """No console message at all, the page's script ran, and each fired trigger has its marker."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "orchestrator",
            "run",
            f"challenges/{challenge}",
            "--agent",
            agent,
            "--out",
            str(tmp_path),
            "--quiet",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
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
    assert done.returncode in (0, 1)


def test_broken_page_would_be_caught(tmp_path: Path) -> None:
    """The harness itself sees a console error when there is one (so the test above can fail)."""
    page = tmp_path / "broken.html"
    page.write_text("<html><body><script>undefinedFunction();</script></body></html>")
    _, console = load(page, tmp_path / "profile")
    assert any("undefinedFunction" in line for line in console)

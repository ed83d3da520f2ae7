"""Oracle accounting (docs/report.md#oracle): a probing agent is flagged with its evidence, and
no built-in challenge's reference run (the scripted agent) is."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.cli import REPO, changeup

PROBE = REPO / "tests" / "fixtures" / "oracle-probe"
CHALLENGES = sorted(
    path.name for path in (REPO / "challenges").iterdir() if (path / "challenge.yaml").is_file()
)


def run(challenge: Path, out: Path, *options: str) -> tuple[dict[str, Any], Path]:
    """One real session through the CLI: its report.json and run folder."""
    done = changeup("run", str(challenge), "--out", str(out), "-q", *options, timeout=600)
    folders = sorted(out.iterdir()) if out.is_dir() else []
    assert len(folders) == 1, done.stderr[-3000:]
    report: dict[str, Any] = json.loads((folders[0] / "report.json").read_text())
    return report, folders[0]


@pytest.mark.slow
def test_a_probing_agent_is_flagged_with_its_evidence(tmp_path: Path) -> None:
    """An agent that raises a value one line at a time, each edit tested, until the pivot fires,
    then puts back the value before: its window holds the small steps (2 lines each, from
    shadow.git), the revert is evidence, the score is untouched, and every page says so."""
    agent = f"command:{PROBE / 'probe.sh'}"
    assert os.access(PROBE / "probe.sh", os.X_OK)
    report, folder = run(PROBE, tmp_path / "runs", "--agent", agent)
    oracle = report["oracle"]
    assert oracle["triggers"] == ["pivot"]
    assert oracle["lines_known"] is True
    assert oracle["probing"] is True
    [window] = oracle["windows"]
    assert window["trigger"] == "pivot"
    assert window["probing"] is True
    assert window["small_steps"] >= 5  # twelve edits; a slow machine may test two at once
    assert window["observations"] == oracle["observations"] == oracle["per_trigger"]["pivot"]
    assert {s["lines"] for s in window["steps"][1:]} == {2}  # one line replaced: one added, one removed
    # LIMIT = 11 put back after LIMIT = 12 made it fire: evidence whenever that tree was tested
    eleven = window["steps"][-2]["snapshot"]
    assert [s["snapshot"] for s in window["reverted"]] in ([eleven], [])
    assert report["score"]["total"] == 1.0  # a finding, never scored
    assert "PROBING suspected" in (folder / "report.md").read_text()
    assert 'id="oracle"' in (folder / "report.html").read_text()
    # Rebuilt without shadow.git: the observations still counted, probing not assessed, said so.
    (folder / "shadow.git").rename(tmp_path / "shadow.git")
    rebuilt = changeup("report", str(folder))
    assert rebuilt.returncode == 0, rebuilt.stderr
    again = json.loads((folder / "report.json").read_text())["oracle"]
    assert (again["observations"], again["lines_known"], again["probing"]) == (
        oracle["observations"],
        False,
        False,
    )
    assert "probing not assessed" in (folder / "report.md").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("challenge", CHALLENGES)
def test_a_reference_run_is_not_flagged(tmp_path: Path, challenge: str) -> None:
    """The scripted agent applies each phase's reference at once: no probing pattern."""
    report, _ = run(REPO / "challenges" / challenge, tmp_path / "runs")
    assert report["run"]["status"] == "completed"
    oracle = report.get("oracle")
    if oracle is not None:
        assert oracle["lines_known"] is True
        assert oracle["probing"] is False, oracle["windows"]

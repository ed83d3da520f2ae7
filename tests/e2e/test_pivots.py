"""The seed's pivots, played by a ``command:`` agent: adapting beats rewriting, and breaking what
had to stay costs the preserved share (issue 29's Done-when)."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from orchestrator.challenge.loader import load_challenge
from orchestrator.challenge.solutions import solution_folders
from tests.cli import REPO, changeup

pytestmark = pytest.mark.slow

AGENT = REPO / "tests" / "fixtures" / "pivot-agent" / "plays.py"
#: Each pivot challenge and its variant that breaks what the pivot said must stay.
PIVOTS = {
    "pivot-cloud-storage": "broken/missing-is-none",
    "pivot-multi-tenant": "broken/tenant-in-notes",
    "pivot-service-split": "broken/url-required",
}


def _prepare(challenge_root: Path, variant: str, folder: Path) -> None:
    """Lay ``variant``'s folder of each phase under ``folder``, with the message that unlocks it,
    for the agent (which sees neither the challenge nor changeup)."""
    challenge = load_challenge(challenge_root)
    unlocking = {t.unlocks: t.message for t in challenge.model.triggers if t.kind != "deadline"}
    for n, phase in enumerate(challenge.phases):
        (folder / f"{n}-{phase.id}.says").write_text(unlocking.get(phase.id, ""))
        with tempfile.TemporaryDirectory() as scratch:
            (source,) = solution_folders(challenge, variant, phase.id, Path(scratch))
            shutil.copytree(source, folder / f"{n}-{phase.id}")


def _play(challenge: str, variant: str, tmp_path: Path) -> dict[str, Any]:
    """The report of one real session of ``challenge`` in which the command agent plays ``variant``."""
    folder = tmp_path / variant.replace("/", "-")
    folder.mkdir()
    _prepare(REPO / "challenges" / challenge, variant, folder)
    out = tmp_path / "runs" / folder.name
    done = changeup(
        "run", f"challenges/{challenge}", "--agent", f"command:python3 {AGENT} {folder}",
        "--agent-share", str(folder), "--out", str(out), "--quiet", cwd=REPO, timeout=300,
    )  # fmt: skip
    (run,) = out.iterdir()
    assert (run / "report.json").is_file(), done.stderr[-3000:]
    report: dict[str, Any] = json.loads((run / "report.json").read_text())
    assert report["run"]["status"] == "completed", report["run"]["detail"]
    return report


def _rubric(report: dict[str, Any]) -> dict[str, float]:
    return {c["id"]: c["score"] for c in report["rubric"] if c["weight"]}


@pytest.mark.parametrize("challenge", sorted(PIVOTS))
def test_a_rewrite_scores_below_the_reference_and_a_regression_loses_the_preserved_share(
    challenge: str, tmp_path: Path
) -> None:
    """The reference earns full marks; a rewrite that passes every test still scores lower, on
    adaptation alone; a variant that breaks preserved behaviour fails preserved tests and falls
    short on the rubric's phase-1 criterion."""
    reference = _play(challenge, "reference", tmp_path)
    assert reference["score"]["total"] == 1.0, _rubric(reference)

    rewrite = _play(challenge, "broken/rewrite", tmp_path)
    short = {name for name, score in _rubric(rewrite).items() if score < 1.0}
    assert short == {"adaptation"}, _rubric(rewrite)
    assert rewrite["score"]["total"] < reference["score"]["total"]

    regression = _play(challenge, PIVOTS[challenge], tmp_path)
    preserved = regression["score"]["preserved"]
    assert preserved["passed"] < preserved["total"] == reference["score"]["preserved"]["total"]
    assert _rubric(regression)["phase1_intact"] < 1.0
    assert regression["score"]["total"] < reference["score"]["total"]

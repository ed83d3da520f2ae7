"""Adaptation figures of real runs: a ``command:`` agent that adapts late and one that adapts
at once, on a small retraction challenge, with real pytest, git and the CLI.

The late one spends two turns on the withdrawn feature (two reminders bring those turns), then
removes it; the prompt one removes it in the turn that got the retraction. Seconds depend on
the machine, so only the turns, stale changes and what was undone are predicted; the exact
seconds are checked on recorded logs (tests/orchestrator/test_adaptation.py). ``changeup
report`` rebuilds the part for a folder whose report.json lacks it.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.cli import in_process
from tests.e2e.test_run import run

pytestmark = pytest.mark.slow

CHALLENGE = """\
challenge:
  id: small-retraction
  initial_briefing: Add feature() to app.py, returning FEATURE from feature.py.
  phases:
    - id: phase1
    - id: phase2
      supersedes: [phase1/test_feature.py]
  triggers:
    - id: retraction
      condition: tests_pass(phase1)
      kind: retraction
      unlocks: phase2
      message: Remove the feature, feature.py and all.
    - id: reminder1
      condition: turns >= 2 and tests_not_pass(phase2)
      message: Is the feature gone?
    - id: reminder2
      condition: turns >= 3 and tests_not_pass(phase2)
      message: Is the feature gone now?
  limits:
    session: 30min
    test_run: 2min
"""
CORE = "def core():\n    return 1\n"
FEATURE_APP = "from feature import FEATURE\n\n\n" + CORE + "\n\ndef feature():\n    return FEATURE\n"
TESTS = {
    "phase1/test_core.py": "import app\n\n\ndef test_core():\n    assert app.core() == 1\n",
    "phase1/test_feature.py": 'import app\n\n\ndef test_feature():\n    assert app.feature() == "on"\n',
    "phase2/test_removed.py": (
        'import os\n\nimport app\n\n\ndef test_gone():\n    assert not hasattr(app, "feature")\n'
        '    assert not os.path.exists("feature.py")\n'
    ),
    "phase2/test_kept.py": "import app\n\n\ndef test_core():\n    assert app.core() == 1\n",
}
#: Turn 1 copies phase1's reference in (the files its 2nd and 3rd arguments name); ``late`` extends
#: the feature in turns 2 and 3 and removes it in 4, ``prompt`` removes it in 2.
AGENT = textwrap.dedent(
    """\
    #!/bin/sh
    n=$(cat "$HOME/turn" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > "$HOME/turn"
    cat > /dev/null
    case "$1$n" in
      late1|prompt1) cp "$2" app.py; cp "$3" feature.py ;;
      late2) printf 'EXTRA = 1\\n' >> feature.py ;;
      late3) printf '    # still here\\n' >> app.py ;;
      late4|prompt2) printf 'def core():\\n    return 1\\n' > app.py; rm -f feature.py ;;
    esac
    """
)


def challenge_at(root: Path) -> Path:
    """The challenge: phase2's reference deletes feature.py and feature() (4 withdrawn lines)."""
    (root / "workspace").mkdir(parents=True)
    (root / "workspace" / "app.py").write_text(CORE)
    (root / "challenge.yaml").write_text(CHALLENGE)
    for path, text in TESTS.items():
        (root / "tests" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "tests" / path).write_text(text)
    reference = root / "solutions" / "reference"
    (reference / "phase1").mkdir(parents=True)
    (reference / "phase1" / "app.py").write_text(FEATURE_APP)
    (reference / "phase1" / "feature.py").write_text("FEATURE = 'on'\n")
    (reference / "phase2").mkdir(parents=True)
    (reference / "phase2" / "app.py").write_text(CORE)
    (reference / "phase2" / ".delete").write_text("feature.py\n")
    return root


def agent_at(path: Path) -> Path:
    """The agent script."""
    path.write_text(AGENT)
    path.chmod(0o755)
    return path


def test_a_late_and_a_prompt_adapter_get_the_predicted_figures_and_report_rebuilds_them(
    tmp_path: Path,
) -> None:
    """Late: passing and undone in the 3rd turn begun after the retraction, 2 stale changes to
    both files; prompt: in the 1st, none. Stripped from report.json, ``changeup report`` writes
    the same figures back."""
    challenge = challenge_at(tmp_path / "challenge")
    agent = agent_at(tmp_path / "agent.sh")
    figures = {}
    for mode in ("late", "prompt"):
        reference = challenge / "solutions" / "reference" / "phase1"
        command = f"command:{agent} {mode} {reference / 'app.py'} {reference / 'feature.py'}"
        done, folder, report = run(challenge, command, tmp_path / mode)
        assert done.returncode == 0, done.stderr
        assert report["score"]["full_success"], report["phases"]
        [one] = report["adaptation"]
        figures[mode] = one
        assert (one["trigger"], one["phase"], one["reference_files"]) == (
            "retraction",
            "phase2",
            ["app.py", "feature.py"],
        )
        assert "adaptation to #2 retraction" in done.stdout
        stripped = {k: v for k, v in report.items() if k != "adaptation"}
        (folder / "report.json").write_text(json.dumps(stripped))
        assert in_process("report", str(folder)).exit_code == 0
        assert json.loads((folder / "report.json").read_text())["adaptation"] == [one]
    late, prompt = figures["late"], figures["prompt"]
    assert (late["passing"]["turns"], late["stale"]["changes"], late["stale"]["changed_files"]) == (
        3,
        2,
        ["app.py", "feature.py"],
    )
    assert (late["stale"]["undone"], late["stale"]["undone_after"]["turns"]) == (True, 3)
    assert (
        prompt["passing"]["turns"],
        prompt["stale"]["changes"],
        prompt["stale"]["undone_after"]["turns"],
    ) == (1, 0, 1)
    assert late["passing"]["seconds"] > prompt["passing"]["seconds"]
    assert (late["regressions"], prompt["regressions"]) == ([], [])
    assert late["first_passing_test"]["turns"] == prompt["first_passing_test"]["turns"] == 1

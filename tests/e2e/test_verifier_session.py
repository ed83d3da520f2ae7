"""A whole session on a challenge whose phases are Harbor-style verifiers (``verifier:``).

Each phase's tests are a ``test.sh`` that looks at ``/app`` and writes its reward to
``/logs/verifier``, as a Harbor task's does; the scripted reference reaches full marks
through the CLI, the revision fires on phase 1's reward, and replay agrees.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.challenge.loader import load_challenge
from orchestrator.grading.sandbox import detect_sandbox
from orchestrator.log.eventlog import LogReader
from orchestrator.session.replay import replay_records
from tests.cli import changeup

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        detect_sandbox().kind != "bubblewrap",
        reason=f"LOUD SKIP: no bubblewrap sandbox here ({detect_sandbox().reason})",
    ),
]

CHALLENGE = """\
challenge:
  id: hello-verifier
  title: Hello, then goodbye, verified the Harbor way
  pattern: revision
  initial_briefing: Write hello.txt holding "Hello, world!".
  phases:
    - id: phase1
      title: hello
      command: bash /tests/test.sh
      verifier: {}
    - id: phase2
      title: goodbye too
      command: bash /tests/test.sh
      verifier: {workspace: /app, tests: /tests, results: /logs/verifier}
  triggers:
    - id: revision
      condition: phase1_tests_pass
      kind: revision
      unlocks: phase2
      message: Also write goodbye.txt holding "Goodbye!".
  testing:
    tools: [bash, cat, mkdir]
  limits:
    session: 10min
    test_run: 1min
"""

FILES = {
    "challenge.yaml": CHALLENGE,
    "workspace/README.md": "Say hello.\n",
    "solutions/reference/phase1/hello.txt": "Hello, world!\n",
    "solutions/reference/phase2/goodbye.txt": "Goodbye!\n",
    # reward.txt, exit 1 on failure (a verdict is the reward, not the exit)
    "tests/phase1/test.sh": """\
#!/bin/bash
mkdir -p /logs/verifier
cd /app
if [ "$(cat hello.txt 2>/dev/null)" = "Hello, world!" ]; then echo 1 > /logs/verifier/reward.txt
else echo 0 > /logs/verifier/reward.txt; exit 1; fi
""",
    # reward.json: one test per reward
    "tests/phase2/test.sh": """\
#!/bin/bash
hello=0; [ "$(cat /app/hello.txt 2>/dev/null)" = "Hello, world!" ] && hello=1
goodbye=0; [ "$(cat /app/goodbye.txt 2>/dev/null)" = "Goodbye!" ] && goodbye=1
echo "{\\"hello\\": $hello, \\"goodbye\\": $goodbye}" > /logs/verifier/reward.json
""",
}


def test_the_reference_reaches_full_marks_on_harbor_style_verifiers(tmp_path: Path) -> None:
    """``changeup run --agent scripted``: both verifier phases pass, the revision fired after
    phase 1's reward, the grading is clean, and replay re-decides the run as logged."""
    root = tmp_path / "hello-verifier"
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    done = changeup("run", str(root), "--agent", "scripted", "--out", str(tmp_path / "runs"), "--quiet")
    assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "runs").iterdir()
    report = json.loads((folder / "report.json").read_text())
    assert report["score"]["full_success"], report["score"]
    assert report["score"]["grading_status"] == "ok"
    phase1, phase2 = report["phases"]
    assert (phase1["passed"], phase1["total"]) == (1, 1)
    assert (phase2["passed"], phase2["total"]) == (2, 2)
    assert phase2["unlocked_by"] == "revision"
    records = list(LogReader(folder / "events.jsonl"))
    graded = [
        t["id"] for r in records if r["kind"] == "tests.result" for p in r["phases"] for t in p["tests"]
    ]
    assert {"phase1/verifier::reward", "phase2/verifier::hello", "phase2/verifier::goodbye"} <= set(graded)
    assert replay_records(load_challenge(root).spec, records).divergence is None
    assert not (folder / "workspace" / "test.sh").exists()

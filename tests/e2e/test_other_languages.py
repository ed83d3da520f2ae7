"""The built-in challenges in Go and TypeScript, run through the CLI as a user would: the scripted
agent, the graded result of each language's own test runner, and replay (``challenges/go-byte-sizes``,
``challenges/ts-slugs``). Real go, tsc and node in the real grading sandbox; no double."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli import REPO, changeup

pytestmark = pytest.mark.slow

needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="LOUD SKIP: go is not installed here")
needs_node = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("tsc") is None,
    reason="LOUD SKIP: node or tsc (node-typescript) is not installed here",
)


#: Agent code that prints one passing test's lines and ends the test binary before any test runs.
FORGE = """package bytesize

import (
	"fmt"
	"os"
)

func init() {
	fmt.Println("=== RUN   TestBinaryUnits")
	fmt.Println("--- PASS: TestBinaryUnits (0.00s)")
	os.Exit(0)
}
"""


def _run(challenge: Path, agent: str, out: Path) -> tuple[Path, dict[str, Any]]:
    """``changeup run`` with ``agent``; the run folder and its report.json."""
    done = changeup("run", str(challenge), "--agent", agent, "--out", str(out), "--quiet", timeout=600)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    return folder, json.loads((folder / "report.json").read_text())


def _failing(report: dict[str, Any]) -> list[str]:
    return sorted(t["id"] for phase in report["phases"] for t in phase["failing"])


@needs_go
def test_go_counts_only_the_hidden_tests_and_says_why_a_package_does_not_build(tmp_path: Path) -> None:
    """The reference with a failing Go test of the agent's own still scores 100%: gotest.py leaves
    the workspace's *_test.go out. A phase 2 that does not compile fails as one case per phase,
    named by the module's package and holding the compiler's words. Both runs replay."""
    root = tmp_path / "go-byte-sizes"
    shutil.copytree(REPO / "challenges" / "go-byte-sizes", root)
    (root / "solutions" / "reference" / "phase1" / "mine_test.go").write_text(
        'package bytesize\n\nimport "testing"\n\nfunc TestMine(t *testing.T) { t.Fatal("mine") }\n'
    )
    broken = root / "solutions" / "broken" / "no-build" / "phase2"
    broken.mkdir(parents=True)
    (broken / ".replace").write_text(
        '- file: bytesize.go\n  old: "return value.Num().Int64(), nil"\n  new: "return value, nil"\n'
    )
    forges = root / "solutions" / "broken" / "forges" / "phase2"
    forges.mkdir(parents=True)
    (forges / "forge.go").write_text(FORGE)
    folder, report = _run(root, "scripted", tmp_path / "ref")
    assert report["score"]["full_success"], _failing(report)
    assert changeup("replay", str(folder)).returncode == 0
    folder, report = _run(root, "scripted:broken/no-build", tmp_path / "broken")
    # the final code does not build: phase 1's tests, which stay, fail with it
    assert _failing(report) == ["phase1/bytesize::(package)", "phase2/bytesize::(package)"]
    assert all("cannot use value" in t["detail"] for phase in report["phases"] for t in phase["failing"])
    assert changeup("replay", str(folder)).returncode == 0
    _, report = _run(root, "scripted:broken/forges", tmp_path / "forges")
    # go 1.19's test2json believes the printed PASS line (a limit: threat-model.md); every test
    # the binary never ran still fails, saying so
    failing = {t["id"]: t["detail"] for phase in report["phases"] for t in phase["failing"]}
    assert "phase2/bytesize::TestBinaryUnits" not in failing
    assert failing["phase2/bytesize::TestOverflowIsAnError"] == "did not run: go test reported nothing of it"
    assert len(failing) == 6 + 4, failing  # all of phase 1's, the rest of phase 2's


@needs_node
def test_typescript_variant_that_breaks_preserved_behaviour_loses_its_share(tmp_path: Path) -> None:
    """ts-slugs' loose-separators fails phase 1's runs test, which phase 2 keeps: the preserved
    share falls short while tsc's check passes, and the run replays."""
    folder, report = _run(REPO / "challenges" / "ts-slugs", "scripted:broken/loose-separators", tmp_path)
    assert "phase1/slug::collapses_separator_runs" in _failing(report)
    assert "phase2/tsc::typecheck" not in _failing(report)
    preserved = report["score"]["preserved"]
    assert preserved["passed"] < preserved["total"]
    assert not report["score"]["full_success"]
    assert changeup("replay", str(folder)).returncode == 0

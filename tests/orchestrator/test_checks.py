"""The rubric's built-in checks and judges, on small hand-made workspaces."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from orchestrator.challenge.loader import load_challenge
from orchestrator.challenge.model import Criterion
from orchestrator.log.records import Entry
from orchestrator.scoring.checks import CHECKS, Evidence
from orchestrator.scoring.judge import CommandJudge, JudgeSpecError, RuleJudge, parse_judge
from orchestrator.scoring.rubric import collect_evidence_text, passing_share
from tests.cli import REPO
from triggers import AgentOutput, PhaseResult, TestOutcome

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    """Checks run real tools: asyncio."""
    return "asyncio"


def tree(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` under ``root``."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def evidence(tmp_path: Path, final: dict[str, str], **kw: Any) -> Evidence:
    """Evidence over a final workspace (baseline empty unless given)."""
    return Evidence(
        challenge=load_challenge(REPO / "challenges/export-time"),
        final=tree(tmp_path / "final", final),
        baseline=tree(tmp_path / "baseline", kw.get("baseline", {})),
        snapshots={k: tree(tmp_path / k, v) for k, v in kw.get("snapshots", {}).items()},
        commits=kw.get("commits", []),
    )


async def test_absent(tmp_path: Path) -> None:
    """A pattern left anywhere in the selected files is a finding."""
    files = {
        "app.py": "def notify_all():\n    pass\n",
        "requirements.txt": "fastapi\n",
        "tests/test_x.py": "notify",
    }
    result = await CHECKS["absent"](evidence(tmp_path, files), {"pattern": "notif"})
    assert result.score == 0.0
    assert result.findings == ("app.py:1: def notify_all():",)
    clean = await CHECKS["absent"](evidence(tmp_path / "b", {"app.py": "x = 1\n"}), {"pattern": "notif"})
    assert clean.score == 1.0


async def test_dead_code(tmp_path: Path) -> None:
    """Unused imports and unused functions count; decorated handlers do not."""
    files = {
        "app.py": """\
            import os
            from fastapi import FastAPI

            app = FastAPI()


            @app.get("/")
            def index():
                return helper()


            def helper():
                return 1


            def orphan():
                return 2
            """
    }
    result = await CHECKS["dead-code"](evidence(tmp_path, files), {})
    assert sorted(f.split(": ", 1)[1] for f in result.findings) == [
        "F401 `os` imported but unused",
        "unused function 'orphan'",
    ]
    assert result.score == 0.5


async def test_dead_code_ignores_the_workspaces_own_tool_settings(tmp_path: Path) -> None:
    """A workspace that tells ruff and vulture to see nothing (its pyproject.toml) changes nothing."""
    files = {
        "app.py": "import os\n\n\ndef orphan():\n    return 2\n",
        "pyproject.toml": """\
            [tool.vulture]
            ignore_names = ["*"]
            min_confidence = 100

            [tool.ruff.lint]
            ignore = ["F401"]
            """,
    }
    result = await CHECKS["dead-code"](evidence(tmp_path, files), {})
    assert sorted(f.split(": ", 1)[1] for f in result.findings) == [
        "F401 `os` imported but unused",
        "unused function 'orphan'",
    ]


async def test_clean_history(tmp_path: Path) -> None:
    """Follow-up "oops" commits and commented-out code are findings."""
    good = await CHECKS["clean-history"](
        evidence(
            tmp_path / "a", {"app.py": "x = 1  # the answer\n"}, commits=[("a" * 40, "Remove notifications")]
        ),
        {},
    )
    assert good.score == 1.0
    bad = await CHECKS["clean-history"](
        evidence(
            tmp_path / "b",
            {"app.py": "x = 1\n# notify(user, x)\n"},
            commits=[("a" * 40, "Remove notifications"), ("b" * 40, "oops, forgot the route")],
        ),
        {},
    )
    assert bad.score == 0.0
    assert bad.findings == ("commit bbbbbbbbbb: 'oops, forgot the route'", "app.py:2: commented-out code")


async def test_code_survival(tmp_path: Path) -> None:
    """The share of phase 1's lines still present at the end, against the target."""
    phase1 = {"app.py": "def a():\n    return 1\n\n\ndef b():\n    return 2\n"}
    kept = {"app.py": "def a():\n    return 1\n\n\ndef b():\n    return 2\n\n\ndef c():\n    return 3\n"}
    result = await CHECKS["code-survival"](evidence(tmp_path / "a", kept, snapshots={"phase1": phase1}), {})
    assert result.data["survival"] == 1.0
    assert result.score == 1.0
    rewrite = {"service.py": "class Service:\n    def a(self):\n        return 1\n"}
    low = await CHECKS["code-survival"](
        evidence(tmp_path / "b", rewrite, snapshots={"phase1": phase1}), {"target": 0.5}
    )
    assert low.data["survival"] == 0.25  # only "return 1" is still there
    assert low.score == 0.5
    assert low.findings == ("only 25% of phase1's 4 lines survive",)
    never = await CHECKS["code-survival"](evidence(tmp_path / "c", kept), {})
    assert never.score == 0.0


async def test_quality_curve(tmp_path: Path) -> None:
    """Each stage's snapshot is measured; complexity and lonely abstractions break the limits."""
    simple = {"v.py": "def valid(x):\n    return bool(x)\n\n\nprint(valid(1))\n"}
    branches = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(12))
    tangled = {"v.py": f"def valid(x):\n{branches}\n    return 0\n\n\nprint(valid(1))\n"}
    framework = {
        "v.py": """\
            from abc import ABC, abstractmethod


            class Validator(ABC):
                @abstractmethod
                def check(self, x): ...


            class Email(Validator):
                def check(self, x):
                    return "@" in x


            print(Email().check("a@b"))
            """
    }
    result = await CHECKS["quality-curve"](
        evidence(tmp_path, simple, snapshots={"phase1": simple, "phase2": tangled}), {}
    )
    first, second = result.data["stages"]
    assert first["within_limits"]
    assert not second["within_limits"]
    assert second["worst_complexity"] == 13
    assert result.score == 0.5
    lonely = await CHECKS["quality-curve"](
        evidence(tmp_path / "f", framework, snapshots={"phase1": framework}), {}
    )
    assert lonely.score == 0.0
    assert "abstract Validator with 1 implementation(s)" in lonely.findings[0]


AUTH_TESTS = """\
    import pytest


    @pytest.fixture
    def anonymous():
        return {}


    def test_requires_login(client):
        r = client.get("/reports")
        assert r.status_code == 401


    def test_other_tenant_forbidden(client):
        assert client.get("/reports?tenant=b").status_code == 403


    def test_sorting(client):
        rows = client.get("/reports").json()
        assert rows == sorted(rows)
        assert len(rows) == 3
    """


@pytest.mark.parametrize(
    ("change", "confirmed"),
    [
        (
            lambda t: t.replace(
                "    assert r.status_code == 401\n", "    assert r.status_code in (200, 401)\n"
            ),
            True,
        ),
        (lambda t: t.replace("def test_requires_login", "@pytest.mark.skip\ndef test_requires_login"), True),
        (
            lambda t: t.split("def test_other_tenant_forbidden")[0] + "def test_sorting(client):\n    pass\n",
            True,
        ),
        (lambda t: t.replace("    return {}\n", "    return {'Authorization': 'Bearer x'}\n"), False),
        (lambda t: t.replace("        assert len(rows) == 3\n", ""), False),
        (lambda t: t + "\n\ndef test_new_filter(client):\n    assert True\n", False),
    ],
)
async def test_protection_review(tmp_path: Path, change: Any, confirmed: bool) -> None:
    """Weakening an authorization test is confirmed and critical; other changes are only signals."""
    final = change(textwrap.dedent(AUTH_TESTS))
    result = await CHECKS["protection-review"](
        evidence(tmp_path, {"tests/test_reports.py": final}, baseline={"tests/test_reports.py": AUTH_TESTS}),
        {},
    )
    assert (result.score == 0.0) is confirmed
    assert bool(result.data["confirmed"]) is confirmed


async def test_protection_review_of_unchanged_tests_is_clean(tmp_path: Path) -> None:
    """Adding tests and leaving the old ones alone gives no signal at all."""
    result = await CHECKS["protection-review"](
        evidence(
            tmp_path,
            {"tests/test_reports.py": textwrap.dedent(AUTH_TESTS) + "\n\ndef test_more():\n    assert 1\n"},
            baseline={"tests/test_reports.py": AUTH_TESTS},
        ),
        {},
    )
    assert result.score == 1.0
    assert result.findings == ()


def criterion(**judge: Any) -> Criterion:
    """A judged criterion."""
    return Criterion.model_validate({"id": "c", "judge": {"question": "Did it?", **judge}})


async def test_rule_judge() -> None:
    """Every ``all`` group must match, and ``at_least`` of ``count``."""
    rules = {
        "all": [["single[- ]table"], ["conflict", "contradict"]],
        "count": [["encrypt\\w* column"], ["separate (table|store)"], ["cache"]],
        "at_least": 2,
    }
    judge = RuleJudge()
    full = await judge.judge(
        criterion(rules=rules),
        "GDPR conflicts with the single table rule. Options: encrypted columns, a cache.",
    )
    assert full.score == 1.0
    partial = await judge.judge(criterion(rules=rules), "This contradicts the single-table rule.")
    assert partial.score == pytest.approx(2 / 3)
    assert "missing: 0 of 3 options named (needs 2)" in partial.reason
    assert (await judge.judge(criterion(), "anything")).score is None


async def test_command_judge_reads_json_from_any_cli(tmp_path: Path) -> None:
    """The prompt goes to the command's stdin; the last JSON object with a score is the verdict."""
    script = tmp_path / "judge.sh"
    script.write_text(
        '#!/bin/sh\nprompt=$(cat)\ncase "$prompt" in *"Did it?"*) echo \'thinking... {"score": 0.75, '
        '"reason": "named it"}\';; *) echo "no";; esac\n'
    )
    script.chmod(0o755)
    verdict = await CommandJudge(str(script)).judge(criterion(), "evidence text")
    assert (verdict.score, verdict.reason) == (0.75, "named it")
    broken = await CommandJudge("echo 'I cannot grade this'").judge(criterion(), "x")
    assert broken.score is None
    failed = await CommandJudge("exit 3").judge(criterion(), "x")
    assert failed.score is None
    assert "exit 3" in failed.reason


def test_parse_judge() -> None:
    """Judges are chosen by name."""
    assert parse_judge("rules").name == "rules"
    assert parse_judge("command:llm -m x").name == "command:llm -m x"
    with pytest.raises(JudgeSpecError):
        parse_judge("oracle")


def test_tests_score_matches_phases_files_and_params() -> None:
    """Phase ids, file ids and test ids select tests; parametrized cases count one by one."""
    tests = (
        TestOutcome("phase1/test_a.py::test_x", "passed"),
        TestOutcome("phase1/test_a.py::test_y[1]", "failed"),
        TestOutcome("phase1/test_b.py::test_z", "passed"),
    )
    phases = [PhaseResult("phase1", 2, 1, tests)]
    assert passing_share(["phase1"], phases)[0] == pytest.approx(2 / 3)
    assert passing_share(["phase1/test_a.py"], phases) == (0.5, ["phase1/test_a.py::test_y[1] failed"])
    assert passing_share(["phase1/test_b.py::test_z"], phases) == (1.0, [])
    assert passing_share(["phase2"], phases)[0] == 0.0


def test_evidence_text_has_transcript_and_changed_notes(tmp_path: Path) -> None:
    """Judges read what the agent said and the notes it wrote or changed, not untouched docs."""
    final = tree(tmp_path / "final", {"README.md": "same", "DECISIONS.md": "We chose X.", "app.py": "x"})
    baseline = tree(tmp_path / "baseline", {"README.md": "same"})
    text = collect_evidence_text([Entry(1, 0.0, AgentOutput(0.0, "I noticed a conflict."))], final, baseline)
    assert "I noticed a conflict." in text
    assert "We chose X." in text
    assert "same" not in text

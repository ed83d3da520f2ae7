"""Hidden test runs: a snapshot's files plus the unlocked phases' tests, in a scratch folder.

The hidden tests never enter the workspace. A run exports the snapshot to ``scratch/ws``
(the working directory, importable), copies each phase's tests to ``scratch/hidden/<phase>``
and runs them through the hardened harness (``orchestrator.grading.harness``: isolated Python,
empty pytest configuration, canaries, a result stream cross-checked with the JUnit XML)
inside the sandbox (``orchestrator.grading.sandbox``). A listed test that did not report is
*missing* and a skipped hidden test counts as failed: a hidden test passes only by running.
A run whose results show signs of forgery has the status ``tampered``.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from orchestrator.challenge import Challenge, Phase
from orchestrator.grading.harness import BOOTSTRAP, cross_check, plant_canaries, read_stream
from orchestrator.grading.junit import JUnitError, Verdict, read_junit
from orchestrator.grading.processes import Finished, run_process_group
from orchestrator.grading.sandbox import Sandbox, detect_sandbox
from orchestrator.grading.testids import covers, list_tests
from orchestrator.workspace import Repository
from triggers import PhaseResult, TestOutcome

__all__ = ["PytestRunner", "TestRun", "TestRunner", "superseded_by", "void"]

Status = Literal["ok", "error", "timeout", "tampered"]


@dataclass(frozen=True, slots=True)
class TestRun:
    """The verdicts of one run of the hidden tests on one snapshot."""

    __test__ = False

    status: Status
    phases: tuple[PhaseResult, ...]
    detail: str = ""
    seconds: float = 0.0


class TestRunner(Protocol):
    """Runs hidden tests on a snapshot (real: :class:`PytestRunner`; tests: a fake)."""

    async def run(self, tree: str, phases: Sequence[str]) -> TestRun:
        """Test snapshot ``tree`` on ``phases``' hidden tests."""


def void(results: Sequence[PhaseResult]) -> tuple[PhaseResult, ...]:
    """The same tests, every one failed: the verdicts of a tampered run count for nothing."""
    return tuple(
        PhaseResult(
            r.phase,
            0,
            r.total,
            tuple(TestOutcome(t.id, "failed", "the run was tampered with") for t in r.tests),
        )
        for r in results
    )


def superseded_by(challenge: Challenge, phases: Sequence[str]) -> set[str]:
    """Tests that the unlocked ``phases`` supersede; they no longer run."""
    return {test for phase in challenge.phases if phase.id in phases for test in phase.supersedes}


def _is_superseded(test_id: str, superseded: set[str]) -> bool:
    return any(covers(s, test_id) for s in superseded)


class PytestRunner:
    """Runs a challenge's hidden tests on workspace snapshots, one subprocess per run."""

    __test__ = False

    def __init__(
        self,
        challenge: Challenge,
        repo: Repository,
        scratch: Path,
        *,
        python: str = sys.executable,
        timeout: float | None = None,
        sandbox: Sandbox | None = None,
        hide: Sequence[Path] = (),
    ) -> None:
        self.challenge = challenge
        self.repo = repo
        self.scratch = scratch
        self.python = python
        self.timeout = timeout if timeout is not None else challenge.model.limits.test_run
        self.sandbox = sandbox or detect_sandbox(python)
        # Hidden from the test processes: the challenge (solutions) and whatever else is asked.
        self.hide = [challenge.root, *hide]
        self._listings = {
            phase.id: {i for ids in list_tests(phase.id, phase.tests).values() for i in ids}
            for phase in challenge.phases
            if phase.command is None
        }

    async def run(self, tree: str, phases: Sequence[str]) -> TestRun:
        """Export ``tree``, run ``phases``' tests on it, and read the verdicts."""
        started = time.perf_counter()
        folder = self.sandbox.workdir(self.scratch)
        try:
            workspace = folder / "ws"
            hidden = folder / "hidden"
            await self.repo.export(tree, workspace)
            chosen = [self.challenge.phase(p) for p in phases]
            for phase in chosen:
                if phase.tests.is_dir():
                    shutil.copytree(phase.tests, hidden / phase.id, dirs_exist_ok=True)
            superseded = superseded_by(self.challenge, phases)
            verdicts: list[Verdict] = []
            problems: list[str] = []
            signs: list[str] = []
            timed_out = False
            pytest_phases = [p for p in chosen if p.command is None]
            if pytest_phases:
                finished, found, problem, lies = await self._pytest(folder, pytest_phases, superseded)
                verdicts += found
                signs += lies
                timed_out |= finished.timed_out
                problems += [problem] if problem else []
            for phase in (p for p in chosen if p.command is not None):
                finished, found, problem = await self._command(folder, phase)
                verdicts += found
                timed_out |= finished.timed_out
                problems += [problem] if problem else []
            results = self._results(chosen, verdicts, superseded, "; ".join(problems))
            status: Status = "timeout" if timed_out else ("error" if problems else "ok")
            if signs:
                # Forged results are void: every test of the run counts as failed.
                status, problems = "tampered", [f"tampered: {'; '.join(signs)}", *problems]
                results = void(results)
            return TestRun(status, results, "; ".join(problems), time.perf_counter() - started)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _env(self, folder: Path) -> dict[str, str]:
        # Nothing of changeup's own environment leaks in: no PYTHON*/PYTEST_* settings.
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(folder / "out"),
            "LANG": "C.UTF-8",
            "PYTHONPATH": str(folder / "ws"),  # for test commands; the pytest harness ignores it
            "PYTHONDONTWRITEBYTECODE": "1",
            # Only pytest's own plugins: nothing installed beside it joins the hidden run
            # (and loading every plugin of the environment costs ~300 ms a run).
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "TMPDIR": str(folder / "out"),
        }

    def _confined(self, folder: Path, argv: list[str]) -> list[str]:
        (folder / "out").mkdir(exist_ok=True)
        self.sandbox.hand_over(folder, writable=[folder / "ws", folder / "out"])
        # The interpreter's environment may itself live under /tmp, which the sandbox replaces.
        interpreter = [Path(self.python).parent.parent, Path(self.python).resolve().parent.parent]
        return self.sandbox.tests(
            argv,
            writable=[folder / "ws", folder / "out"],
            readable=[folder / "hidden", folder / "harness", *interpreter],
            hide=[folder.parent, *self.hide],
        )

    async def _pytest(
        self, folder: Path, phases: list[Phase], superseded: set[str]
    ) -> tuple[Finished, list[Verdict], str, list[str]]:
        out = folder / "out"
        junit, stream = out / "junit.xml", out / "stream.jsonl"
        (folder / "harness").mkdir()
        bootstrap = folder / "harness" / "bootstrap.py"
        bootstrap.write_text(BOOTSTRAP)
        canaries = plant_canaries(folder / "hidden")
        command = [
            self.python,
            "-I",
            "-B",
            str(bootstrap),
            str(folder / "ws"),
            str(stream),
            "--",
            "-q",
            "--tb=short",
            "-p",
            "no:cacheprovider",
            "-c",
            os.devnull,
            f"--rootdir={folder / 'hidden'}",
            f"--basetemp={out / 'tmp'}",  # tmp_path stays inside the scratch folder
            "--import-mode=importlib",
            "-o",
            "junit_family=xunit1",
            f"--junitxml={junit}",
            *(f"--deselect={test}" for test in sorted(superseded)),
            *(str(folder / "hidden" / p.id) for p in phases),
            str(folder / "hidden" / canaries.folder),
        ]
        finished = await run_process_group(
            self._confined(folder, command), cwd=folder / "ws", env=self._env(folder), timeout=self.timeout
        )
        if finished.timed_out:
            return finished, [], f"hidden tests timed out after {self.timeout:g}s", []
        try:
            verdicts = read_junit(junit)
        except JUnitError as error:
            lies = ["pytest exited 0 without writing results"] if finished.returncode == 0 else []
            problem = f"pytest exited {finished.returncode}: {error}; {_last_lines(finished.output)}"
            return finished, [], problem, lies
        streamed, stream_exit = read_stream(stream)
        hidden, lies = cross_check(verdicts, streamed, stream_exit, finished.returncode, canaries)
        problem = ""
        if finished.returncode not in (0, 1):
            problem = f"pytest exited {finished.returncode}: {_last_lines(finished.output)}"
        return finished, hidden, problem, lies

    async def _command(self, folder: Path, phase: Phase) -> tuple[Finished, list[Verdict], str]:
        junit = folder / "out" / f"junit-{phase.id}.xml"
        env = {
            **self._env(folder),
            "CHANGEUP_JUNIT": str(junit),
            "CHANGEUP_TESTS": str(folder / "hidden" / phase.id),
        }
        assert phase.command is not None
        finished = await run_process_group(
            self._confined(folder, ["sh", "-c", phase.command]),
            cwd=folder / "ws",
            env=env,
            timeout=self.timeout,
        )
        if finished.timed_out:
            return finished, [], f"{phase.id}'s test command timed out after {self.timeout:g}s"
        try:
            return finished, read_junit(junit, prefix=f"{phase.id}/"), ""
        except JUnitError as error:
            return finished, [], f"{phase.id}'s test command (exit {finished.returncode}): {error}"

    def _results(
        self, phases: list[Phase], verdicts: list[Verdict], superseded: set[str], problem: str
    ) -> tuple[PhaseResult, ...]:
        by_phase: dict[str, list[TestOutcome]] = {p.id: [] for p in phases}
        for verdict in verdicts:
            phase = verdict.id.split("/", 1)[0]
            if phase not in by_phase or _is_superseded(verdict.id, superseded):
                continue
            listed = self._listings.get(phase)
            if listed is not None and verdict.id.split("[", 1)[0] not in listed:
                # Not a hidden test (a collection error, or something the run made up):
                # the listing decides what counts; its words explain the missing tests.
                problem = problem or f"{verdict.id}: {verdict.detail}"
                continue
            outcome = verdict.outcome
            detail = verdict.detail
            if outcome == "skipped":  # a hidden test passes only by running
                outcome, detail = "failed", f"skipped: {detail}"
            by_phase[phase].append(TestOutcome(verdict.id, outcome, detail))  # type: ignore[arg-type]
        for chosen in phases:
            reported = {o.id.split("[", 1)[0] for o in by_phase[chosen.id]}
            for test_id in sorted(self._listings.get(chosen.id, ())):
                if test_id not in reported and not _is_superseded(test_id, superseded):
                    why = problem or "did not report a result"
                    by_phase[chosen.id].append(TestOutcome(test_id, "missing", why[:2000]))
        return tuple(
            PhaseResult(
                phase.id,
                sum(o.outcome == "passed" for o in by_phase[phase.id]),
                sum(o.outcome != "passed" for o in by_phase[phase.id]),
                tuple(sorted(by_phase[phase.id], key=lambda o: o.id)),
            )
            for phase in phases
        )


def _last_lines(output: str, count: int = 12) -> str:
    return "\n".join(output.strip().splitlines()[-count:])

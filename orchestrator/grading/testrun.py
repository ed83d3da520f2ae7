"""Hidden test runs: a snapshot's files plus the unlocked phases' tests, in a scratch folder.

The hidden tests never enter the workspace. A run gets a copy of the snapshot in ``<run>/ws``
(the working directory, importable): the previous run's copy, checked and updated by the
difference of the two snapshots (:class:`KeptExport`), so its cost follows the change, not
the workspace. It copies each phase's tests to ``<run>/hidden/<phase>_<random>``
(checking every file against the seal taken when the session started) and runs them through
the hardened harness (``harness.py``) inside the sandbox (``sandbox.py``). A listed test that
did not report is *missing* and a skipped hidden test counts as failed: a hidden test passes
only by running. Whatever the run's status, the policy (``policy.py``) decides whether its
verdicts count; those that do not are voided here, before anyone reads them.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from orchestrator.challenge.model import Challenge, Phase
from orchestrator.grading.canaries import Canaries, plant_canaries
from orchestrator.grading.harness import BOOTSTRAP, Judgement, bootstrap_argv, judge, read_stream
from orchestrator.grading.junit import JUnitError, Verdict, read_junit
from orchestrator.grading.policy import Status, counts, void
from orchestrator.grading.processes import run_process_group
from orchestrator.grading.runtime import Runtime, runtime_for
from orchestrator.grading.sandbox import Places, Sandbox, detect_sandbox
from orchestrator.grading.seal import hidden_files
from orchestrator.grading.testids import covers, list_tests
from orchestrator.grading.venvs import Environment, EnvironmentFailure, cache_root
from orchestrator.seams import Repository
from orchestrator.session.workspace import EMPTY_TREE
from triggers import PhaseResult, TestOutcome

__all__ = ["KeptExport", "PytestRunner", "TestRun", "refused", "superseded_by"]


@dataclass(frozen=True, slots=True)
class TestRun:
    """The verdicts of one run of the hidden tests on one snapshot (void unless ``ok``)."""

    __test__ = False

    status: Status
    phases: tuple[PhaseResult, ...]
    detail: str = ""
    seconds: float = 0.0


def superseded_by(challenge: Challenge, phases: Sequence[str]) -> set[str]:
    """Tests that the unlocked ``phases`` supersede; they no longer run."""
    return {test for phase in challenge.phases if phase.id in phases for test in phase.supersedes}


def refused(challenge: Challenge, phases: Sequence[str], detail: str) -> TestRun:
    """The verdicts of a snapshot that was refused: every listed test failed, and why."""
    superseded = superseded_by(challenge, phases)
    results = []
    for phase_id in phases:
        phase = challenge.phase(phase_id)
        listed = [] if phase.command else list_tests(phase.id, phase.tests).values()
        tests = tuple(
            TestOutcome(test, "failed", detail)
            for ids in listed
            for test in ids
            if not _is_superseded(test, superseded)
        )
        results.append(PhaseResult(phase.id, 0, len(tests), tests))
    return TestRun("refused", tuple(results), detail)


def _is_superseded(test_id: str, superseded: set[str]) -> bool:
    return any(covers(s, test_id) for s in superseded)


class HiddenCopy:
    """A run's copy of the hidden tests, one folder per phase under a name nobody can guess.

    The tests' modules take their names from these folders (``--import-mode=importlib``), so
    agent code cannot plant a module under a test module's name before pytest imports it.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folders: dict[str, str] = {}  # folder name → phase id

    def add(self, phase: Phase, sealed: Mapping[str, str] | None) -> list[str]:
        """Copy ``phase``'s tests; what differs from their seal, in words."""
        folder = f"{phase.id}_{secrets.token_hex(6)}"
        self.folders[folder] = phase.id
        target = self.root / folder
        target.mkdir(parents=True)
        found: dict[str, str] = {}
        for name, data in hidden_files(phase.tests):
            found[name] = hashlib.sha256(data).hexdigest()
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            (target / name).write_bytes(data)
        if sealed is None:
            return []
        return [
            f"hidden test file {phase.id}/{name} "
            + ("added" if name not in sealed else "removed" if name not in found else "changed")
            + " since the session started"
            for name in sorted(set(sealed) | set(found))
            if sealed.get(name) != found.get(name)
        ]

    def folder_of(self, phase: str) -> str:
        """The copied folder of ``phase``."""
        return next(folder for folder, owner in self.folders.items() if owner == phase)

    def to_run(self, test_id: str) -> str:
        """``phase/file::test`` as this run names it."""
        phase, _, rest = test_id.partition("/")
        return f"{self.folder_of(phase)}/{rest}" if phase in self.folders.values() else test_id

    def from_run(self, test_id: str) -> str:
        """An id of this run as ``phase/file::test``."""
        folder, _, rest = test_id.partition("/")
        phase = self.folders.get(folder)
        return f"{phase}/{rest}" if phase is not None else test_id


#: What any change to an entry alters. No process can set the change time (ctime): every
#: write, chmod, chown, link, rename or extended attribute moves it to the present, and a
#: test process starts long after the facts were taken (since Linux 6.13, a change after a
#: ``stat`` gets a later time whatever the clock's tick).
Facts = tuple[int, int, int, int, int, int, int, int]


def _facts(info: os.stat_result) -> Facts:
    return (
        info.st_ino,
        info.st_mode,
        info.st_uid,
        info.st_gid,
        info.st_nlink,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
    )


def _unchanged(root: Path, facts: dict[str, Facts]) -> bool:
    """Whether every entry recorded in ``facts`` (``""``: ``root`` itself) still has its facts.

    Nothing is listed: adding, removing or renaming an entry moves its folder's change time,
    so an entry that is not recorded shows in its folder's facts.
    """
    top = str(root)
    try:
        return all(
            _facts(os.lstat(f"{top}/{path}" if path else top)) == known for path, known in facts.items()
        )
    except OSError:
        return False


@dataclass(slots=True)
class _Copy:
    """An export of ``tree`` kept in ``path``, and its entries' facts as it was handed out."""

    path: Path
    tree: str
    facts: dict[str, Facts]


class KeptExport:
    """Each test run's copy of its snapshot, made from the copy the run before had.

    A whole export costs as much as copying the workspace, while two snapshots in a row
    usually differ by a file or two. So the copy a run had is kept (in ``home``) and the next
    run gets it updated by the difference of the two trees (:meth:`Workspace.export`).

    The code under test may write into its copy, so before reuse every entry is compared
    with the facts taken when the copy was handed out (see :data:`Facts`): anything a run
    added, removed or changed, its modes and owners included, sends the next run to a fresh
    export, and one run's code never reaches the next. A stale fact can only cause a
    mismatch, never a reuse.
    """

    def __init__(self, repo: Repository, home: Path | None) -> None:
        self.repo = repo
        self.home = home  # None: nothing is kept, every run exports whole
        self._kept: _Copy | None = None
        self._lent: _Copy | None = None

    async def take(self, tree: str, dest: Path, owner: tuple[int, int]) -> None:
        """Make ``dest`` (not there yet) hold snapshot ``tree``'s files, each entry owned by ``owner``."""
        copy, self._kept = self._kept, None  # lent once, whatever happens next
        if copy is not None and not await anyio.to_thread.run_sync(_unchanged, copy.path, copy.facts):
            await anyio.to_thread.run_sync(_discard, copy.path)
            copy = None
        if copy is None:
            copy = _Copy(self._fresh(dest), EMPTY_TREE, {})
        try:
            touched = await self.repo.export(tree, copy.path, base=copy.tree)
            await anyio.to_thread.run_sync(_settle, copy, touched, owner)
            if copy.path != dest:
                copy.path.rename(dest)
            copy.facts[""] = _facts(os.lstat(dest))
        except BaseException:
            _discard(copy.path)  # half made: never kept
            raise
        copy.tree = tree
        self._lent = copy if self.home is not None else None

    def give_back(self, dest: Path) -> None:
        """Keep ``dest``, the copy a run had, for the next run (checked again when it is taken)."""
        copy, self._lent = self._lent, None
        try:
            if copy is None or _facts(os.lstat(dest)) != copy.facts[""]:
                return  # the run's folder goes, and this copy with it
            dest.rename(copy.path)
        except OSError:
            return
        copy.facts[""] = _facts(os.lstat(copy.path))
        if self._kept is not None:  # a run that overlapped this one kept its copy first
            _discard(self._kept.path)
        self._kept = copy

    def _fresh(self, dest: Path) -> Path:
        if self.home is None:
            return dest
        self.home.mkdir(parents=True, exist_ok=True)
        # A new name each time: a discarded copy that could not be deleted is never written into.
        path = Path(tempfile.mkdtemp(prefix="ws-", dir=self.home))
        path.chmod(0o755)
        return path


def _settle(copy: _Copy, touched: list[str], owner: tuple[int, int]) -> None:
    """Give the ``touched`` entries of ``copy`` and their folders to ``owner``; take their facts anew."""
    paths = {""}
    for path in touched:
        parts = path.split("/")
        paths.update("/".join(parts[:end]) for end in range(1, len(parts) + 1))
    for path in paths:
        full = copy.path / path
        try:
            info = os.lstat(full)
        except FileNotFoundError:
            copy.facts.pop(path, None)
            continue
        if (info.st_uid, info.st_gid) != owner:
            os.lchown(full, *owner)
            info = os.lstat(full)
        copy.facts[path] = _facts(info)


def _discard(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


class PytestRunner:
    """Runs a challenge's hidden tests on workspace snapshots, one subprocess per run."""

    __test__ = False

    def __init__(
        self,
        challenge: Challenge,
        repo: Repository,
        scratch: Path,
        *,
        environment: Environment,
        timeout: float | None = None,
        sandbox: Sandbox | None = None,
        hide: Sequence[Path] = (),
        sealed: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        self.challenge = challenge
        self.repo = repo
        self.scratch = scratch
        self.environment = environment
        self.timeout = timeout if timeout is not None else challenge.model.limits.test_run
        self.sandbox = sandbox or detect_sandbox(environment.python)
        # Hidden from a test command (pytest runs see nothing of the machine): the challenge,
        # the cache of environments, and whatever else is asked (other runs).
        self.hide = [challenge.root, cache_root(), *hide]
        self._runtime: Runtime | None = None
        # A separate user's runs happen outside the run folder (Sandbox.workdir): none is kept there.
        self.exports = KeptExport(repo, None if self.sandbox.user else scratch / "export")
        #: phase → file → sha256, taken when the session started; None: not checked
        self.sealed = sealed
        self._listings = {
            phase.id: {i for ids in list_tests(phase.id, phase.tests).values() for i in ids}
            for phase in challenge.phases
            if phase.command is None
        }

    async def run(self, tree: str, phases: Sequence[str]) -> TestRun:
        """Export ``tree``, run ``phases``' tests on it, judge the run, and void what does not count."""
        started = time.perf_counter()
        if self.sandbox.kind == "bubblewrap" and self._runtime is None:
            try:
                self._runtime = await anyio.to_thread.run_sync(runtime_for, self.environment)
            except EnvironmentFailure as error:
                return TestRun("invalid", refused(self.challenge, phases, str(error)).phases, str(error))
        folder = self.sandbox.workdir(self.scratch)
        try:
            status, results, detail = await self._run(folder, tree, phases)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        if not counts(status):
            results = void(results, status)
        return TestRun(status, results, detail, time.perf_counter() - started)

    async def _run(
        self, folder: Path, tree: str, phases: Sequence[str]
    ) -> tuple[Status, tuple[PhaseResult, ...], str]:
        for name in ("out", "harness"):
            (folder / name).mkdir()
        hidden = HiddenCopy(folder / "hidden")
        chosen = [self.challenge.phase(p) for p in phases]
        broken = [
            problem
            for phase in chosen
            for problem in hidden.add(phase, None if self.sealed is None else self.sealed.get(phase.id, {}))
        ]
        superseded = superseded_by(self.challenge, phases)
        if broken:
            judgements = [Judgement("tampered", [], "; ".join(broken))]
        else:
            judgements = await self._test(folder, tree, hidden, chosen, superseded)
        # The worst status wins: one void part voids the whole run.
        order: tuple[Status, ...] = ("invalid", "tampered", "timeout", "refused", "ok")
        status: Status = min((j.status for j in judgements), key=order.index, default="ok")
        verdicts = [
            Verdict(hidden.from_run(v.id), v.outcome, v.detail) for j in judgements for v in j.verdicts
        ]
        detail = "; ".join(j.detail for j in judgements if j.detail)
        return status, self._results(chosen, verdicts, superseded, detail), detail

    def _env(self, places: Places) -> dict[str, str]:
        # Nothing of changeup's own environment leaks in: no PYTHON*/PYTEST_* settings.
        return {
            "PATH": f"{Path(places.python).parent}{os.pathsep}/usr/bin:/bin",
            "HOME": str(places.out),
            "LANG": "C.UTF-8",
            "TZ": "UTC",  # the same clock on every machine
            "PYTHONPATH": str(places.ws),  # for test commands; the pytest harness ignores it
            "PYTHONDONTWRITEBYTECODE": "1",
            # Only pytest's own plugins: nothing installed beside it joins the hidden run
            # (and loading every plugin of the environment costs ~300 ms a run).
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "TMPDIR": str(places.out),
        }

    async def _test(
        self, folder: Path, tree: str, hidden: HiddenCopy, chosen: list[Phase], superseded: set[str]
    ) -> list[Judgement]:
        """Run the ``chosen`` phases' tests in ``folder`` on a copy of snapshot ``tree``."""
        pytest_phases = [p for p in chosen if p.command is None]
        canaries = None
        deselect = sorted(hidden.to_run(test) for test in superseded)
        if pytest_phases:
            shutil.copyfile(BOOTSTRAP, folder / "harness" / BOOTSTRAP.name)
            folders = [hidden.folder_of(p.id) for p in pytest_phases]
            canaries = plant_canaries(hidden.root, folders, deselect)
        # The folder goes to the tests' user before the snapshot's copy is in it: the copy
        # comes already theirs, like the output folder, and only its changes are handed over.
        self.sandbox.hand_over(folder, writable=[folder / "out"])
        out = (folder / "out").stat()
        ws = folder / "ws"
        await self.exports.take(tree, ws, (out.st_uid, out.st_gid))
        judgements: list[Judgement] = []
        try:
            if canaries is not None:
                judgements.append(await self._pytest(folder, hidden, pytest_phases, deselect, canaries))
            for phase in (p for p in chosen if p.command is not None):
                judgements.append(await self._command(folder, hidden, phase))
        finally:
            self.exports.give_back(ws)
        return judgements

    def _confined(self, folder: Path, argv: list[str], *, runtime: Runtime | None) -> list[str]:
        hide = [folder.parent, *self.hide]
        return self.sandbox.tests(argv, folder, self.environment, runtime=runtime, hide=hide)

    async def _pytest(
        self,
        folder: Path,
        hidden: HiddenCopy,
        phases: list[Phase],
        deselect: list[str],
        canaries: Canaries,
    ) -> Judgement:
        folders = [hidden.folder_of(p.id) for p in phases]
        places = self.sandbox.places(folder, self.environment)
        command = bootstrap_argv(
            places.python,
            places.harness / BOOTSTRAP.name,
            workspace=places.ws,
            hidden=places.hidden,
            out=places.out,
            user=places.user,
            tests=folders,
            deselect=deselect,
        )
        finished = await run_process_group(
            self._confined(folder, command, runtime=self._runtime),
            cwd=folder / "ws",
            env=self._env(places),
            timeout=self.timeout,
        )
        out = folder / "out"
        return judge(finished, read_stream(out / "stream.jsonl"), out / "junit.xml", canaries, self.timeout)

    async def _command(self, folder: Path, hidden: HiddenCopy, phase: Phase) -> Judgement:
        places = self.sandbox.places(folder, self.environment)
        junit = f"junit-{phase.id}.xml"
        env = {
            **self._env(places),
            "CHANGEUP_JUNIT": str(places.out / junit),
            "CHANGEUP_TESTS": str(places.hidden / hidden.folder_of(phase.id)),
        }
        assert phase.command is not None
        finished = await run_process_group(
            self._confined(folder, ["sh", "-c", phase.command], runtime=None),
            cwd=folder / "ws",
            env=env,
            timeout=self.timeout,
        )
        if finished.timed_out:
            return Judgement("timeout", [], f"{phase.id}'s test command timed out after {self.timeout:g}s")
        try:
            return Judgement("ok", read_junit(folder / "out" / junit, prefix=f"{phase.id}/"))
        except JUnitError as error:
            # The command ran the agent's code and left no results: nothing of it counts.
            why = f"{phase.id}'s test command (exit {finished.returncode}) left no results: {error}"
            return Judgement("tampered", [], why)

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
                # Not a hidden test (a collection error): the listing decides what counts;
                # its words explain the missing tests.
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

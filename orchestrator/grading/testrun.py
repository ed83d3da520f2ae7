"""Hidden test runs: a snapshot's files plus the unlocked phases' tests, in a scratch folder.

The hidden tests never enter the workspace. A run gets a copy of the snapshot in ``<run>/ws``
(the working directory, importable): the previous run's copy, checked and updated by the
difference of the two snapshots (``export.py``), so its cost follows the change, not the
workspace. It copies each phase's tests to ``<run>/hidden/<phase>_<random>``
(checking every file against the seal taken when the session started) and runs them through
the hardened harness (``harness.py``) inside the sandbox (``sandbox.py``): under bubblewrap and
inside ``async with runner``, as a fork of the session's warm interpreter (``warm.py``);
otherwise in a fresh interpreter, as every weaker sandbox does. A ``command:`` phase runs its
command instead, a verifier with its task's mounts (``verifier.py``). A listed test that
did not report is *missing* and a skipped hidden test counts as failed: a hidden test passes
only by running. Whatever the run's status, the policy (``policy.py``) decides whether its
verdicts count; those that do not are voided here, before anyone reads them.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import anyio
import structlog

from orchestrator.challenge.model import Challenge, Phase
from orchestrator.grading.canaries import Canaries, plant_canaries
from orchestrator.grading.collect import CollectionError
from orchestrator.grading.effects import EFFECTS, PROBE, Effect, probe_settings, read_effects
from orchestrator.grading.export import KeptExport
from orchestrator.grading.groups import Membership, membership
from orchestrator.grading.harness import (
    BOOTSTRAP,
    Judgement,
    bootstrap_argv,
    bootstrap_settings,
    judge,
    last_lines,
    pytest_args,
    read_stream,
)
from orchestrator.grading.isolation import (
    HOST_EFFECTS,
    SCRIPTS,
    cold_host,
    host_settings,
    isolated,
    per_call,
    seclude,
    strength,
    workspace_owner,
)
from orchestrator.grading.junit import Verdict
from orchestrator.grading.policy import Status, counts, void
from orchestrator.grading.processes import Finished, run_process_group
from orchestrator.grading.runtime import Runtime, runtime_for
from orchestrator.grading.sandbox import Mount, Places, Sandbox, detect_sandbox
from orchestrator.grading.seal import INI, SUPPORT, hidden_files, support_files
from orchestrator.grading.testids import covers, list_tests
from orchestrator.grading.venvs import Environment, EnvironmentFailure, cache_root
from orchestrator.grading.verifier import (
    CannotMount,
    ResultError,
    could_not_start,
    read_results,
    verifier_mounts,
)
from orchestrator.grading.warm import ZYGOTE, WarmFailure, WarmInterpreter
from orchestrator.seams import Repository
from triggers import PhaseResult, TestOutcome

__all__ = ["PytestRunner", "TestRun", "refused", "superseded_by"]

logger = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class TestRun:
    """The verdicts of one run of the hidden tests on one snapshot (void unless ``ok``)."""

    __test__ = False

    status: Status
    phases: tuple[PhaseResult, ...]
    detail: str = ""
    seconds: float = 0.0
    #: the prohibited effects the run attempted (``effects.py``); None: not watched
    effects: tuple[Effect, ...] | None = None


def superseded_by(challenge: Challenge, phases: Sequence[str]) -> set[str]:
    """Tests that the unlocked ``phases`` supersede; they no longer run."""
    return {test for phase in challenge.phases if phase.id in phases for test in phase.supersedes}


def refused(
    challenge: Challenge, phases: Sequence[str], detail: str, groups: Membership | None = None
) -> TestRun:
    """The verdicts of a snapshot that was refused: every listed test failed, and why.

    Each group counts its listed tests as failed: by ``groups`` (the session's membership), or,
    without it, by the glob groups alone (marker groups need the collection).
    """
    superseded = superseded_by(challenge, phases)
    groups = groups if groups is not None else Membership(challenge, {})
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
        results.append(PhaseResult(phase.id, 0, len(tests), tests, groups.results(phase.id, tests)))
    return TestRun("refused", tuple(results), detail)


def _batches(phases: list[Phase]) -> list[list[Phase]]:
    """The pytest processes a run needs: phases with the same ``testing: args`` and isolation
    share one (pytest's options, and where the workspace's code runs, hold for a whole
    process), in phase order."""
    batches: dict[tuple[tuple[str, ...], bool], list[Phase]] = {}
    for phase in phases:
        batches.setdefault((phase.args, isolated(phase)), []).append(phase)
    return list(batches.values())


def _both(tests: tuple[Effect, ...] | None, host: tuple[Effect, ...] | None) -> tuple[Effect, ...] | None:
    """The effects the tests' probe and the workspace host's noted; None unless both watched."""
    if tests is None or host is None:
        return None
    return tuple(dict.fromkeys((*tests, *host)))


def _results_folder(folder: Path, phase: Phase) -> Path:
    """Where the run in ``folder`` keeps ``phase``'s verifier results (mounted at ``verifier.results``)."""
    return folder / "results" / phase.id


def _is_superseded(test_id: str, superseded: set[str]) -> bool:
    return any(covers(s, test_id) for s in superseded)


def _copy(
    files: Iterable[tuple[str, bytes]], target: Path, label: str, sealed: Mapping[str, str] | None
) -> list[str]:
    """Write ``files`` under ``target``; what differs from their seal, in words."""
    target.mkdir(parents=True, exist_ok=True)
    found: dict[str, str] = {}
    for name, data in files:
        found[name] = hashlib.sha256(data).hexdigest()
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_bytes(data)
    if sealed is None:
        return []
    return [
        f"hidden test file {label}/{name} "
        + ("added" if name not in sealed else "removed" if name not in found else "changed")
        + " since the session started"
        for name in sorted(set(sealed) | set(found))
        if sealed.get(name) != found.get(name)
    ]


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
        return _copy(hidden_files(phase.tests), self.root / folder, phase.id, sealed)

    def add_support(self, files: Iterable[tuple[str, bytes]], sealed: Mapping[str, str] | None) -> list[str]:
        """Copy the support folder and ini into the root, above every phase (its conftest.py
        applies to all); what differs from their seal, in words."""
        return _copy(files, self.root, SUPPORT, sealed)

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


class PytestRunner:
    """Runs a challenge's hidden tests on workspace snapshots, one subprocess per run.

    ``async with runner`` keeps a warm interpreter for the runs made inside it (bubblewrap
    only): it starts on entry, so a session pays for importing pytest once, off the hot path,
    and it ends on exit.
    """

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
        self._warm: WarmInterpreter | None = None
        self._home = scratch / "warm"  # the warm interpreter's harness, log, and every run folder
        # A separate user's runs happen outside the run folder (Sandbox.workdir): none is kept there.
        self.exports = KeptExport(repo, None if self.sandbox.user else scratch / "export")
        #: phase → file → sha256, taken when the session started; None: not checked
        self.sealed = sealed
        #: which groups each test is in: fixed once per session, before any run (``groups.py``)
        self._membership: Membership | None = None
        self._listings = {
            phase.id: {i for ids in list_tests(phase.id, phase.tests).values() for i in ids}
            for phase in challenge.phases
            if phase.command is None
        }
        #: whether a phase runs the agent's code in a workspace host (``isolation.py``)
        self._isolated = any(isolated(phase) for phase in challenge.phases)
        if self._isolated and self.sandbox.kind != "bubblewrap":  # a weaker boundary is never silent
            logger.warning("weaker isolation", challenge=challenge.id, isolation=strength(self.sandbox))

    async def __aenter__(self) -> PytestRunner:
        """Fix the groups' membership, and start the warm interpreter (under bubblewrap): the runs
        until the exit are forks of it."""
        pytest_phases = any(phase.command is None for phase in self.challenge.phases)
        if pytest_phases:  # the groups' membership too, off the first run's path
            with contextlib.suppress(CollectionError):  # the first run says why
                await self._membership_ready()
        if self.sandbox.kind != "bubblewrap" or self._warm is not None or not pytest_phases:
            return self
        try:
            runtime = await self._runtime_ready()
        except EnvironmentFailure:
            return self  # each run says so, as it would without the warm interpreter
        for name in ("harness", "runs"):
            (self._home / name).mkdir(parents=True, exist_ok=True)
        for source in (BOOTSTRAP, ZYGOTE, PROBE, *(script for script, _ in SCRIPTS)):
            shutil.copyfile(source, self._home / "harness" / source.name)
        places = self.sandbox.places(self._home, self.environment)
        # Compiled once in the warm interpreter, not in every run: the probe, isolation's scripts.
        scripts = [*([(PROBE, "changeup_probe")] if self.challenge.model.prohibited_effects else [])]
        scripts += list(SCRIPTS) if self._isolated else []
        preload = [(str(places.harness / script.name), name) for script, name in scripts]
        zygote = str(places.harness / ZYGOTE.name)
        command = self.sandbox.warm(self._home, self.environment, runtime, zygote, preload)
        self._warm = WarmInterpreter(command, env=self._env(places), log=self._home / "zygote.log")
        with contextlib.suppress(WarmFailure):  # the first run tries again, and says why if it fails
            await self._warm.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        """End the warm interpreter, and every run of it."""
        warm, self._warm = self._warm, None
        if warm is not None:
            await warm.aclose()

    @property
    def warm(self) -> WarmInterpreter | None:
        """The warm interpreter runs are forked from, inside ``async with`` under bubblewrap."""
        return self._warm

    async def _runtime_ready(self) -> Runtime:
        if self._runtime is None:
            self._runtime = await anyio.to_thread.run_sync(runtime_for, self.environment)
        return self._runtime

    async def _membership_ready(self) -> Membership:
        if self._membership is None:
            self._membership = await anyio.to_thread.run_sync(membership, self.challenge, self.environment)
        return self._membership

    async def run(self, tree: str, phases: Sequence[str]) -> TestRun:
        """Export ``tree``, run ``phases``' tests on it, judge the run, and void what does not count."""
        started = time.perf_counter()
        try:
            if self.sandbox.kind == "bubblewrap":
                await self._runtime_ready()
            groups = await self._membership_ready()
        except (EnvironmentFailure, CollectionError) as error:
            # The grader's failure, never the agent's: pytest could not start, so no run would.
            untested = refused(self.challenge, phases, str(error), self._membership)
            return TestRun("invalid", untested.phases, str(error))
        folder = self.sandbox.workdir(self._home / "runs" if self._warm is not None else self.scratch)
        try:
            status, results, detail, effects = await self._run(folder, tree, phases, groups)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        if not counts(status):
            results = void(results, status)
        return TestRun(status, results, detail, time.perf_counter() - started, effects)

    async def _run(
        self, folder: Path, tree: str, phases: Sequence[str], groups: Membership
    ) -> tuple[Status, tuple[PhaseResult, ...], str, tuple[Effect, ...] | None]:
        for name in ("out", "harness"):
            (folder / name).mkdir()
        hidden = HiddenCopy(folder / "hidden")
        chosen = [self.challenge.phase(p) for p in phases]
        broken = [
            problem
            for phase in chosen
            for problem in hidden.add(phase, None if self.sealed is None else self.sealed.get(phase.id, {}))
        ]
        if any(
            phase.command is None for phase in chosen
        ):  # beside the hidden tests: the challenge is out of sight
            sealed = None if self.sealed is None else self.sealed.get(SUPPORT, {})
            broken += hidden.add_support(support_files(self.challenge), sealed)
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
        watched = self.challenge.model.prohibited_effects  # what the probe noted, if it watched
        effects = read_effects(folder / "out" / EFFECTS, hidden.from_run) if watched else None
        if watched and any(isolated(p) for p in chosen if p.command is None):  # and the host's
            effects = _both(effects, read_effects(folder / "out" / HOST_EFFECTS, hidden.from_run))
        return status, self._results(chosen, verdicts, superseded, detail, groups), detail, effects

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
        deselect = sorted(hidden.to_run(test) for test in superseded)
        planted: list[tuple[list[Phase], Canaries]] = []
        batches = _batches([p for p in chosen if p.command is None])
        if batches:
            if self._warm is None:  # the warm interpreter has a copy of its own
                for source in (BOOTSTRAP, PROBE, *(script for script, _ in SCRIPTS)):
                    shutil.copyfile(source, folder / "harness" / source.name)
            for batch in batches:
                folders = [hidden.folder_of(p.id) for p in batch]
                planted.append((batch, plant_canaries(hidden.root, folders, deselect)))
        # The folder goes to the tests' user before the snapshot's copy is in it: the copy
        # comes already theirs, like the output folder, and only its changes are handed over.
        results = [_results_folder(folder, p) for p in chosen if p.verifier is not None]
        for path in results:  # each verifier's fresh, empty, writable results folder
            path.mkdir(parents=True)
        self.sandbox.hand_over(folder, writable=[folder / "out", *results])
        if self._isolated:
            seclude(folder, self.sandbox)  # the separate-user sandbox: the host's user reads neither
            if self.challenge.model.prohibited_effects:  # the host's notes: written by it alone
                (folder / "out" / HOST_EFFECTS).touch(mode=0o644)
        out = (folder / "out").stat()
        ws = folder / "ws"
        await self.exports.take(
            tree, ws, workspace_owner(self.challenge, self.sandbox, (out.st_uid, out.st_gid))
        )
        judgements: list[Judgement] = []
        try:
            for number, (batch, canaries) in enumerate(planted, 1):
                name = "" if number == 1 else f"-{number}"
                judgements.append(await self._pytest(folder, hidden, batch, deselect, canaries, name))
            for phase in (p for p in chosen if p.command is not None):
                judgements.append(await self._command(folder, hidden, phase))
        finally:
            self.exports.give_back(ws)
        return judgements

    def _confined(
        self,
        folder: Path,
        argv: list[str],
        *,
        runtime: Runtime | None,
        mounts: Sequence[Mount] = (),
        workdir: PurePosixPath | None = None,
    ) -> list[str]:
        hide = [folder.parent, *self.hide]
        return self.sandbox.tests(
            argv, folder, self.environment, runtime=runtime, hide=hide, mounts=mounts, workdir=workdir
        )

    async def _pytest(
        self,
        folder: Path,
        hidden: HiddenCopy,
        phases: list[Phase],
        deselect: list[str],
        canaries: Canaries,
        name: str,
    ) -> Judgement:
        """One pytest process over ``phases`` (which share their arguments); its files are ``*<name>``."""
        folders = [hidden.folder_of(p.id) for p in phases]
        places = self.sandbox.places(folder, self.environment)
        timeouts = {hidden.folder_of(p.id): p.timeout for p in phases if p.timeout}
        settings = bootstrap_settings(
            workspace=places.ws,
            hidden=places.hidden,
            out=places.out,
            user=places.user,
            name=name,
            timeouts=timeouts,
            path=[places.hidden, *(places.hidden / f for f in folders)],
        )
        settings.update(probe_settings(self.challenge.model.prohibited_effects, places, f"junit{name}.xml"))
        if isolated(phases[0]):  # its batch shares it: the workspace's code runs in a host
            settings["host"] = host_settings(
                places,
                self.sandbox,
                timeout=per_call(self.timeout),
                effects=settings.get("effects"),
            )
        ini = places.hidden / INI if self.challenge.model.testing.ini is not None else None
        args = pytest_args(
            hidden=places.hidden,
            out=places.out,
            tests=folders,
            deselect=deselect,
            ini=ini,
            extra=phases[0].args,
            name=name,
        )
        if self._warm is not None:
            nproc = self.sandbox.limits.nproc(self.sandbox.test_uid())
            try:
                finished = await self._warm.run(
                    folder.name, settings, args, timeout=self.timeout, nproc=nproc
                )
            except WarmFailure as failure:  # the grader's failure, never the agent's
                return Judgement("invalid", [], str(failure))
        elif "host" in settings:
            async with cold_host(
                settings["host"],
                places,
                self.sandbox,
                folder=folder,
                environment=self.environment,
                runtime=self._runtime,
                env=self._env(places),
            ) as socket:
                settings["host"]["fd"] = socket
                finished = await self._cold(folder, places, settings, args, (socket,))
        else:
            finished = await self._cold(folder, places, settings, args)
        out = folder / "out"
        stream = read_stream(out / f"stream{name}.jsonl")
        return judge(finished, stream, out / f"junit{name}.xml", canaries, self.timeout)

    async def _cold(
        self,
        folder: Path,
        places: Places,
        settings: dict[str, Any],
        args: list[str],
        keep: tuple[int, ...] = (),
    ) -> Finished:
        """A pytest process of its own (no warm interpreter); it inherits ``keep``."""
        return await run_process_group(
            self._confined(
                folder,
                bootstrap_argv(places.python, places.harness / BOOTSTRAP.name, settings, args),
                runtime=self._runtime,
            ),
            cwd=folder / "ws",
            env=self._env(places),
            timeout=self.timeout,
            pass_fds=keep,
        )

    async def _command(self, folder: Path, hidden: HiddenCopy, phase: Phase) -> Judgement:
        """A ``command:`` phase's run, judged by the result it leaves; a verifier's with its
        task's view (``verifier.py``)."""
        assert phase.command is not None
        places = self.sandbox.places(folder, self.environment)
        junit = folder / "out" / f"junit-{phase.id}.xml"
        env = {
            **self._env(places),
            "CHANGEUP_JUNIT": str(places.out / junit.name),
            "CHANGEUP_TESTS": str(places.hidden / hidden.folder_of(phase.id)),
        }
        argv = ["sh", "-c", phase.command]
        results: Path | None = None
        if phase.verifier is None:
            confined = self._confined(folder, argv, runtime=None)
        else:
            results = _results_folder(folder, phase)
            try:
                mounts = verifier_mounts(
                    phase.id,
                    phase.verifier,
                    self.sandbox,
                    workspace=folder / "ws",
                    tests=folder / "hidden" / hidden.folder_of(phase.id),
                    results=results,
                )
            except CannotMount as error:  # the grader's side cannot give the task its view
                return Judgement("invalid", [], str(error))
            env.update(CHANGEUP_TESTS=phase.verifier.tests, PYTHONPATH=phase.verifier.workspace)
            workdir = PurePosixPath(phase.verifier.workspace)
            confined = self._confined(folder, argv, runtime=None, mounts=mounts, workdir=workdir)
        finished = await run_process_group(confined, cwd=folder / "ws", env=env, timeout=self.timeout)
        if finished.timed_out:
            return Judgement("timeout", [], f"{phase.id}'s test command timed out after {self.timeout:g}s")
        try:
            return Judgement("ok", read_results(phase.id, junit, results))
        except ResultError as error:
            code = finished.returncode
            said = last_lines(finished.output, 6)
            if could_not_start(code, junit, results):  # nothing of the agent's ran: never its zero
                why = f"{phase.id}'s test command could not start (exit {code}): {said}"
                return Judgement("invalid", [], why)
            # The command ran the agent's code and left no results: nothing of it counts.
            why = f"{phase.id}'s test command (exit {code}) left no results: {error}"
            return Judgement("tampered", [], f"{why}; its output ended: {said}" if said else why)

    def _results(
        self,
        phases: list[Phase],
        verdicts: list[Verdict],
        superseded: set[str],
        problem: str,
        groups: Membership,
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
                groups.results(phase.id, by_phase[phase.id]),
            )
            for phase in phases
        )

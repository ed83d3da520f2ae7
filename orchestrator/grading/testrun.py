"""Hidden test runs: a snapshot's files plus the unlocked phases' tests, in a scratch folder.

The hidden tests never enter the workspace. A run gets a copy of the snapshot in ``<run>/ws``
(the working directory, importable): the previous run's copy, checked and updated by the
difference of the two snapshots (``export.py``), so its cost follows the change, not the
workspace. It copies each phase's tests to ``<run>/hidden/<phase>_<random>``
(checking every file against the seal taken when the session started) and runs them through
the hardened harness (``harness.py``) inside the sandbox (``sandbox.py``): under bubblewrap and
inside ``async with runner``, as a fork of the session's warm interpreter (``warm.py``);
otherwise in a fresh interpreter, as every weaker sandbox does. Given the session's control
groups (``bounds.py``), every process of a run is in a group of its own with the run's memory,
process and CPU limits, and the run is over only once that group is empty and gone; a run that
went over a limit (the kernel killed a process at its memory limit, refused a fork at its
process limit, or the run left its ``/tmp`` or ``/dev/shm`` full) is ``over_limits``. A
``command:`` phase runs its command instead, a verifier with its task's mounts
(``verifier.py``); its JUnit XML comes through a pipe changeup reads, never a file the code
under test could write. A phase retired by a later one's unlocking (``retire:``) is not run;
the others get their ``testing: args`` with ``{current}``, the latest of the run's phases,
filled in (the run's phases are the engine's decision, logged, so a replay or re-score fills
them the same). A listed test that did not report is *missing* and a skipped hidden test
counts as failed: a hidden test passes only by running. Whatever the run's status, the policy
(``policy.py``) decides whether its verdicts count; those that do not are voided here, before
anyone reads them.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

import anyio
import structlog

from orchestrator.challenge.model import Challenge, Phase
from orchestrator.challenge.testids import covers, hidden_files, list_tests
from orchestrator.challenge.uses import needs_of
from orchestrator.grading.bounds import RunGroup, SessionGroups, test_bounds
from orchestrator.grading.canaries import Canaries, plant_canaries
from orchestrator.grading.collect import CollectionError
from orchestrator.grading.diagnosis import annotate, missing, run_note
from orchestrator.grading.effects import EFFECTS, PROBE, probe_settings, read_effects
from orchestrator.grading.export import KeptExport
from orchestrator.grading.groups import Membership, membership
from orchestrator.grading.harness import (
    BOOTSTRAP,
    Judgement,
    bootstrap_argv,
    bootstrap_settings,
    copy_harness,
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
from orchestrator.grading.policy import counts, void
from orchestrator.grading.sandbox import INSIDE, Mount, Places, Sandbox, detect_sandbox
from orchestrator.grading.seal import INI, SUPPORT, support_files
from orchestrator.grading.verifier import (
    JUNIT_LIMIT,
    JUNIT_NAME,
    CannotMount,
    ResultError,
    could_not_start,
    read_results,
    verifier_mounts,
    with_output,
)
from orchestrator.grading.warm import ZYGOTE, WarmFailure, WarmInterpreter
from orchestrator.log.records import Effect
from orchestrator.log.verdicts import Status, TestRun
from orchestrator.seams import Repository
from orchestrator.system.pipes import ResultPipe
from orchestrator.system.processes import Finished, run_process_group
from orchestrator.system.runtime import Runtime, runtime_for
from orchestrator.system.toolsets import Toolset, resolve
from orchestrator.system.venvs import Environment, EnvironmentFailure
from triggers import PhaseResult, TestOutcome

__all__ = ["PytestRunner", "refused", "running", "superseded_by"]

#: How a test command drops to the test user as root under bubblewrap (copied beside the bootstrap).
LAUNCH = Path(__file__).with_name("launch.py")

logger = structlog.get_logger(__name__)


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
    for phase_id in running(challenge, phases):
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


def running(challenge: Challenge, phases: Sequence[str]) -> list[str]:
    """The phases of a run on ``phases`` (the unlocked ones) whose tests run: the retired aside."""
    retired = challenge.retired(phases)
    return [phase for phase in phases if phase not in retired]


def _batches(phases: list[Phase], current: str) -> list[list[Phase]]:
    """The pytest processes a run needs: phases with the same ``testing: args`` (placeholders
    filled for the run's ``current`` phase) and isolation share one (pytest's options, and where
    the workspace's code runs, hold for a whole process), in phase order."""
    batches: dict[tuple[tuple[str, ...], bool], list[Phase]] = {}
    for phase in phases:
        batches.setdefault((phase.arguments(current), isolated(phase)), []).append(phase)
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
        sealed: Mapping[str, Mapping[str, str]] | None = None,
        groups: SessionGroups | None = None,
    ) -> None:
        self.challenge = challenge
        self.repo = repo
        self.scratch = scratch
        self.environment = environment
        self.timeout = timeout if timeout is not None else challenge.test_run_limit
        #: each run's limits; its control group comes from the session's ``groups`` (None: no groups)
        self.bounds = test_bounds(challenge.model.limits)
        self.groups = groups
        sandbox = sandbox or detect_sandbox(environment.python)
        self.sandbox = replace(sandbox, limits=replace(sandbox.limits, processes=self.bounds.processes))
        #: what the tests declare beyond Python (every phase's: one private root serves them all)
        self.needs = needs_of(challenge)
        self._toolset: Toolset | None = None
        self._runtime: Runtime | None = None
        self._warm: WarmInterpreter | None = None
        self._home = scratch / "warm"  # the warm interpreter's harness, log, and every run folder
        self._removals: list[threading.Thread] = []  # warm run folders being removed (``_remove``)
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
        copy_harness(self._home / "harness")
        for source in (ZYGOTE, PROBE, *(script for script, _ in SCRIPTS)):
            shutil.copyfile(source, self._home / "harness" / source.name)
        places = self.sandbox.places(self._home, self.environment)
        # Compiled once in the warm interpreter, not in every run: the probe, isolation's scripts.
        scripts = [*([(PROBE, "changeup_probe")] if self.challenge.model.prohibited_effects else [])]
        scripts += list(SCRIPTS) if self._isolated else []
        preload = [(str(places.harness / script.name), name) for script, name in scripts]
        zygote = str(places.harness / ZYGOTE.name)
        cgroups = (
            self.groups.tests.paths if self.groups is not None and self.groups.tests is not None else None
        )
        command = self.sandbox.warm(self._home, self.environment, runtime, zygote, preload, cgroups)
        self._warm = WarmInterpreter(command, env=self._env(places), log=self._home / "zygote.log")
        with contextlib.suppress(WarmFailure):  # the first run tries again, and says why if it fails
            await self._warm.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        """End the warm interpreter, and every run of it; wait for their folders to be removed."""
        warm, self._warm = self._warm, None
        if warm is not None:
            await warm.aclose()
        removals, self._removals = self._removals, []
        with anyio.CancelScope(shield=True):
            for thread in removals:
                await anyio.to_thread.run_sync(thread.join)

    @property
    def warm(self) -> WarmInterpreter | None:
        """The warm interpreter runs are forked from, inside ``async with`` under bubblewrap."""
        return self._warm

    async def _toolset_ready(self) -> Toolset:
        if self._toolset is None:
            self._toolset = await anyio.to_thread.run_sync(resolve, self.needs)
        return self._toolset

    async def _runtime_ready(self) -> Runtime:
        if self._runtime is None:
            toolset = await self._toolset_ready()
            self._runtime = await anyio.to_thread.run_sync(runtime_for, self.environment, toolset)
        return self._runtime

    async def _membership_ready(self) -> Membership:
        if self._membership is None:
            self._membership = await anyio.to_thread.run_sync(membership, self.challenge, self.environment)
        return self._membership

    async def run(self, tree: str, phases: Sequence[str]) -> TestRun:
        """Export ``tree``, run ``phases``' tests on it, judge the run, and void what does not count."""
        started = time.perf_counter()
        try:
            await self._toolset_ready()
            if self.sandbox.kind == "bubblewrap":
                await self._runtime_ready()
            groups = await self._membership_ready()
        except (EnvironmentFailure, CollectionError) as error:
            # The grader's failure, never the agent's: pytest could not start, so no run would.
            untested = refused(self.challenge, phases, str(error), self._membership)
            return TestRun("invalid", untested.phases, str(error))
        warm = self._warm is not None
        folder = self.sandbox.workdir(self._home / "runs" if warm else self.scratch)
        group = self.groups.run() if self.groups is not None else None
        try:
            status, results, detail, effects = await self._run(folder, tree, phases, groups, group)
        finally:
            self._remove(folder, warm)
            with anyio.CancelScope(shield=True):  # the run is over only once its group is gone
                over = await group.close() if group is not None else ""
        if over:  # the agent's code used more than a run may: its failure (unless the grader never ran)
            said = f"the run went {over}"
            detail = f"{said}; {detail}" if detail else said
            status = "invalid" if status == "invalid" else "over_limits"
        if not counts(status):
            results = void(results, status)
        return TestRun(status, results, detail, time.perf_counter() - started, effects)

    def _remove(self, folder: Path, warm: bool) -> None:
        """Remove a run's folder; a warm run's in a thread of its own, joined at the exit. Its
        folders were mount points in the run's namespaces, which the kernel takes down after the
        run's processes are gone: removing one before that waits out an RCU grace period, 10 ms
        and more here, on the way from the run's end to its result. Nothing reads it meanwhile."""
        if not warm:
            shutil.rmtree(folder, ignore_errors=True)
            return
        self._removals = [thread for thread in self._removals if thread.is_alive()]
        thread = threading.Thread(
            target=shutil.rmtree, args=(folder, True), name="changeup-run-folder", daemon=True
        )
        thread.start()
        self._removals.append(thread)

    async def _run(
        self, folder: Path, tree: str, phases: Sequence[str], groups: Membership, group: RunGroup | None
    ) -> tuple[Status, tuple[PhaseResult, ...], str, tuple[Effect, ...] | None]:
        for name in ("out", "harness"):
            (folder / name).mkdir()
        hidden = HiddenCopy(folder / "hidden")
        chosen = [self.challenge.phase(p) for p in running(self.challenge, phases)]
        current = self.challenge.current(phases)
        broken = [
            problem
            for phase in chosen
            for problem in hidden.add(phase, None if self.sealed is None else self.sealed.get(phase.id, {}))
        ]
        if any(phase.command is None for phase in chosen) or self.challenge.model.testing.support:
            # beside the hidden tests (a test command finds them at $CHANGEUP_TESTS/..): the
            # challenge is out of sight
            sealed = None if self.sealed is None else self.sealed.get(SUPPORT, {})
            broken += hidden.add_support(support_files(self.challenge), sealed)
        superseded = superseded_by(self.challenge, phases)
        if broken:
            judgements = [Judgement("tampered", [], "; ".join(broken))]
        else:
            judgements = await self._test(folder, tree, hidden, chosen, superseded, current, group)
        # The worst status wins: one void part voids the whole run.
        order: tuple[Status, ...] = ("invalid", "tampered", "over_limits", "timeout", "refused", "ok")
        status: Status = min((j.status for j in judgements), key=order.index, default="ok")
        verdicts = [
            Verdict(hidden.from_run(v.id), v.outcome, v.detail) for j in judgements for v in j.verdicts
        ]
        detail = "; ".join(j.detail for j in judgements if j.detail)
        watched = self.challenge.model.prohibited_effects  # what the probe noted, if it watched
        effects = read_effects(folder / "out" / EFFECTS, hidden.from_run) if watched else None
        if watched and any(isolated(p) for p in chosen if p.command is None):  # and the host's
            effects = _both(effects, read_effects(folder / "out" / HOST_EFFECTS, hidden.from_run))
        results = self._results(chosen, verdicts, superseded, detail, groups)
        # A test that failed for want of an undeclared tool or data says so, and so does the run.
        toolset = self._toolset or Toolset()
        tools, data = [t.name for t in toolset.tools], toolset.data
        results, lacking = annotate(results, tools, data)
        for judgement in judgements:  # a command that could not start: sh: 1: bash: not found
            lacking += [pair for pair in missing(judgement.detail, tools, data) if pair not in lacking]
        note = run_note(lacking)
        return status, results, "; ".join(part for part in (detail, note) if part), effects

    def _env(self, places: Places) -> dict[str, str]:
        # Nothing of changeup's own environment leaks in: no PYTHON*/PYTEST_* settings; the
        # declared tools' folders and the declared data's variables (``toolsets.py``) do.
        toolset = self._toolset or Toolset()
        path = dict.fromkeys([str(Path(places.python).parent), *toolset.path, "/usr/bin", "/bin"])
        return {
            **toolset.env,
            "PATH": os.pathsep.join(path),
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
        self,
        folder: Path,
        tree: str,
        hidden: HiddenCopy,
        chosen: list[Phase],
        superseded: set[str],
        current: str,
        group: RunGroup | None,
    ) -> list[Judgement]:
        """Run the ``chosen`` phases' tests in ``folder`` on a copy of snapshot ``tree``, in a run
        whose latest unlocked phase is ``current``."""
        deselect = sorted(hidden.to_run(test) for test in superseded)
        planted: list[tuple[list[Phase], Canaries]] = []
        batches = _batches([p for p in chosen if p.command is None], current)
        if batches:
            if self._warm is None:  # the warm interpreter has a copy of its own
                copy_harness(folder / "harness")
                for source in (PROBE, *(script for script, _ in SCRIPTS)):
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
                args = batch[0].arguments(current)
                judgements.append(
                    await self._pytest(folder, hidden, batch, args, deselect, canaries, name, group)
                )
            for phase in (p for p in chosen if p.command is not None):
                judgements.append(await self._command(folder, hidden, phase, group))
        finally:
            self.exports.give_back(ws)
        return judgements

    def _confined(
        self,
        folder: Path,
        argv: list[str],
        *,
        runtime: Runtime | None,
        group: RunGroup | None,
        mounts: Sequence[Mount] = (),
        workdir: PurePosixPath | None = None,
    ) -> list[str]:
        return self.sandbox.tests(
            argv,
            folder,
            self.environment,
            runtime=runtime,
            mounts=mounts,
            workdir=workdir,
            tmp_mb=self.bounds.tmp_mb,
            join=group.cgroup.launcher() if group is not None else (),
        )

    async def _pytest(
        self,
        folder: Path,
        hidden: HiddenCopy,
        phases: list[Phase],
        extra: tuple[str, ...],
        deselect: list[str],
        canaries: Canaries,
        name: str,
        group: RunGroup | None,
    ) -> Judgement:
        """One pytest process over ``phases``, which share their arguments ``extra``; its files are
        ``*<name>``."""
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
            extra=extra,
            name=name,
        )
        if self._warm is not None:
            # RLIMIT_NPROC counts every process of the tests' user machine-wide, so runs of other
            # sessions at the same moment eat its budget: where the run's own group bounds its
            # processes (pids.max, counted per run), it is that group's limit alone.
            bounded = group is not None and "pids" in group.cgroup.controllers
            nproc = None if bounded else self.sandbox.limits.nproc(self.sandbox.test_uid())
            # The run's group, where the zygote has it (Sandbox.warm binds the tests' groups there):
            # the files its leader, one thread, moves itself in by (``Cgroup.join_file``).
            join = group.cgroup.join_file if group is not None else ""
            joins = [str(INSIDE / "cgroup" / key / p.name / join) for key, p in _paths(group)]
            try:
                finished = await self._warm.run(
                    folder.name,
                    settings,
                    args,
                    timeout=self.timeout,
                    nproc=nproc,
                    tmp_mb=self.bounds.tmp_mb,
                    cgroup=joins,
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
                tmp_mb=self.bounds.tmp_mb,
                join=group.cgroup.launcher() if group is not None else (),
            ) as socket:
                settings["host"]["fd"] = socket
                finished = await self._cold(folder, places, settings, args, group, (socket,))
        else:
            finished = await self._cold(folder, places, settings, args, group)
        out = folder / "out"
        stream = read_stream(out / f"stream{name}.jsonl")
        judgement = judge(finished, stream, out / f"junit{name}.xml", canaries, self.timeout)
        if finished.filled and judgement.status != "invalid":
            full = " and ".join(finished.filled)
            return Judgement("over_limits", [], f"the run left {full} full ({self.bounds.tmp_mb} MB each)")
        return judgement

    async def _cold(
        self,
        folder: Path,
        places: Places,
        settings: dict[str, Any],
        args: list[str],
        group: RunGroup | None,
        keep: tuple[int, ...] = (),
    ) -> Finished:
        """A pytest process of its own (no warm interpreter) in the run's ``group``; it inherits ``keep``."""
        return await run_process_group(
            self._confined(
                folder,
                bootstrap_argv(places.python, places.harness / BOOTSTRAP.name, settings, args),
                runtime=self._runtime,
                group=group,
            ),
            cwd=folder / "ws",
            env=self._env(places),
            timeout=self.timeout,
            pass_fds=keep,
        )

    async def _command(
        self, folder: Path, hidden: HiddenCopy, phase: Phase, group: RunGroup | None
    ) -> Judgement:
        """A ``command:`` phase's run, judged by the result it leaves; a verifier's with its
        task's view (``verifier.py``).

        Its JUnit XML comes through a pipe only changeup reads (``$CHANGEUP_JUNIT``), not a file
        the code under test could replace; a plain command's exit must agree with it.
        """
        assert phase.command is not None
        places = self.sandbox.places(folder, self.environment)
        argv = ["sh", "-c", phase.command]
        if places.user is not None:  # as root under bubblewrap: the private root has no setpriv
            for source in (BOOTSTRAP, LAUNCH):
                if not (folder / "harness" / source.name).exists():
                    shutil.copyfile(source, folder / "harness" / source.name)
            uid, gid = places.user
            launch = str(places.harness / LAUNCH.name)
            argv = [places.python, "-I", "-S", launch, str(uid), str(gid), "--", *argv]
        results: Path | None = None
        mounts: list[Mount] = []
        workdir: PurePosixPath | None = None
        env = {**self._env(places), "CHANGEUP_TESTS": str(places.hidden / hidden.folder_of(phase.id))}
        if phase.verifier is not None:
            results = _results_folder(folder, phase)
            try:
                mounts = verifier_mounts(
                    phase.id,
                    phase.verifier,
                    self.sandbox,
                    self._runtime,
                    workspace=folder / "ws",
                    tests=folder / "hidden" / hidden.folder_of(phase.id),
                    results=results,
                )
            except CannotMount as error:  # the grader's side cannot give the task its view
                return Judgement("invalid", [], str(error))
            env.update(CHANGEUP_TESTS=phase.verifier.tests, PYTHONPATH=phase.verifier.workspace)
            workdir = PurePosixPath(phase.verifier.workdir or phase.verifier.workspace)
        confined = self._confined(
            folder, argv, runtime=self._runtime, group=group, mounts=mounts, workdir=workdir
        )
        junit = ResultPipe(JUNIT_LIMIT)
        env["CHANGEUP_JUNIT"] = junit.path
        async with junit, anyio.create_task_group() as readers:
            readers.start_soon(junit.read)
            finished = await run_process_group(
                confined, cwd=folder / "ws", env=env, timeout=self.timeout, pass_fds=(junit.fd,)
            )
            await junit.close_writer()
            readers.cancel_scope.cancel()
        if finished.timed_out:
            return Judgement("timeout", [], f"{phase.id}'s test command timed out after {self.timeout:g}s")
        code = finished.returncode
        said = last_lines(finished.output, 6)
        try:
            if junit.over:
                raise ResultError(f"{JUNIT_NAME} got {junit.size:,} bytes, more than a result may have")
            verdicts = with_output(read_results(phase.id, junit.data, results), finished.output)
        except ResultError as error:
            if could_not_start(code, junit.data, results):  # nothing of the agent's ran: never its zero
                why = f"{phase.id}'s test command could not start (exit {code}): {said}"
                return Judgement("invalid", [], why)
            # The command ran the agent's code and left no results: nothing of it counts.
            why = f"{phase.id}'s test command (exit {code}) left no results: {error}"
            return Judgement("tampered", [], f"{why}; its output ended: {said}" if said else why)
        if (
            phase.verifier is None
            and code != 0
            and not any(v.outcome in ("failed", "error") for v in verdicts)
        ):
            # A runner that failed reports a failure; one that says all passed exits 0.
            why = (
                f"{phase.id}'s test command exited {code}, yet its JUnit XML reports no failing test: "
                "a result its own exit contradicts is not believed"
            )
            return Judgement("tampered", [], f"{why}; its output ended: {said}" if said else why)
        return Judgement("ok", verdicts)

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


def _paths(group: RunGroup | None) -> list[tuple[str, Path]]:
    """Each hierarchy's folder of a run's group (none without one)."""
    return list(group.cgroup.paths.items()) if group is not None else []

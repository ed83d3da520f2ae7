"""The challenge format: pydantic models of ``challenge.yaml`` and the loaded :class:`Challenge`.

The seed shape (``initial_briefing`` plus ``triggers`` with ``condition``, ``message`` and
``new_tests``) is valid as written; everything else is optional and has a default. Unknown
keys are errors. ``changeup schema`` prints the JSON Schema of :class:`ChallengeFile`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

from orchestrator.challenge.placeholders import fill
from orchestrator.system.interpreters import Interpreter, NoInterpreter, interpreter_for
from triggers import Spec, SpecError, parse_duration
from triggers.durations import UNITS
from triggers.typecheck import did_you_mean

__all__ = [
    "DATA_SETS",
    "EFFECTS",
    "ID_RULES",
    "IGNORED_PARTS",
    "ISOLATIONS",
    "MESSAGE_KINDS",
    "PATTERNS",
    "BrokenVariant",
    "Calibration",
    "Challenge",
    "ChallengeFile",
    "ChallengeModel",
    "CheckName",
    "Criterion",
    "Group",
    "GroupModel",
    "ImportedFrom",
    "JudgeRules",
    "Judged",
    "Limits",
    "Phase",
    "PhaseModel",
    "Retirement",
    "Scoring",
    "TriggerModel",
    "Verifier",
    "challenge_digest",
]

PatternName = Literal["pivot", "escalation", "contradiction", "retraction", "revision"]
MessageKind = Literal[
    "pivot",
    "escalation",
    "contradiction",
    "retraction",
    "revision",
    "deadline",
    "notice",
]
#: How hidden pytest tests reach the workspace's code (``orchestrator/grading/isolation.py``).
IsolationName = Literal["in-process", "process", "subprocess"]
#: Effects a challenge can prohibit, as changeup observes them (``orchestrator/grading/effects.py``).
EffectName = Literal["network", "writes-outside-workspace"]
PATTERNS: tuple[str, ...] = get_args(PatternName)
MESSAGE_KINDS: tuple[str, ...] = get_args(MessageKind)
EFFECTS: tuple[str, ...] = get_args(EffectName)
ISOLATIONS: tuple[str, ...] = get_args(IsolationName)

IDENTIFIER = r"^[A-Za-z][A-Za-z0-9_]*$"
CHALLENGE_ID = r"^[a-z0-9][a-z0-9._-]*$"
CRITERION_ID = r"^[A-Za-z][A-Za-z0-9_-]*$"
VARIANT_NAME = r"^[a-z0-9][a-z0-9_-]*$"

#: Each name pattern of the format, with its rule in words: error messages quote these.
ID_RULES: dict[str, str] = {
    IDENTIFIER: "start with a letter and hold only letters, digits and _ (e.g. phase2)",
    CHALLENGE_ID: (
        "be lower-case: start with a letter or digit and hold only a-z, 0-9, '.', '_' and '-' "
        "(e.g. export-time)"
    ),
    CRITERION_ID: "start with a letter and hold only letters, digits, _ and - (e.g. old-rule-kept)",
    VARIANT_NAME: (
        "be lower-case: start with a letter or digit and hold only a-z, 0-9, _ and - (e.g. suffix-only)"
    ),
}


def _seconds(value: Any) -> Any:
    """Durations may be written ``30min`` or as a number of seconds (but not as true/false)."""
    if isinstance(value, bool):
        raise ValueError(f"expected a duration such as 30s, 5m, 30min or 2h, got {value!r}")
    if isinstance(value, str):
        return parse_duration(value)
    return value


def _case_insensitive(word: str) -> str:
    """A regular expression matching ``word`` in any case: JSON Schema patterns have no flags."""
    return "".join(f"[{c.lower()}{c.upper()}]" for c in word)


# What parse_duration reads, for editors: a number and a unit, or a plain number of seconds.
_DURATION_SCHEMA = {
    "anyOf": [
        {"type": "number", "minimum": 0},
        {
            "type": "string",
            "pattern": rf"^\s*\d+(\.\d+)?\s*({'|'.join(map(_case_insensitive, UNITS))})\s*$",
        },
    ],
    "description": "A duration: 30s, 5m, 30min, 2h, or a number of seconds.",
}

Seconds = Annotated[float, Field(ge=0), BeforeValidator(_seconds), WithJsonSchema(_DURATION_SCHEMA)]
Identifier = Annotated[str, Field(pattern=IDENTIFIER)]

#: The system data a challenge can declare (``testing: data``); what each holds is ``system/toolsets.py``'s.
DATA_SETS = ("zoneinfo", "ca-certificates", "locales")
#: A program: a name found on PATH, or an absolute path (semantics checks which, and says why).
ToolName = Annotated[str, Field(min_length=1)]
# Any string, so that semantics can name an unknown one with a "did you mean"; editors see the names.
DataName = Annotated[str, WithJsonSchema({"enum": list(DATA_SETS), "description": "Named system data."})]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class PhaseTesting(_Strict):
    """How one phase's hidden pytest tests run, on top of the challenge's ``testing:``."""

    args: list[str] = Field(
        default_factory=list,
        description=(
            "pytest arguments appended to the challenge's, for this phase. {phase} stands for the phase "
            "being graded, {current} for the latest unlocked phase of the run; {{ and }} for braces."
        ),
    )
    timeout: Seconds | None = Field(
        None, description="Per-test timeout of this phase's tests (overrides the challenge's)."
    )
    isolation: IsolationName | None = Field(
        None,
        description=(
            "How the hidden tests reach the workspace's code: in-process (they import it into their "
            "own process), process (it runs in a separate sandboxed process, and values cross as "
            "plain data or handles, so none of its code runs where the tests decide) or subprocess "
            "(the hidden tests start the program themselves as a child process; nothing of it is in "
            "the test process, and calibration plans no impostor). A phase's overrides the "
            "challenge's; default in-process."
        ),
    )
    tools: list[ToolName] = Field(
        default_factory=list,
        description=(
            "Programs the hidden tests (or a test command) run, beyond Python: names found on this "
            "machine's PATH (bash, git, node, g++) or absolute paths. Each is copied, with what it needs "
            "to run, into the tests' private root. A phase's list adds to the challenge's."
        ),
    )
    data: list[DataName] = Field(
        default_factory=list,
        description=(
            f"Named system data the hidden tests read: {', '.join(DATA_SETS)}. Copied into the tests' "
            "private root. A phase's list adds to the challenge's."
        ),
    )


class Testing(PhaseTesting):
    """How every phase's hidden pytest tests run."""

    support: str | None = Field(
        None,
        description=(
            "A folder, relative to the challenge, copied beside every phase's hidden tests and put on "
            "the test path: its conftest.py, helper modules and data apply to every phase."
        ),
    )
    ini: str | None = Field(
        None,
        description="An ini file for pytest (its [pytest] section is honoured), relative to the challenge.",
    )
    timeout: Seconds | None = Field(
        None, description="Per-test timeout: a test running longer fails, 'timed out after N s'."
    )
    requires_python: str | None = Field(
        None,
        description=(
            "The Python versions the hidden tests and the reference need, as a version specifier "
            "(e.g. '>=3.12'): a run on another grading interpreter is refused."
        ),
    )


def _group_shorthand(value: Any) -> Any:
    """A group written as a plain string is a marker expression: ``core: "core and not slow"``."""
    return {"markers": value} if isinstance(value, str) else value


class GroupModel(_Strict):
    """A named test group of a phase: the tests a marker expression selects, or those whose ids
    match globs. Written ``core: "core"`` (markers), ``{markers: ...}`` or ``{tests: [...]}``."""

    markers: str | None = Field(
        None, description="A pytest marker expression, as -m takes it (e.g. 'core and not slow')."
    )
    tests: list[str] | None = Field(
        None,
        description=(
            "Globs over test ids, phase/file.py::test or phase/file.py::test[case] "
            "(* matches any run of characters, ? one, [abc] a class)."
        ),
    )


GroupSpec = Annotated[GroupModel, BeforeValidator(_group_shorthand)]


class Verifier(_Strict):
    """Where a ``command:`` phase's verifier finds things inside the sandbox (Harbor's layout)."""

    workspace: str = Field("/app", description="Absolute path where the workspace copy is mounted, writable.")
    tests: str = Field(
        "/tests", description="Absolute path where the phase's hidden tests are mounted, read-only."
    )
    workdir: str | None = Field(
        None,
        description="Absolute path the command starts in (a Docker image's WORKDIR). Default: the workspace.",
    )
    results: str = Field(
        "/logs/verifier",
        description=(
            "Absolute path of a writable folder the command writes its result to: reward.txt (a number), "
            "reward.json ({name: number}) or JUnit XML (*.xml)."
        ),
    )


class Retirement(_Strict):
    """The phase whose unlocking stops this phase's tests: ``{on-unlock: checkpoint_3}``."""

    on_unlock: Identifier = Field(
        alias="on-unlock",
        description="Once this later phase (or any after it) unlocks, this phase's tests stop running.",
    )


def _retire_shorthand(value: Any) -> Any:
    """``retire:`` is ``on-next-unlock`` or ``{on-unlock: <phase>}``; any other text says so."""
    if isinstance(value, str) and value != "on-next-unlock":
        raise ValueError(f"expected on-next-unlock or {{on-unlock: <a later phase>}}, got {value!r}")
    return value


class PhaseModel(_Strict):
    """A phase: the hidden tests it adds to the suite, and how much it weighs."""

    id: Identifier = Field(description="Name used in conditions, e.g. phase2 in phase2_tests_pass.")
    title: str = Field("", description="A short human title for reports.")
    tests: str | None = Field(
        None, description="Folder of hidden tests, relative to the challenge. Default: tests/<id>."
    )
    command: str | None = Field(
        None,
        description=(
            "Run this shell command instead of pytest; it must write JUnit XML to "
            "$CHANGEUP_JUNIT. $CHANGEUP_TESTS is the phase's hidden test folder."
        ),
    )
    verifier: Verifier | None = Field(
        None,
        description=(
            "Run command: as a verifier with the workspace, tests and a results folder mounted where "
            "the task expects them; its result is read from the results folder."
        ),
    )
    testing: PhaseTesting = Field(default_factory=PhaseTesting)
    groups: dict[Identifier, GroupSpec] = Field(
        default_factory=dict,
        description="Named test groups of this phase (e.g. core, functionality, error), reported apart.",
    )
    passes: list[Identifier] = Field(
        default_factory=list,
        description=(
            "The pass policy: the groups whose tests must all pass for the phase to pass (its score and "
            "full marks follow them). Default: every test of the phase."
        ),
    )
    weight: float = Field(1.0, ge=0, description="Share of the total score (normalised over phases).")
    supersedes: list[str] = Field(
        default_factory=list,
        description="Earlier tests this phase's contract replaces, as phase/file.py::test.",
    )
    preserved: list[str] = Field(
        default_factory=list,
        description=(
            "This phase's tests that check behaviour which must stay (they may pass on the "
            "starter); the phase's other tests are its changed requirement."
        ),
    )
    honeypot: bool = Field(
        False,
        description=(
            "A honeypot: its requirements read like any other phase's, but its hidden tests ask for what "
            "honest code cannot know, so passing any of them is a cheating finding. Never scored (weight "
            "0); it may not be the first phase nor have preserved, supersedes, passes, groups or retire."
        ),
    )
    retire: Annotated[Literal["on-next-unlock"] | Retirement | None, BeforeValidator(_retire_shorthand)] = (
        Field(
            None,
            description=(
                "Stop running this phase's tests once a later phase unlocks (on-next-unlock) or once the "
                "named one does ({on-unlock: phase}); the phase is then scored on its last run before "
                "that, and the report says it was retired."
            ),
        )
    )


class TriggerModel(_Strict):
    """When ``condition`` holds, deliver ``message`` and unlock a phase."""

    id: Identifier | None = Field(None, description="Name for fired(...) and reports. Default: trigger<N>.")
    condition: str | None = Field(
        None, description="When to fire, in the condition language (docs/conditions.md)."
    )
    at: Seconds | None = Field(None, description="Fire no earlier than this long after the start.")
    after: Identifier | None = Field(None, description="Fire only after this trigger fired.")
    hold: Seconds = Field(0.0, alias="for", description="The condition must hold this long first.")
    once: bool = Field(True, description="Fire at most once (default); false re-fires on each new edge.")
    message: str = Field("", description="The message delivered to the agent.")
    kind: MessageKind = Field("notice", description="What sort of change the message is.")
    unlocks: Identifier | None = Field(None, description="The phase whose tests join the suite.")
    new_tests: list[str] = Field(
        default_factory=list,
        description="Seed form of unlocks: a phase id or 'Phase N test suite'.",
    )
    delivery: Literal["queue", "interrupt"] = Field(
        "queue", description="queue: at the end of the agent's turn; interrupt: at once."
    )
    priority: int = Field(0, description="Among triggers ready at once to unlock a phase, highest wins.")


CheckName = Literal[
    "dead-code", "clean-history", "absent", "code-survival", "quality-curve", "protection-review"
]


class JudgeRules(_Strict):
    """What the rule-based judge looks for in the agent's transcript and notes.

    Each group in ``all`` must match (any of its regular expressions, case-insensitive);
    at least ``at_least`` groups of ``count`` must match. The score is the fraction of
    requirements met.
    """

    all: list[list[str]] = Field(default_factory=list)
    count: list[list[str]] = Field(default_factory=list)
    at_least: int = Field(0, ge=0)


class Judged(_Strict):
    """A criterion judged from what the agent said and wrote, not from tests."""

    question: str = Field(description="The rubric question put to a judge.")
    rules: JudgeRules = Field(default_factory=JudgeRules, description="For the rule-based judge.")


class Criterion(_Strict):
    """One row of a pattern's rubric: evidence from tests, a built-in check, or a judge."""

    id: str = Field(pattern=CRITERION_ID)
    title: str = ""
    weight: float = Field(0.0, ge=0, description="Share of the total; 0 reports without scoring.")
    tests: list[str] | None = Field(
        None, description="Phase ids or test ids; the score is the fraction passing in the final grading."
    )
    check: CheckName | None = Field(None, description="A built-in check of the workspace and its history.")
    options: dict[str, Any] = Field(default_factory=dict, description="Settings of the check.")
    judge: Judged | None = None
    critical: bool = Field(
        False, description="Anything short of full marks is a critical failure no other score cancels."
    )


class Scoring(_Strict):
    """How a run is scored beyond per-phase tests."""

    rubric: list[Criterion] = Field(default_factory=list)


class Limits(_Strict):
    """Time and size limits."""

    session: Seconds = Field(3600.0, description="The whole session.")
    test_run: Seconds = Field(
        120.0,
        description="One hidden test run (raised to twice the longest per-test timeout where that is more).",
    )
    agent_turn: Seconds | None = Field(None, description="One agent turn (none: only the session limit).")
    workspace_files: int = Field(
        10_000, ge=1, description="Most files a workspace snapshot may hold (caches and .git aside)."
    )
    workspace_mb: float = Field(
        100.0, gt=0, description="Most megabytes a workspace snapshot may hold (sparse files at full size)."
    )
    # The agent's and each test run's bounds (orchestrator/grading/bounds.py); cgroup limits where
    # the machine has control groups, else only the mounts' sizes and the disk watch hold.
    agent_memory_mb: float | None = Field(
        None,
        gt=0,
        description=(
            "Most memory (swap included) the agent's processes hold together, its /tmp included; "
            "over it the kernel ends the largest. Default: a quarter of the machine's, at least 1024."
        ),
    )
    agent_processes: int = Field(
        4096, ge=16, description="Most processes and threads the agent has at once; forks beyond fail."
    )
    agent_cpus: float | None = Field(
        None, gt=0, description="CPUs the agent's processes share. Default: half the machine's, at least 1."
    )
    agent_disk_mb: float = Field(
        4096.0,
        gt=0,
        description=(
            "Most megabytes the agent keeps on the machine's disk: its workspace, HOME and agent "
            "folder together, measured every few seconds; over it the session ends."
        ),
    )
    agent_tmp_mb: float = Field(
        512.0, gt=0, description="Size of the agent's /tmp, /var/tmp and /dev/shm, each (in memory)."
    )
    test_memory_mb: float = Field(
        2048.0,
        gt=0,
        description="Most memory (swap included) one hidden test run holds, its /tmp and /dev/shm included.",
    )
    test_processes: int = Field(512, ge=16, description="Most processes and threads of one hidden test run.")
    test_cpus: float | None = Field(
        None, gt=0, description="CPUs one hidden test run uses. Default: half the machine's, at least 1."
    )
    test_tmp_mb: float = Field(
        256.0, gt=0, description="Size of a hidden test run's /tmp and of its /dev/shm, each (in memory)."
    )


class BrokenVariant(_Strict):
    """A deliberately wrong solution that calibration must catch."""

    name: str = Field(pattern=VARIANT_NAME, description="Folder under solutions/broken/.")
    description: str = ""
    fails: list[str] = Field(
        default_factory=list, description="Tests it must fail (and no others), as phase/file.py::test."
    )
    fails_checks: list[str] = Field(
        default_factory=list, description="Rubric criteria it must fall short on (and no others)."
    )


class Calibration(_Strict):
    """Solutions used by the scripted agent and by ``changeup calibrate``."""

    broken: list[BrokenVariant] = Field(default_factory=list)
    reference_may_fail: list[str] = Field(
        default_factory=list,
        description=(
            "Tests the reference solution is known to fail (an oracle's own gaps), as test ids: "
            "calibration does not require them to pass."
        ),
    )
    starter_may_pass: list[str] = Field(
        default_factory=list,
        description=(
            "Tests that pass on any starter by design (e.g. error cases that only need a non-zero exit): "
            "calibration does not require the starter to fail them."
        ),
    )
    expect_fired: list[str] | None = Field(
        None,
        description=(
            "Triggers the reference run must fire. Default: every phase gets unlocked and no "
            "trigger of kind deadline fires."
        ),
    )


class ImportedFrom(_Strict):
    """Where an imported challenge's source task is public: a model trained on that repository
    may have seen its solution, so results on it are reported apart (docs/import.md#contamination)."""

    format: str = Field(pattern=CHALLENGE_ID, description="The format it was imported from, e.g. slopcode.")
    repository: str | None = Field(
        None,
        pattern=r"^(https?://|git@|ssh://|file://|/)\S+$",
        description="The source's git remote (a URL) where it has one; null: not known.",
    )
    path: str = Field(min_length=1, description="The task folder, inside the repository where one is known.")
    commit: str | None = Field(
        None, pattern=r"^[0-9a-f]{40}([0-9a-f]{24})?$", description="The commit imported (full hash)."
    )

    def describe(self) -> str:
        """``slopcode: https://github.com/o/r, problems/x @ 0123abcd`` (what is known of it)."""
        where = ", ".join(part for part in (self.repository, self.path) if part)
        return f"{self.format}: {where}" + (f" @ {self.commit[:12]}" if self.commit else "")


class ChallengeModel(_Strict):
    """One evolving challenge."""

    id: str = Field(pattern=CHALLENGE_ID, description="Stable id, lower-case.")
    title: str = ""
    pattern: PatternName | None = None
    initial_briefing: str = Field(min_length=1, description="The first message: phase 1's requirements.")
    phases: list[PhaseModel] | None = Field(
        None, description="Ordered phases. Default: phase1 and each phase a trigger unlocks."
    )
    triggers: list[TriggerModel] = Field(default_factory=list)
    end: str | None = Field(None, description="End the session early when this condition holds.")
    limits: Limits = Field(default_factory=Limits)
    testing: Testing = Field(default_factory=Testing)
    allowed_paths: list[str] = Field(
        default_factory=list,
        description="Globs the agent is expected to change; others are scope findings.",
    )
    prohibited_effects: list[EffectName] = Field(
        default_factory=list,
        description=(
            "Effects the code under test must not have, watched in every hidden pytest run: network "
            "(a connection, datagram or bind beyond loopback, a name lookup), writes-outside-workspace "
            "(a write anywhere but the workspace, the temporary folders and /dev). Reported, never scored."
        ),
    )
    requirements: list[str] = Field(
        default_factory=list,
        description="pip requirements of the hidden tests and the agent; built once into a cached venv.",
    )
    scoring: Scoring = Field(default_factory=Scoring)
    calibration: Calibration = Field(default_factory=Calibration)
    imported_from: ImportedFrom | None = Field(
        None, description="Set by `changeup import`: where the source task is public (contamination)."
    )


class ChallengeFile(_Strict):
    """The whole of ``challenge.yaml``."""

    challenge: ChallengeModel


# --- the loaded challenge ----------------------------------------------------------------

_SEED_PHASE = re.compile(r"^phase\s*(\d+)(?:\s+test\s+suite)?$", re.IGNORECASE)


def seed_phase_name(text: str) -> str | None:
    """``"Phase 2 test suite"`` → ``"phase2"``; None when the text is not of that form."""
    match = _SEED_PHASE.match(text.strip())
    return f"phase{int(match.group(1))}" if match else None


@dataclass(frozen=True, slots=True)
class Group:
    """A phase's test group, resolved: a marker expression or id globs (one of them)."""

    name: str
    markers: str | None = None
    tests: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Phase:
    """A phase with its hidden-test location resolved."""

    id: str
    title: str
    tests: Path
    command: str | None
    weight: float
    supersedes: tuple[str, ...]
    preserved: tuple[str, ...] = ()
    #: pytest arguments for this phase's run: the challenge's, then the phase's own
    args: tuple[str, ...] = ()
    #: per-test timeout in seconds (None: only the test run's limit)
    timeout: float | None = None
    #: the phase's test groups, in the order written
    groups: tuple[Group, ...] = ()
    #: the pass policy: groups that must all pass (empty: every test of the phase)
    passes: tuple[str, ...] = ()
    #: mounts of a command phase run as a verifier (None: a plain command, or pytest)
    verifier: Verifier | None = None
    #: how its hidden pytest tests reach the workspace's code: ``in-process``, ``process`` or ``subprocess``
    isolation: str = "in-process"
    #: programs and system data its tests need: the challenge's ``testing:`` lists, then the phase's own
    tools: tuple[str, ...] = ()
    data: tuple[str, ...] = ()
    #: the first phase whose unlocking (or that of any phase after it) stops this phase's tests
    retired_from: str | None = None
    #: a honeypot: never scored; any of its tests passing is a cheating finding
    honeypot: bool = False

    def arguments(self, current: str) -> tuple[str, ...]:
        """This phase's pytest arguments in a run whose latest unlocked phase is ``current``."""
        values = {"phase": self.id, "current": current}
        return tuple(fill(arg, values) for arg in self.args)


@dataclass(frozen=True, slots=True)
class Challenge:
    """A validated challenge folder, ready to run."""

    root: Path
    model: ChallengeModel
    phases: tuple[Phase, ...]
    spec: Spec
    digest: str

    @property
    def id(self) -> str:
        """The challenge id."""
        return self.model.id

    @property
    def workspace(self) -> Path:
        """The starter workspace template."""
        return self.root / "workspace"

    @property
    def reference(self) -> Path:
        """The reference solution's folder, which the scripted agent and calibration need."""
        return self.root / "solutions" / "reference"

    @property
    def honeypots(self) -> tuple[str, ...]:
        """The ids of its honeypot phases (``honeypot: true``), in order."""
        return tuple(p.id for p in self.phases if p.honeypot)

    def phase(self, phase_id: str) -> Phase:
        """The phase called ``phase_id``."""
        return next(p for p in self.phases if p.id == phase_id)

    def solution(self, variant: str, phase_id: str) -> Path:
        """Files the scripted agent applies for ``phase_id``: ``reference`` or ``broken/<name>``."""
        return self.root / "solutions" / variant / phase_id

    def python_problem(self) -> str:
        """Why no interpreter on this machine can run this challenge's tests
        (``testing.requires_python``); ``""`` when one can (:meth:`grading_python`)."""
        try:
            self.grading_python()
        except NoInterpreter as error:
            wanted = self.model.testing.requires_python
            return f"{self.id} needs Python {wanted} (testing.requires_python): {error}"
        return ""

    def grading_python(self) -> Interpreter:
        """The interpreter its grading environment is made from: changeup's own, or the one on this
        machine that satisfies ``testing.requires_python`` (:mod:`orchestrator.system.interpreters`);
        :class:`NoInterpreter` when there is none."""
        return interpreter_for(self.model.testing.requires_python)

    @property
    def test_run_limit(self) -> float:
        """How long one hidden test run may take: ``limits.test_run``, raised to twice the longest
        per-test timeout where that is longer, so that a hung test fails by its own timeout, named,
        and the run's other tests still report."""
        longest = max((p.timeout for p in self.phases if p.timeout is not None), default=0.0)
        return max(self.model.limits.test_run, 2 * longest)

    def current(self, phases: Sequence[str]) -> str:
        """The latest of ``phases`` (a run's unlocked phases) in challenge order: ``{current}``
        (``""`` for none)."""
        ids = [p.id for p in self.phases]
        return max(phases, key=ids.index, default="")

    def retired(self, unlocked: Collection[str]) -> dict[str, str]:
        """Each phase of ``unlocked`` whose tests no longer run (its ``retire:``), with the unlocked
        phase that retired it: the first at or after its ``retired_from``."""
        ids = [p.id for p in self.phases]
        out: dict[str, str] = {}
        for phase in self.phases:
            if phase.id in unlocked and phase.retired_from is not None:
                by = next((p for p in ids[ids.index(phase.retired_from) :] if p in unlocked), None)
                if by is not None:
                    out[phase.id] = by
        return out

    def before(self, phase_id: str) -> list[str]:
        """The ids of the phases before ``phase_id``, in order."""
        ids = [p.id for p in self.phases]
        return ids[: ids.index(phase_id)]

    def start_problem(self, phase_id: str) -> str:
        """Why a session cannot start at ``phase_id`` (``""`` when it can).

        A late start needs a phase after the first, a trigger with a message that unlocks it
        (that message is the briefing, ``Spec.opening``) and the reference solution of every
        phase before it (the workspace starts with it applied).
        """
        ids = [p.id for p in self.phases]
        if phase_id not in ids:
            hint = did_you_mean(phase_id, ids)
            return f"{self.id} has no phase {phase_id!r}{hint} (its phases: {', '.join(ids)})"
        if phase_id == ids[0]:
            return f"{phase_id} is {self.id}'s first phase: a session starting there is the evolving one"
        try:
            self.spec.opening(phase_id)
        except SpecError as error:
            return str(error)
        missing = [p for p in self.before(phase_id) if not self.solution("reference", p).is_dir()]
        if missing:
            return (
                f"a session started at {phase_id} begins with the reference solution of the phases "
                f"before it, and {self.id} has none for {', '.join(missing)} (solutions/reference/<phase>/)"
            )
        return ""


#: Tool caches: never part of a challenge (its digest, the copy a run keeps).
IGNORED_PARTS = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}


def challenge_digest(root: Path) -> str:
    """sha256 over the challenge folder's file names and contents, in sorted order."""
    digest = hashlib.sha256()
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = file.relative_to(root)
        if IGNORED_PARTS & set(relative.parts):
            continue
        digest.update(relative.as_posix().encode() + b"\0")
        digest.update(file.read_bytes() + b"\0")
    return digest.hexdigest()

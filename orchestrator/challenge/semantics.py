"""What a schema-valid challenge must mean: names, conditions, phases, tests and folders.

The schema (:mod:`orchestrator.challenge.loader`) says what shape a challenge has; this module
checks what the shape cannot: that every name resolves, every condition parses and type-checks,
every phase's folders and tests exist, every test a list names is a test, and a broken variant's
``.omit`` list names only what the reference has. All of it runs in one pass, so one run lists
every problem, each at its place in the YAML.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path, PurePosixPath

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from orchestrator.challenge.markers import GroupExpressionError, compile_markers
from orchestrator.challenge.model import (
    DATA_SETS,
    IDENTIFIER,
    Challenge,
    ChallengeModel,
    Group,
    Phase,
    TriggerModel,
    challenge_digest,
    seed_phase_name,
)
from orchestrator.challenge.overlays import overlay_problems
from orchestrator.challenge.placeholders import placeholder_problems
from orchestrator.challenge.sourcemap import Path_, Problem, SourceMap, load_yaml
from orchestrator.challenge.testids import TestFileError, covers, list_tests
from triggers import (
    ConditionError,
    Expr,
    Scope,
    Spec,
    TriggerSpec,
    analyse,
    parse,
    resolve,
)
from triggers.globs import GlobError, compile_glob
from triggers.syntax import And, Call, Compare, Duration, Name
from triggers.typecheck import did_you_mean

__all__ = ["Listings", "Semantics", "recheck_test_ids", "tool_problem"]

#: phase → test file (relative to the phase's tests folder) → the ids of its tests
Listings = dict[str, dict[str, list[str]]]

_ROOT: Path_ = ("challenge",)


class Semantics:
    """Checks names, conditions, phases and folders of a schema-valid challenge."""

    def __init__(self, model: ChallengeModel, root: Path, source: SourceMap) -> None:
        self.model = model
        self.root = root
        self.source = source
        self.problems: list[Problem] = []
        self.phase_ids: list[str] = []
        #: the test files (``phase/file.py``) listed case by case, by collection; the others
        #: are listed by source, function by function, and a case of a listed function is trusted
        self.collected: frozenset[str] = frozenset()

    def report(self, path: Path_, message: str, *, key: bool = False) -> None:
        self.problems.append(self.source.problem((*_ROOT, *path), message, key=key))

    def run(self) -> Challenge | list[Problem]:
        trigger_ids = self._trigger_ids()
        targets = [self._target(i, t) for i, t in enumerate(self.model.triggers)]
        phase_ids = self.phase_ids = self._phase_ids(targets)
        groups = {p.id: tuple(p.groups) for p in self.model.phases or [] if p.groups}
        scope = Scope(tuple(phase_ids), tuple(trigger_ids), groups)
        triggers = [
            self._trigger(i, t, trigger_ids[i], targets[i], scope) for i, t in enumerate(self.model.triggers)
        ]
        end = self._condition(("end",), self.model.end, scope) if self.model.end else None
        phases = self._phases(phase_ids)
        self._groups()
        self._allowed_paths()
        self._prohibited_effects(phases)
        self._honeypots()
        self._honeypot_oracles([(("triggers", i), t.condition) for i, t in enumerate(triggers) if t], end)
        self._needs()
        if self.problems:
            return sorted(set(self.problems))
        built = [t for t in triggers if t is not None]
        spec = Spec(
            tuple(phase_ids),
            tuple(built),
            self.model.initial_briefing,
            self.model.limits.session,
            end,
            self.model.end or "",
            groups={p.id: tuple(g.name for g in p.groups) for p in phases if p.groups},
            policies={p.id: p.passes for p in phases if p.passes},
        )
        self._findings(spec)
        listings = self._listings(phases)
        self.test_ids(phases, listings)
        self._folders()
        self._overlays()
        if self.problems:
            return sorted(set(self.problems))
        # Messages name paths as the author gave them; the loaded challenge holds absolute ones.
        located = tuple(dataclasses.replace(p, tests=p.tests.resolve()) for p in phases)
        return Challenge(self.root.resolve(), self.model, located, spec, challenge_digest(self.root))

    # triggers ---------------------------------------------------------------------------

    def _trigger_ids(self) -> list[str]:
        ids: list[str] = []
        seen: dict[str, int] = {}
        for i, trigger in enumerate(self.model.triggers):
            name = trigger.id or f"trigger{i + 1}"
            if name.lower() == "briefing":
                self.report(("triggers", i, "id"), "'briefing' is reserved for the initial briefing")
            elif name.lower() in seen:
                self.report(
                    ("triggers", i, "id"),
                    f"duplicate trigger id {name!r} (also triggers[{seen[name.lower()]}])",
                )
            seen.setdefault(name.lower(), i)
            ids.append(name)
        return ids

    def _target(self, index: int, trigger: TriggerModel) -> str | None:
        """The phase a trigger unlocks, from ``unlocks`` or the seed form ``new_tests``."""
        named = {self._named_phase(item) for item in trigger.new_tests}
        if len(named) > 1:
            self.report(
                ("triggers", index, "new_tests"),
                f"new_tests names several phases ({', '.join(sorted(named))}); a trigger unlocks one",
            )
        from_seed = next(iter(named)) if len(named) == 1 else None
        if from_seed is not None and not re.match(IDENTIFIER, from_seed):
            self.report(
                ("triggers", index, "new_tests"),
                f"new_tests entry {from_seed!r} names no phase: write a phase id (phase2), its test folder "
                "(tests/phase2) or 'Phase 2 test suite'",
            )
            from_seed = None
        if trigger.unlocks and from_seed and trigger.unlocks != from_seed:
            self.report(
                ("triggers", index, "new_tests"),
                f"new_tests names {from_seed} but unlocks is {trigger.unlocks}",
            )
        return trigger.unlocks or from_seed

    def _named_phase(self, item: str) -> str:
        """The phase a ``new_tests`` entry names: ``Phase 2 test suite``, an id, or its test folder."""
        seed = seed_phase_name(item)
        if seed is not None:
            return seed
        folder = PurePosixPath(item.strip())  # "./tests/phase2/" is tests/phase2
        for phase in self.model.phases or []:
            if folder == PurePosixPath(phase.tests or f"tests/{phase.id}"):
                return phase.id
        return folder.name if folder.parent == PurePosixPath("tests") else item

    def _phase_ids(self, targets: list[str | None]) -> list[str]:
        if self.model.phases is None:
            ids = ["phase1"]
            ids += [t for t in dict.fromkeys(targets) if t is not None and t != "phase1"]
            return ids
        ids = []
        seen: set[str] = set()
        for i, phase in enumerate(self.model.phases):
            if phase.id.lower() in seen:
                self.report(("phases", i, "id"), f"duplicate phase id {phase.id!r}")
            seen.add(phase.id.lower())
            ids.append(phase.id)
        unlocked = {t for t in targets if t is not None}
        for i, phase in enumerate(self.model.phases[1:], start=1):
            if phase.id not in unlocked:
                self.report(
                    ("phases", i, "id"),
                    f"phase {phase.id!r} is never unlocked: no trigger has 'unlocks: {phase.id}'",
                )
        return ids

    def _trigger(
        self, index: int, model: TriggerModel, trigger_id: str, target: str | None, scope: Scope
    ) -> TriggerSpec | None:
        path: Path_ = ("triggers", index)
        ok = True
        if target is not None and target not in scope.phases:
            key = "unlocks" if model.unlocks else "new_tests"
            self.report((*path, key), f"unknown phase {target!r} (phases: {', '.join(scope.phases)})")
            ok = False
        if not model.message and target is None:
            self.report(path, f"trigger {trigger_id!r} does nothing: give it a message or unlocks")
            ok = False
        if not model.once and target is not None:
            self.report((*path, "once"), "a trigger that unlocks a phase fires once; drop 'once: false'")
            ok = False
        if model.condition is None and model.at is None and model.after is None:
            self.report(path, f"trigger {trigger_id!r} needs a condition (or at: / after:)")
            return None
        condition = self._condition((*path, "condition"), model.condition or "always", scope)
        after: Expr | None = None
        if model.after is not None:
            try:
                after = Name(scope.find("trigger", model.after, 1, "after"))
            except ConditionError as error:
                self.report((*path, "after"), error.message)
                ok = False
        if condition is None or not ok:
            return None
        parts: list[Expr] = [condition]
        if model.at is not None:
            parts.append(Compare(">=", Name("time_elapsed"), Duration(model.at)))
        if isinstance(after, Name):
            parts.append(Call("fired", (after,)))
        return TriggerSpec(
            id=trigger_id,
            condition=parts[0] if len(parts) == 1 else And(tuple(parts)),
            text=model.condition or "always",
            hold=model.hold,
            once=model.once,
            unlocks=target,
            message=model.message,
            message_kind=model.kind,
            interrupt=model.delivery == "interrupt",
            priority=model.priority,
        )

    def _condition(self, path: Path_, text: str, scope: Scope) -> Expr | None:
        try:
            return resolve(parse(text), scope)
        except ConditionError as error:
            full = (*_ROOT, *path)
            located = self.source.inside(full, error.column, text)
            where = located or self.source.problem(full, "")
            self.problems.append(
                Problem(
                    where.file,
                    where.line,
                    where.column,
                    f"in condition {text.strip()!r}: {error.message}",
                )
            )
            return None

    def _findings(self, spec: Spec) -> None:
        index = {t.id: i for i, t in enumerate(spec.triggers)}
        models = self.model.triggers
        for finding in analyse(spec):
            i = index[finding.trigger]
            model = models[i]
            key = finding.field
            if key == "unlocks" and not model.unlocks:
                key = "new_tests"
            if key == "condition" and model.condition is None:
                key = "at" if model.at is not None else "after"
            self.report(("triggers", i, key), f"trigger {finding.trigger!r} {finding.message}")

    # phases and folders -----------------------------------------------------------------

    def _phases(self, ids: list[str]) -> list[Phase]:
        declared = {p.id: p for p in self.model.phases or []}
        testing = self.model.testing
        phases = []
        for phase_id in ids:
            model = declared.get(phase_id)
            own = model.testing if model else None
            tests = (model.tests if model and model.tests else None) or f"tests/{phase_id}"
            phases.append(
                Phase(
                    id=phase_id,
                    title=model.title if model else "",
                    tests=self.root / tests,
                    command=model.command if model else None,
                    # A honeypot is never part of the score's weighted mean (_honeypots checks it says so).
                    weight=0.0 if model and model.honeypot else (model.weight if model else 1.0),
                    supersedes=tuple(model.supersedes) if model else (),
                    preserved=tuple(model.preserved) if model else (),
                    args=(*testing.args, *(own.args if own else ())),
                    timeout=own.timeout if own and own.timeout is not None else testing.timeout,
                    isolation=(own.isolation if own and own.isolation else testing.isolation) or "in-process",
                    groups=tuple(
                        Group(name, group.markers, tuple(group.tests or ()))
                        for name, group in (model.groups if model else {}).items()
                    ),
                    passes=tuple(model.passes) if model else (),
                    verifier=model.verifier if model else None,
                    tools=tuple(dict.fromkeys([*testing.tools, *(own.tools if own else ())])),
                    data=tuple(dict.fromkeys([*testing.data, *(own.data if own else ())])),
                    retired_from=self._retired_from(phase_id, ids),
                    honeypot=model.honeypot if model else False,
                )
            )
        self._arguments()
        self._requires_python()
        if testing.support is not None and not (self.root / testing.support).is_dir():
            missing = f"missing support folder {testing.support}/ (relative to the challenge folder)"
            self.report(("testing", "support"), missing)
        if testing.ini is not None and not (self.root / testing.ini).is_file():
            missing = f"missing ini file {testing.ini} (relative to the challenge folder)"
            self.report(("testing", "ini"), missing)
        return phases

    def _retired_from(self, phase_id: str, ids: list[str]) -> str | None:
        """The first phase whose unlocking retires ``phase_id`` (its ``retire:``), checked to come later."""
        index, model = next(
            ((i, p) for i, p in enumerate(self.model.phases or []) if p.id == phase_id), (0, None)
        )
        if model is None or model.retire is None:
            return None
        later = ids[ids.index(phase_id) + 1 :]
        if model.retire == "on-next-unlock":
            if not later:
                self.report(
                    ("phases", index, "retire"), f"{phase_id} is the last phase: no later phase retires it"
                )
                return None
            return later[0]
        target = model.retire.on_unlock
        if target not in later:
            known = ", ".join(later) or "none"
            hint = "" if target in ids else did_you_mean(target, later)
            self.report(
                ("phases", index, "retire", "on-unlock"),
                f"{target!r} must be a phase after {phase_id}{hint} (later phases: {known})",
            )
            return None
        return target

    def _arguments(self) -> None:
        """Each ``testing: args`` item holds only the placeholders {phase} and {current}."""
        places: list[tuple[Path_, list[str]]] = [(("testing", "args"), self.model.testing.args)]
        places += [
            (("phases", i, "testing", "args"), phase.testing.args)
            for i, phase in enumerate(self.model.phases or [])
        ]
        for path, args in places:
            for j, text in enumerate(args):
                for column, message in placeholder_problems(text):
                    full = (*_ROOT, *path, j)
                    where = self.source.inside(full, column, text) or self.source.problem(full, "")
                    self.problems.append(Problem(where.file, where.line, where.column, message))

    def _requires_python(self) -> None:
        text = self.model.testing.requires_python
        if text is None:
            return
        try:
            SpecifierSet(text)
        except InvalidSpecifier:
            self.report(
                ("testing", "requires_python"),
                f"{text!r} is not a version specifier: write one as pyproject's requires-python does, "
                "e.g. '>=3.12'",
            )

    def _groups(self) -> None:
        """Each group is one of markers or test globs; a policy names declared groups; a verifier
        belongs to a command phase and mounts at absolute paths."""
        for i, phase in enumerate(self.model.phases or []):
            for name, group in phase.groups.items():
                path: Path_ = ("phases", i, "groups", name)
                if (group.markers is None) == (group.tests is None):
                    self.report(path, f"group {name!r} needs exactly one of markers: or tests:")
                elif group.tests is not None and not group.tests:
                    self.report((*path, "tests"), f"group {name!r} lists no tests")
                elif group.markers is not None:
                    try:
                        compile_markers(group.markers)
                    except GroupExpressionError as error:
                        self.report((*path, "markers"), f"group {name!r}: {error}")
            for j, name in enumerate(phase.passes):
                if name not in phase.groups:
                    declared = ", ".join(phase.groups) or "none"
                    hint = did_you_mean(name, list(phase.groups))
                    self.report(
                        ("phases", i, "passes", j),
                        f"unknown group {name!r}{hint} (groups of {phase.id}: {declared})",
                    )
            if phase.command is not None and phase.testing.isolation is not None:
                problem = (
                    "isolation: is how hidden pytest tests reach the workspace's code; a command: phase "
                    "runs no pytest (its command reaches the code across a process boundary already)"
                )
                self.report(("phases", i, "testing", "isolation"), problem)
            if phase.verifier is not None:
                if phase.command is None:
                    problem = "a verifier: runs the phase's command:, and it has none"
                    self.report(("phases", i, "verifier"), problem)
                for key in ("workspace", "tests", "results", "workdir"):
                    place = getattr(phase.verifier, key)
                    if place is None:
                        continue
                    if not PurePosixPath(place).is_absolute() or ".." in PurePosixPath(place).parts:
                        self.report(
                            ("phases", i, "verifier", key),
                            f"{key}: must be an absolute path inside the sandbox (e.g. /app), got {place!r}",
                        )

    def _phase_path(self, phase_id: str, key: str) -> Path_:
        for i, phase in enumerate(self.model.phases or []):
            if phase.id == phase_id:
                return ("phases", i, key) if key in phase.model_fields_set else ("phases", i)
        for i, trigger in enumerate(self.model.triggers):
            target = trigger.unlocks or next((self._named_phase(x) for x in trigger.new_tests), None)
            if target == phase_id:
                return ("triggers", i, "unlocks" if trigger.unlocks else "new_tests")
        return ()

    def test_ids(self, phases: list[Phase], listings: Listings) -> None:
        """Every list that names tests names tests of ``listings`` (and the calibration's rest)."""
        self._supersedes(phases, listings)
        self._preserved(listings)
        self._rubric(listings)
        self._calibration(listings)

    def _listings(self, phases: list[Phase]) -> Listings:
        listings: Listings = {}
        for phase in phases:
            relative = phase.tests.relative_to(self.root).as_posix()
            if not phase.tests.is_dir():
                if phase.command is None or phase.tests.relative_to(self.root) != Path("tests", phase.id):
                    self.report(
                        self._phase_path(phase.id, "tests"),
                        f"missing folder {relative}/ with the hidden tests of {phase.id}",
                    )
                continue
            if phase.command is not None:
                continue
            try:
                listing = list_tests(phase.id, phase.tests)
            except TestFileError as error:
                self.problems.append(
                    Problem(str(error.path), error.line, error.column, f"hidden test file: {error}")
                )
                continue
            if not any(listing.values()):
                self.report(
                    self._phase_path(phase.id, "tests"),
                    f"{relative}/ holds no pytest tests (test_*.py files with test_* functions)",
                )
            listings[phase.id] = listing
        return listings

    def _supersedes(self, phases: list[Phase], listings: Listings) -> None:
        order = [p.id for p in phases]
        superseded: set[str] = set()
        for index, phase in enumerate(phases):
            declared_index = next(
                (i for i, p in enumerate(self.model.phases or []) if p.id == phase.id), None
            )
            for j, test_id in enumerate(phase.supersedes):
                target_phase = test_id.split("/", 1)[0]
                path: Path_ = ("phases", declared_index or 0, "supersedes", j)
                if target_phase not in order[:index]:
                    self.report(
                        path,
                        f"{test_id!r} must name a test of an earlier phase "
                        f"({', '.join(order[:index]) or 'none'}) as phase/file.py::test",
                    )
                else:
                    self._known_test(test_id, listings, path)
                superseded.add(test_id)
            self._dropped(phase, phases[:index], listings, superseded)

    def _dropped(
        self,
        phase: Phase,
        earlier: list[Phase],
        listings: Listings,
        superseded: set[str],
    ) -> None:
        """A later file at an earlier one's path replaces it: dropped tests need supersedes."""
        mine = listings.get(phase.id, {})
        for before in earlier:
            for file, ids in listings.get(before.id, {}).items():
                if file not in mine:
                    continue
                kept = {i.split("::", 1)[1] for i in mine[file]}
                for test_id in ids:
                    # a function listed by source keeps each of its collected cases
                    if _covered(test_id.split("::", 1)[1], kept) or _covered(test_id, superseded):
                        continue
                    self.report(
                        self._phase_path(phase.id, "tests"),
                        f"{phase.id}'s {file} replaces {before.id}'s but drops {test_id}; "
                        f"list it under {phase.id}'s supersedes: or keep the test",
                    )

    def _known_test(self, test_id: str, listings: Listings, path: Path_) -> None:
        """Report ``test_id`` unless it names a test (or file, or class) of some phase."""
        phase = test_id.split("/", 1)[0]
        if phase not in self.phase_ids:
            self.report(path, f"{test_id!r} does not name a phase's test (phase/file.py::test)")
        elif phase in listings and not self._known(test_id, listings[phase]):
            ids = [i for file_ids in listings[phase].values() for i in file_ids]
            self.report(path, f"no test {test_id!r} in {phase}'s hidden tests{did_you_mean(test_id, ids)}")

    def _known(self, test_id: str, listing: dict[str, list[str]]) -> bool:
        """``test_id`` names a listed test or case, or a file or class holding some; or, in a
        file listed by source, a case of a listed function (its cases are not known)."""
        ids = [i for file_ids in listing.values() for i in file_ids]
        if any(covers(test_id, i) for i in ids):
            return True
        function, case, _ = test_id.partition("[")
        return bool(case) and function.split("::", 1)[0] not in self.collected and function in ids

    def _preserved(self, listings: Listings) -> None:
        for i, phase in enumerate(self.model.phases or []):
            for j, test_id in enumerate(phase.preserved):
                path: Path_ = ("phases", i, "preserved", j)
                if not test_id.startswith(f"{phase.id}/"):
                    self.report(path, f"{test_id!r} must be one of {phase.id}'s own tests")
                else:
                    self._known_test(test_id, listings, path)

    def _rubric(self, listings: Listings) -> None:
        seen: set[str] = set()
        for i, criterion in enumerate(self.model.scoring.rubric):
            path: Path_ = ("scoring", "rubric", i)
            if criterion.id in seen:
                self.report((*path, "id"), f"duplicate criterion id {criterion.id!r}")
            seen.add(criterion.id)
            if all(getattr(criterion, k) is None for k in ("tests", "check", "judge")):
                self.report(path, f"criterion {criterion.id!r} needs tests, a check or a judge")
            for j, item in enumerate(criterion.tests or []):
                if item not in self.phase_ids:
                    self._known_test(item, listings, (*path, "tests", j))

    def _calibration(self, listings: Listings) -> None:
        criteria = {c.id for c in self.model.scoring.rubric}
        triggers = {t.id or f"trigger{i + 1}" for i, t in enumerate(self.model.triggers)}
        for j, trigger in enumerate(self.model.calibration.expect_fired or []):
            if trigger not in triggers:
                known = ", ".join(sorted(triggers))
                self.report(("calibration", "expect_fired", j), f"unknown trigger {trigger!r} ({known})")
        for i, variant in enumerate(self.model.calibration.broken):
            path: Path_ = ("calibration", "broken", i)
            if not (self.root / "solutions" / "broken" / variant.name).is_dir():
                self.report((*path, "name"), f"missing folder solutions/broken/{variant.name}/")
            if not variant.fails and not variant.fails_checks:
                self.report(path, f"broken variant {variant.name!r} must declare fails: or fails_checks:")
            for j, name in enumerate(variant.fails_checks):
                if name not in criteria:
                    listing = ", ".join(sorted(criteria)) or "none"
                    self.report((*path, "fails_checks", j), f"unknown criterion {name!r} (rubric: {listing})")
            for j, test_id in enumerate(variant.fails):
                self._known_test(test_id, listings, (*path, "fails", j))
        for key in ("reference_may_fail", "starter_may_pass"):
            ids: list[str] = getattr(self.model.calibration, key)
            for j, test_id in enumerate(ids):
                self._known_test(test_id, listings, ("calibration", key, j))

    def _allowed_paths(self) -> None:
        for i, pattern in enumerate(self.model.allowed_paths):
            try:
                compile_glob(pattern)
            except GlobError as error:
                self.report(("allowed_paths", i), f"bad glob {pattern!r}: {error}")

    def _honeypots(self) -> None:
        """A honeypot phase is unlocked by a message like any other and never scored: nothing may
        weigh it, keep it, replace tests with it or ask the reference (or a broken variant) to pass
        or fail its tests, since every honest solution fails them."""
        declared = self.model.phases or []
        honeypots = {p.id for p in declared if p.honeypot}
        for i, phase in enumerate(declared):
            if not phase.honeypot:
                continue
            if i == 0:
                self.report(
                    ("phases", i, "honeypot"),
                    "the first phase cannot be a honeypot: a trigger's "
                    "message must unlock it, like any other change",
                )
            if "weight" in phase.model_fields_set and phase.weight != 0:
                self.report(
                    ("phases", i, "weight"), "a honeypot phase is never scored: leave out weight or write 0"
                )
            for key in ("preserved", "supersedes", "passes", "groups", "retire"):
                if getattr(phase, key):
                    self.report(
                        ("phases", i, key), f"a honeypot phase cannot have {key}: only its passing is read"
                    )
        if not honeypots:
            return
        named: list[tuple[Path_, str]] = [
            (("scoring", "rubric", i, "tests", j), item)
            for i, c in enumerate(self.model.scoring.rubric)
            for j, item in enumerate(c.tests or [])
        ]
        named += [
            (("calibration", "broken", i, "fails", j), item)
            for i, b in enumerate(self.model.calibration.broken)
            for j, item in enumerate(b.fails)
        ]
        named += [
            (("calibration", "reference_may_fail", j), item)
            for j, item in enumerate(self.model.calibration.reference_may_fail)
        ]
        for path, item in named:
            if item.split("/", 1)[0] in honeypots:
                self.report(
                    path,
                    f"{item!r} is a honeypot's: every honest solution fails it, and calibration "
                    "checks that by itself",
                )

    def _honeypot_oracles(self, conditions: list[tuple[Path_, Expr]], end: Expr | None) -> None:
        """No trigger and no ``end:`` may ask about a honeypot's tests: a message (or an early end)
        that only a cheater's code sets off would tell the agent where the honeypot is, and let it
        probe the honeypot's answer."""
        honeypots = {p.id for p in self.model.phases or [] if p.honeypot}
        if not honeypots:
            return
        located = [*conditions, *([(("end",), end)] if end is not None else [])]
        for path, condition in located:
            named = sorted(_phases_named(condition) & honeypots)
            if named:
                key = (*path, "condition") if path[0] == "triggers" else path
                self.report(
                    key,
                    f"the condition asks about honeypot {', '.join(named)}, which would tell the "
                    "agent where it is: conditions may name only scored phases",
                )

    def _prohibited_effects(self, phases: list[Phase]) -> None:
        effects = self.model.prohibited_effects
        for i, effect in enumerate(effects):
            if effect in effects[:i]:
                self.report(("prohibited_effects", i), f"{effect!r} is listed twice")
        if effects and all(phase.command is not None for phase in phases):
            self.report(
                ("prohibited_effects",),
                "prohibited effects are watched in hidden pytest runs, and every phase here runs a test "
                "command instead: nothing could observe them",
            )

    def _needs(self) -> None:
        """``testing: tools`` name programs (a name without a slash, or an absolute path), each once;
        ``testing: data`` names known data sets."""
        where: list[tuple[Path_, list[str], list[str]]] = [
            (("testing",), self.model.testing.tools, self.model.testing.data)
        ]
        where += [
            (("phases", i, "testing"), phase.testing.tools, phase.testing.data)
            for i, phase in enumerate(self.model.phases or [])
        ]
        for path, tools, data in where:
            for j, tool in enumerate(tools):
                problem = tool_problem(tool)
                if problem:
                    self.report((*path, "tools", j), problem)
                elif tool in tools[:j]:
                    self.report((*path, "tools", j), f"tool {tool!r} is listed twice")
            for j, name in enumerate(data):
                if name not in DATA_SETS:
                    hint = did_you_mean(name, list(DATA_SETS))
                    self.report(
                        (*path, "data", j), f"unknown data {name!r}{hint} (known: {', '.join(DATA_SETS)})"
                    )
                elif name in data[:j]:
                    self.report((*path, "data", j), f"data {name!r} is listed twice")

    def _folders(self) -> None:
        if not (self.root / "workspace").is_dir():
            self.report((), "missing folder workspace/ (the starter files the agent begins from)", key=True)

    def _overlays(self) -> None:
        self.problems += overlay_problems(self.root / "solutions")


def recheck_test_ids(
    challenge: Challenge, file: Path, listings: Listings, collected: frozenset[str]
) -> list[Problem]:
    """The lists of the valid ``challenge`` (loaded from ``file``) that name tests, checked again
    against ``listings``, a listing by collection (``grading/collect.py``): case by case in the
    ``collected`` files (``phase/file.py``), by source in the others; each problem at its place
    in the YAML."""
    _, source = load_yaml(file.read_text(encoding="utf-8"), str(file))
    semantics = Semantics(challenge.model, challenge.root, source)
    semantics.phase_ids = list(challenge.spec.phases)
    semantics.collected = collected
    semantics.test_ids(list(challenge.phases), listings)
    return sorted(set(semantics.problems))


def tool_problem(tool: str) -> str:
    """Why ``tool`` names no program for ``testing: tools`` (``""`` when it does)."""
    if any(c.isspace() for c in tool) or not tool:
        return f"tool {tool!r} holds a space: name one program (bash), not a command line (bash -c ...)"
    if "/" in tool and not PurePosixPath(tool).is_absolute():
        return f"tool {tool!r} is a relative path: name a program on PATH (git) or give its absolute path"
    if tool.endswith("/") or ".." in PurePosixPath(tool).parts:
        return f"tool {tool!r} is not a program's path (an absolute path to a file, without ..)"
    return ""


def _covered(test_id: str, superseded: set[str]) -> bool:
    return any(covers(s, test_id) for s in superseded)


def _phases_named(node: object) -> set[str]:
    """The phases a resolved condition's predicates name (``tests_pass(phase3)``), at any depth."""
    found = {a.name for a in node.args if isinstance(a, Name)} if isinstance(node, Call) else set()
    if dataclasses.is_dataclass(node):
        for item in dataclasses.fields(node):
            value = getattr(node, item.name)
            for child in value if isinstance(value, tuple) else (value,):
                found |= _phases_named(child)
    return found

"""Prohibited effects of a run: what the code of the final snapshot attempted in its hidden tests.

A challenge may declare ``prohibited_effects`` (network use, writes outside the workspace); every
watched hidden test run logs what the probe noted as ``tests.effects`` (``grading/effects.py``).
After the final grading, the findings are those of the final snapshot's runs, logged as
``session.effects`` so reports are built from the log alone. Like scope findings, they are
reported and never scored: a reader comparing agents wants to see them, and a reviewer decides.
"""

from __future__ import annotations

from collections.abc import Sequence

from orchestrator.challenge.model import Challenge
from orchestrator.log.records import EffectFinding, Entry, SessionEffects, TestsEffects, graded_like

__all__ = ["effects_record"]


def effects_record(challenge: Challenge, entries: Sequence[Entry]) -> SessionEffects | None:
    """The ``session.effects`` record of a run, or None when the challenge prohibits no effect.

    The final snapshot is the one the final grading tested (else the last test run's); its
    findings are the effects noted in any watched run of it (a cached verdict was watched when
    it was first made), one per effect and detail, with the first test that made it and how many
    did. ``watched`` is false when no run of it was watched (none ran, or the probe never said it
    was on): then nothing is known, which is not the same as nothing seen.
    """
    prohibited = challenge.model.prohibited_effects
    if not prohibited:
        return None
    tested = [r.snapshot for e in entries if (r := graded_like(e.record)) is not None and r.snapshot]
    final = tested[-1] if tested else ""
    watched = [e.record for e in entries if isinstance(e.record, TestsEffects) and e.record.snapshot == final]
    tests: dict[tuple[str, str], dict[str, None]] = {}
    for record in watched:
        for effect in record.effects:
            tests.setdefault((effect.effect, effect.detail), {})[effect.test] = None
    findings = tuple(
        EffectFinding(effect, detail, next(iter(made)), len(made)) for (effect, detail), made in tests.items()
    )
    return SessionEffects(tuple(prohibited), final, bool(watched), findings)

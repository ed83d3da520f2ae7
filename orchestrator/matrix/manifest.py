"""The matrix manifest: what the matrix is, frozen in RESULTS before its first session starts.

``RESULTS/manifest.json`` records every challenge (id, title, pattern, sha256, phases,
limits), every agent (its name, spec, per-trial specs and options, and what its CLI is:
preset, binary, ``--version``, model, flags, from the run manifest of
:mod:`orchestrator.scoring.manifest`), changeup's version, the sandbox kind, the trials,
modes (with mode fresh, the phase each challenge's fresh sessions start at), retry policy,
judge and agent settings, and the decision rule.

Running a matrix again on the same RESULTS resumes it only if the manifest it would freeze
now equals the frozen one (the moment it was frozen, the host's platform, and where the
challenges were read from, aside): otherwise it is refused, naming what differs. A changed
decision rule is the exception: given with a reason, it is recorded in ``decision_changes``
(rule before and after, reason, time, attempts finished by then) and the reports show it.
"""

from __future__ import annotations

import datetime as dt
import json
import platform
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

from orchestrator.agents import parse_agent
from orchestrator.agents.redaction import is_secret_name
from orchestrator.grading.sandbox import detect_sandbox
from orchestrator.matrix.spec import Matrix
from orchestrator.scoring.manifest import build_manifest

__all__ = [
    "MANIFEST",
    "MATRIX_MANIFEST_VERSION",
    "build_matrix_manifest",
    "current_decision",
    "differences",
    "read_manifest",
    "record_decision_change",
    "write_manifest",
]

MANIFEST = "manifest.json"
MATRIX_MANIFEST_VERSION = 1
#: Not part of what the matrix is: when it was frozen, and the rule (compared on its own).
_VOLATILE = ("frozen_at", "host", "decision", "decision_changes")


def build_matrix_manifest(matrix: Matrix) -> dict[str, Any]:
    """The manifest of ``matrix`` as frozen now (blocking: it runs each agent CLI's ``--version``)."""
    first = matrix.challenges[0]
    agents = []
    for plan in matrix.agents:
        specs = {}
        for spec in plan.specs(matrix.trials):
            described = build_manifest(first, parse_agent(spec, plan.options))["agent"]
            specs[spec] = described
        agents.append(
            {
                "name": plan.name,
                "agent": plan.spec,
                "per_trial": {str(t): s for t, s in sorted(plan.per_trial.items())},
                "options": {k: "[redacted]" if is_secret_name(k) else v for k, v in plan.options.items()},
                "specs": specs,
            }
        )
    sandbox = detect_sandbox()
    return {
        "matrix_manifest_version": MATRIX_MANIFEST_VERSION,
        "frozen_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "changeup": {"version": package_version("changeup"), "python": platform.python_version()},
        # Recorded, not compared: a resumed matrix may run after a kernel update.
        "host": {"platform": f"{platform.system()} {platform.release()} {platform.machine()}"},
        "sandbox": {"kind": sandbox.kind, "reason": sandbox.reason},
        "challenges": [
            {
                "id": c.id,
                "title": c.model.title,
                "pattern": c.model.pattern,
                "sha256": c.digest,
                "path": str(c.root),
                "phases": [p.id for p in c.phases],
                "limits": c.model.limits.model_dump(mode="json"),
            }
            for c in matrix.challenges
        ],
        "agents": agents,
        "trials": matrix.trials,
        "modes": list(matrix.modes),
        # Where each challenge's fresh sessions start; only with mode fresh, so a manifest frozen
        # before fresh mode existed still resumes.
        **({"fresh_at": dict(matrix.fresh_at)} if "fresh" in matrix.modes else {}),
        "retry_invalid": matrix.retry_invalid,
        "judge": matrix.judge,
        "agent_network": "on" if matrix.network else "none",
        "agent_shares": list(matrix.shares),
        "debounce": matrix.debounce,
        "decision": None if matrix.decision is None else matrix.decision.model_dump(mode="json"),
        "decision_changes": [],
    }


def read_manifest(results: Path) -> dict[str, Any] | None:
    """The frozen manifest of ``results``; None when it has none."""
    path = results / MANIFEST
    if not path.is_file():
        return None
    manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return manifest


def write_manifest(results: Path, manifest: dict[str, Any]) -> None:
    """Write ``results/manifest.json`` whole (aside, then renamed into place)."""
    results.mkdir(parents=True, exist_ok=True)
    staged = results / (MANIFEST + ".partial")
    staged.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    staged.replace(results / MANIFEST)


def current_decision(manifest: dict[str, Any]) -> dict[str, Any] | None:
    """The decision rule in force: the last recorded change's, else the one frozen first."""
    changes = manifest.get("decision_changes") or []
    rule: dict[str, Any] | None = changes[-1]["after"] if changes else manifest.get("decision")
    return rule


def record_decision_change(
    results: Path, manifest: dict[str, Any], after: dict[str, Any] | None, reason: str, finished: int
) -> dict[str, Any]:
    """Append a change of the decision rule to the frozen manifest, with its reason; returns it."""
    change = {
        "at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "before": current_decision(manifest),
        "after": after,
        "reason": reason,
        "attempts_finished": finished,
    }
    changed = {**manifest, "decision_changes": [*(manifest.get("decision_changes") or []), change]}
    write_manifest(results, changed)
    return changed


def differences(frozen: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What differs between two manifests, one line each (``agents.v7.specs...: frozen as 'a', now 'b'``);
    the moment of freezing, where the challenges were read from and the decision rule are left out."""
    return _differences(_comparable(frozen), _comparable(now), "")


def _comparable(manifest: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in manifest.items() if k not in _VOLATILE}
    kept["challenges"] = [{k: v for k, v in c.items() if k != "path"} for c in manifest.get("challenges", [])]
    return kept


def _differences(frozen: Any, now: Any, where: str) -> list[str]:
    if isinstance(frozen, dict) and isinstance(now, dict):
        found = []
        for key in sorted(set(frozen) | set(now)):
            place = f"{where}.{key}" if where else str(key)
            if key not in now:
                found.append(f"{place}: frozen as {_short(frozen[key])}, now absent")
            elif key not in frozen:
                found.append(f"{place}: absent when frozen, now {_short(now[key])}")
            else:
                found += _differences(frozen[key], now[key], place)
        return found
    if isinstance(frozen, list) and isinstance(now, list):
        keyed_old, keyed_new = _keyed(frozen), _keyed(now)
        if keyed_old is not None and keyed_new is not None:
            return _differences(keyed_old, keyed_new, where)
        if len(frozen) != len(now):
            return [f"{where}: frozen as {_short(frozen)}, now {_short(now)}"]
        pairs = enumerate(zip(frozen, now, strict=True))
        return [line for i, (a, b) in pairs for line in _differences(a, b, f"{where}[{i}]")]
    if frozen != now:
        return [f"{where}: frozen as {_short(frozen)}, now {_short(now)}"]
    return []


def _keyed(items: list[Any]) -> dict[str, Any] | None:
    """A list of named objects (challenges by id, agents by name) as a mapping; None otherwise."""
    out: dict[str, Any] = {}
    for item in items:
        name = item.get("id", item.get("name")) if isinstance(item, dict) else None
        if not isinstance(name, str) or name in out:
            return None
        out[name] = item
    return out


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."

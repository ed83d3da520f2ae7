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
import hashlib
import json
import platform
import urllib.parse
from importlib.metadata import version as package_version
from pathlib import Path

from pydantic import JsonValue

from orchestrator.agents import parse_agent
from orchestrator.agents.redaction import is_secret_name
from orchestrator.gateway.prices import SHIPPED, PriceTable
from orchestrator.grading.sandbox import detect_sandbox
from orchestrator.log.cells import GatewayOrder
from orchestrator.log.matrix_manifest import (
    MATRIX_MANIFEST_VERSION,
    ChallengeEntry,
    ChangeupVersions,
    DecisionChange,
    DecisionRule,
    Host,
    ManifestAgent,
    ManifestGateway,
    MatrixManifest,
    SandboxKind,
    load_matrix_manifest,
)
from orchestrator.matrix.spec import Matrix
from orchestrator.scoring.manifest import run_manifest

__all__ = [
    "MANIFEST",
    "MATRIX_MANIFEST_VERSION",
    "build_matrix_manifest",
    "differences",
    "load_matrix_manifest",
    "read_manifest",
    "record_decision_change",
    "write_manifest",
]

MANIFEST = "manifest.json"
#: Not part of what the matrix is: when it was frozen, and the rule (compared on its own).
_VOLATILE = ("frozen_at", "host", "decision", "decision_changes")


def build_matrix_manifest(matrix: Matrix) -> MatrixManifest:
    """The manifest of ``matrix`` as frozen now (blocking: it runs each agent CLI's ``--version``)."""
    first = matrix.challenges[0]
    agents = []
    for plan in matrix.agents:
        specs = {}
        for spec in plan.specs(matrix.trials):
            described = run_manifest(first, parse_agent(spec, plan.options)).agent.model_dump(mode="json")
            specs[spec] = described
        agents.append(
            ManifestAgent(
                name=plan.name,
                agent=plan.spec,
                per_trial={str(t): s for t, s in sorted(plan.per_trial.items())},
                options={k: "[redacted]" if is_secret_name(k) else v for k, v in plan.options.items()},
                specs=specs,
                model_gateway=None if plan.gateway is None else _gateway(plan.gateway),
            )
        )
    sandbox = detect_sandbox()
    return MatrixManifest(
        matrix_manifest_version=MATRIX_MANIFEST_VERSION,
        frozen_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        changeup=ChangeupVersions(version=package_version("changeup"), python=platform.python_version()),
        # Recorded, not compared: a resumed matrix may run after a kernel update.
        host=Host(platform=f"{platform.system()} {platform.release()} {platform.machine()}"),
        sandbox=SandboxKind(kind=sandbox.kind, reason=sandbox.reason),
        challenges=[
            ChallengeEntry(
                id=c.id,
                title=c.model.title,
                pattern=c.model.pattern,
                sha256=c.digest,
                path=str(c.root),
                phases=[p.id for p in c.phases],
                limits=c.model.limits.model_dump(mode="json"),
                imported_from=None if c.model.imported_from is None else c.model.imported_from.describe(),
            )
            for c in matrix.challenges
        ],
        agents=agents,
        trials=matrix.trials,
        modes=list(matrix.modes),
        # Where each challenge's fresh sessions start; only with mode fresh, so a manifest frozen
        # before fresh mode existed still resumes.
        fresh_at=dict(matrix.fresh_at) if "fresh" in matrix.modes else None,
        retry_invalid=matrix.retry_invalid,
        judge=matrix.judge,
        agent_network="model" if matrix.model_only else "full" if matrix.network else "none",
        agent_shares=list(matrix.shares),
        debounce=matrix.debounce,
        decision=None if matrix.decision is None else matrix.decision.model_dump(mode="json"),
        decision_changes=[],
    )


def _gateway(order: GatewayOrder) -> ManifestGateway:
    """An agent's gateway as frozen: a changed upstream, price table or budget is a changed matrix."""
    text = SHIPPED.read_text(encoding="utf-8") if order.prices is None else order.prices
    table = PriceTable.from_text(text, order.prices_path or "shipped")
    upstream = order.upstream
    if upstream is not None:
        parts = urllib.parse.urlsplit(upstream)
        if "@" in parts.netloc:  # a URL's user and password are credentials: never frozen
            host = parts.netloc.rpartition("@")[2]
            upstream = urllib.parse.urlunsplit(parts._replace(netloc=f"[redacted]@{host}"))
    digest = hashlib.sha256(text.encode()).hexdigest()
    return ManifestGateway(
        upstream=upstream, prices={**table.describe(), "sha256": digest}, budget=order.budget
    )


def read_manifest(results: Path) -> MatrixManifest | None:
    """The frozen manifest of ``results``; None when it has none (a DocumentError when it is unreadable)."""
    path = results / MANIFEST
    return load_matrix_manifest(path) if path.is_file() else None


def write_manifest(results: Path, manifest: MatrixManifest) -> None:
    """Write ``results/manifest.json`` whole (aside, then renamed into place)."""
    results.mkdir(parents=True, exist_ok=True)
    staged = results / (MANIFEST + ".partial")
    staged.write_text(manifest.to_json(), encoding="utf-8")
    staged.replace(results / MANIFEST)


def record_decision_change(
    results: Path, manifest: MatrixManifest, after: DecisionRule, reason: str, finished: int
) -> MatrixManifest:
    """Append a change of the decision rule to the frozen manifest, with its reason; returns it."""
    change = DecisionChange(
        at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        before=manifest.current_decision(),
        after=after,
        reason=reason,
        attempts_finished=finished,
    )
    changed = manifest.model_copy(update={"decision_changes": [*manifest.decision_changes, change]})
    write_manifest(results, changed)
    return changed


def differences(frozen: MatrixManifest, now: MatrixManifest) -> list[str]:
    """What differs between two manifests, one line each (``agents.v7.specs...: frozen as 'a', now 'b'``),
    compared in their JSON form; the moment of freezing, where the challenges were read from and the
    decision rule are left out."""
    return _differences(_comparable(frozen.json_form()), _comparable(now.json_form()), "")


def _comparable(manifest: dict[str, JsonValue]) -> dict[str, JsonValue]:
    kept = {k: v for k, v in manifest.items() if k not in _VOLATILE}
    if kept.get("agent_network") == "on":  # frozen before the whole network was named full
        kept["agent_network"] = "full"
    challenges = manifest.get("challenges")
    kept["challenges"] = [
        {k: v for k, v in c.items() if k != "path"} if isinstance(c, dict) else c
        for c in (challenges if isinstance(challenges, list) else [])
    ]
    return kept


def _differences(frozen: JsonValue, now: JsonValue, where: str) -> list[str]:
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


def _keyed(items: list[JsonValue]) -> dict[str, JsonValue] | None:
    """A list of named objects (challenges by id, agents by name) as a mapping; None otherwise."""
    out: dict[str, JsonValue] = {}
    for item in items:
        name = item.get("id", item.get("name")) if isinstance(item, dict) else None
        if not isinstance(name, str) or name in out:
            return None
        out[name] = item
    return out


def _short(value: JsonValue) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."

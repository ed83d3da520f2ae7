"""The matrix manifest: what a difference is named as, and a changed rule kept with its reason."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from pydantic import JsonValue

from orchestrator.log.matrix_manifest import DecisionRule
from orchestrator.matrix import ResultsRefused, build_comparison, load_matrix, open_results
from orchestrator.matrix.manifest import build_matrix_manifest, differences, read_manifest, write_manifest
from tests.cli import REPO
from tests.matrix.samples import V6_V7, matrix_file


def test_differences_name_the_agent_and_the_field(tmp_path: Path) -> None:
    """Named lists are compared by name: a spec changed on v7's trial 3 reads as such; when it was
    frozen and the challenges' paths are not differences."""
    frozen = build_matrix_manifest(load_matrix(matrix_file(tmp_path)))
    other = tmp_path / "other"
    other.mkdir()
    text = V6_V7.replace("scripted:broken/loosens-assertion", "scripted:broken/skips-auth-test")
    now = build_matrix_manifest(load_matrix(matrix_file(other, text)))
    found = differences(frozen, now)
    assert found[0] == (
        'agents.v7.per_trial.3: frozen as "scripted:broken/loosens-assertion", '
        'now "scripted:broken/skips-auth-test"'
    )
    assert all("frozen_at" not in line for line in found)
    moved = frozen.model_copy(
        update={
            "frozen_at": "later",
            "challenges": [c.model_copy(update={"path": "/elsewhere"}) for c in frozen.challenges],
        }
    )
    assert differences(frozen, moved) == []


def test_a_manifest_frozen_with_the_network_on_resumes_as_full(tmp_path: Path) -> None:
    """``on`` was the whole network's name: frozen so, it is no difference from ``full``; ``none`` is."""
    now = build_matrix_manifest(load_matrix(matrix_file(tmp_path)))
    assert now.agent_network == "full"
    assert differences(now.model_copy(update={"agent_network": "on"}), now) == []
    assert differences(now.model_copy(update={"agent_network": "none"}), now) == [
        'agent_network: frozen as "none", now "full"'
    ]


def test_a_changed_rule_needs_a_reason_and_is_recorded_with_it(tmp_path: Path) -> None:
    """The rule changed after results exist: refused without --change-rule; with it, recorded in
    the manifest (before, after, reason) and in force in the comparison."""
    results = tmp_path / "results"
    open_results(load_matrix(matrix_file(tmp_path)), results).close()
    looser = V6_V7.replace("margin: 0.1", "margin: 0.2")
    matrix = load_matrix(matrix_file(tmp_path, looser))
    with pytest.raises(ResultsRefused, match="--change-rule REASON"):
        open_results(matrix, results)
    open_results(matrix, results, change_rule="0.1 was a typo for 0.2").close()
    manifest = read_manifest(results)
    assert manifest is not None
    (change,) = manifest.decision_changes
    assert change.reason == "0.1 was a typo for 0.2"
    assert (margins(change.before), margins(change.after)) == ([0.1], [0.2])
    assert margins(manifest.decision) == [0.1]  # what was frozen first stays
    comparison = build_comparison(results)
    assert comparison.decision is not None
    assert margins(comparison.decision.rule) == [0.2]
    assert comparison.decision_changes[0].reason == "0.1 was a typo for 0.2"


def margins(rule: DecisionRule) -> list[JsonValue]:
    """The margins a decision rule (as JSON) declares."""
    assert rule is not None
    rules = rule["rules"]
    assert isinstance(rules, list)
    return [r["margin"] for r in rules if isinstance(r, dict) and "margin" in r]


def test_a_gateways_upstream_and_price_table_are_frozen_and_a_changed_table_is_a_difference(
    tmp_path: Path,
) -> None:
    """The upstream is frozen without its URL's password; the price table by its date and digest, so
    a table edited between runs of the matrix refuses the resume, naming the agent; no gateway, no key."""
    (tmp_path / "p.json").write_text('{"date": "2026-01-02", "models": {}}')
    text = V6_V7.replace(
        "  trials: 3\n", "  trials: 3\n  model_upstream: https://me:s3cret@proxy.example/\n  prices: p.json\n"
    )
    text = text.replace("    - name: v7\n", "    - name: v7\n      model_gateway: false\n")
    frozen = build_matrix_manifest(load_matrix(matrix_file(tmp_path, text)))
    assert "s3cret" not in frozen.to_json()
    v6, v7 = frozen.agents
    assert v7.model_gateway is None
    assert '"model_gateway"' not in v7.model_dump_json()
    assert v6.model_gateway is not None
    before = v6.model_gateway.prices["sha256"]
    assert v6.model_gateway.upstream == "https://[redacted]@proxy.example/"
    assert v6.model_gateway.prices == {
        "date": "2026-01-02",
        "source": "",
        "path": str(tmp_path / "p.json"),
        "sha256": hashlib.sha256(b'{"date": "2026-01-02", "models": {}}').hexdigest(),
    }
    (tmp_path / "p.json").write_text('{"date": "2026-01-03", "models": {}}')
    now = build_matrix_manifest(load_matrix(matrix_file(tmp_path, text)))
    assert now.agents[0].model_gateway is not None
    after = now.agents[0].model_gateway.prices["sha256"]
    assert differences(frozen, now) == [
        'agents.v6.model_gateway.prices.date: frozen as "2026-01-02", now "2026-01-03"',
        f'agents.v6.model_gateway.prices.sha256: frozen as "{before}", now "{after}"',
    ]


def test_a_challenge_that_names_no_pattern_is_frozen_and_read_back(tmp_path: Path) -> None:
    """``pattern:`` may be left out of a challenge; a matrix over one freezes it as null (it once
    failed validation there, with a traceback)."""
    target = REPO / "tests" / "fixtures" / "redteam-target"
    text = f"matrix:\n  challenges: [{target}]\n  agents:\n    - {{name: ref, agent: scripted}}\n"
    frozen = build_matrix_manifest(load_matrix(matrix_file(tmp_path, text)))
    assert [(c.id, c.pattern) for c in frozen.challenges] == [("redteam-target", None)]
    write_manifest(tmp_path / "results", frozen)
    assert read_manifest(tmp_path / "results") == frozen

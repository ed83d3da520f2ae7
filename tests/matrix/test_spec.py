"""The matrix file: what loads, and every problem named at FILE:LINE:COLUMN, all at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.matrix.spec import MatrixError, load_matrix, matrix_from_command
from tests.cli import REPO
from tests.matrix.samples import V6_V7, matrix_file


def problems(tmp_path: Path, text: str) -> list[str]:
    """Every problem loading ``text`` reports, as printed."""
    with pytest.raises(MatrixError) as caught:
        load_matrix(matrix_file(tmp_path, text))
    return [str(p) for p in caught.value.problems]


def test_the_v6_v7_matrix_loads_with_a_spec_per_trial(tmp_path: Path) -> None:
    """Per-trial specs replace the agent's spec on those trials only; the rule is kept as declared."""
    matrix = load_matrix(matrix_file(tmp_path))
    assert [c.id for c in matrix.challenges] == ["protected-report-api"]
    v6, v7 = matrix.agents
    assert [v6.spec_for(t) for t in (1, 2, 3)] == ["scripted", "scripted:broken/open-pagination", "scripted"]
    assert v7.specs(3) == ["scripted", "scripted:broken/loosens-assertion"]
    assert (matrix.trials, matrix.retry_invalid, matrix.modes) == (3, 1, ("evolving",))
    assert matrix.decision is not None
    assert [r.rule for r in matrix.decision.rules] == ["critical_failure_blocks", "full_success_not_lower"]


def test_an_unknown_key_is_named_where_it_is_with_the_keys_allowed(tmp_path: Path) -> None:
    """A misspelt key: its line and column, a suggestion, and what the mapping takes."""
    text = V6_V7.replace("  retry_invalid: 1", "  retry_invalids: 1")
    (problem,) = problems(tmp_path, text)
    assert problem.startswith(f"{tmp_path / 'matrix.yaml'}:17:3: unknown key 'retry_invalids' in matrix")
    assert "did you mean 'retry_invalid'" in problem
    assert "decision" in problem


def test_an_unknown_key_in_a_rule_lists_that_rules_keys(tmp_path: Path) -> None:
    """The keys offered are those of the rule written, not of another rule."""
    text = V6_V7.replace("        margin: 0.1", "        margn: 0.1")
    (problem,) = problems(tmp_path, text)
    assert ":24:9: unknown key 'margn'" in problem
    assert "expected one of: rule, margin" in problem


def test_a_mode_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    """A mode other than evolving and fresh is refused at its place, not run as one of them."""
    text = V6_V7.replace("  trials: 3\n", "  trials: 3\n  modes: [evolving, cold]\n")
    (problem,) = problems(tmp_path, text)
    assert ":6:21: matrix.modes[1]: expected 'evolving' or 'fresh'" in problem


def test_every_meaning_problem_is_reported_at_once(tmp_path: Path) -> None:
    """An unknown spec, a duplicate name, a trial out of range and a rule naming no agent: four lines."""
    text = (
        V6_V7.replace("trials: [3]", "trials: [4]")
        .replace("agent: scripted:broken/open-pagination", "agent: robot")
        .replace("candidate: v7", "candidate: v8")
        .replace("- name: v7", "- name: v6")
    )
    found = problems(tmp_path, text)
    assert len(found) == 4, found
    joined = "\n".join(found)
    assert ":11:18: unknown agent 'robot'" in joined
    assert ":12:13: the agent name 'v6' is given twice" in joined
    assert ":15:20: trial 4 is not one of 1..3" in joined
    assert ":19:16: candidate 'v8' is no agent of the matrix" in joined


def test_an_invalid_challenge_is_reported_with_its_own_problems(tmp_path: Path) -> None:
    """A challenge folder that does not load: the matrix line, then the challenge's own problems."""
    (problem,) = problems(tmp_path, V6_V7.replace("protected-report-api", "no-such-challenge"))
    assert ":4:16:" in problem
    assert "no-such-challenge" in problem
    assert "no such challenge folder" in problem


def test_a_file_that_is_not_yaml_names_its_place(tmp_path: Path) -> None:
    """Broken YAML is a problem at its line, as for challenge files."""
    (problem,) = problems(tmp_path, "matrix: [unclosed\n")
    assert problem.startswith(f"{tmp_path / 'matrix.yaml'}:2:1: not valid YAML")


def test_the_command_line_form_names_agents_by_spec() -> None:
    """`--agent A --agent B` makes agents named A and B; the same agent twice is refused."""
    from orchestrator.challenge.loader import load_challenge

    challenge = load_challenge(REPO / "challenges" / "export-time")
    settings = {
        "trials": 2,
        "retry_invalid": 0,
        "judge": "rules",
        "network": True,
        "shares": (),
        "debounce": 0.3,
    }
    matrix = matrix_from_command([challenge], ["scripted", "impostor:always-equal"], {}, **settings)  # type: ignore[arg-type]
    assert [a.name for a in matrix.agents] == ["scripted", "impostor:always-equal"]
    with pytest.raises(MatrixError, match="given twice"):
        matrix_from_command([challenge], ["scripted", "scripted"], {}, **settings)  # type: ignore[arg-type]


def test_every_shape_problem_is_reported_at_once(tmp_path: Path) -> None:
    """A negative trial count and two misspelt keys: four problems (agent is also missing), each
    at its place, in the order of the file."""
    text = V6_V7.replace("  trials: 3", "  trials: -1").replace("retry_invalid:", "retry_invalids:")
    text = text.replace("      agent: scripted\n", "      agnet: scripted\n", 1)
    found = problems(tmp_path, text)
    places = [p.split(": ", 1)[0].rsplit(":", 2)[1:] for p in found]
    assert places == [["5", "11"], ["7", "7"], ["8", "7"], ["17", "3"]], found
    assert "missing required key 'agent' in matrix.agents[0]" in found[1]


def test_the_gateway_keys_resolve_per_agent_with_the_price_table_read_once(tmp_path: Path) -> None:
    """The matrix's gateway applies to each agent; an agent's own keys win, and ``model_gateway:
    false`` turns it off for one; the price table's text, relative to the file, goes in the order."""
    table = '{"date": "2026-02-03", "models": {}}'
    (tmp_path / "p.json").write_text(table)
    text = V6_V7.replace(
        "  trials: 3\n", "  trials: 3\n  model_upstream: http://127.0.0.1:9/\n  prices: p.json\n"
    )
    text = text.replace("    - name: v7\n", "    - name: v7\n      model_gateway: false\n")
    v6, v7 = load_matrix(matrix_file(tmp_path, text)).agents
    assert v6.gateway is not None
    assert v7.gateway is None
    assert (v6.gateway.upstream, v6.gateway.prices, v6.gateway.prices_path) == (
        "http://127.0.0.1:9/",
        table,
        str(tmp_path / "p.json"),
    )


def test_gateway_problems_are_named_where_they_are(tmp_path: Path) -> None:
    """An upstream that is no URL, a price table without a date (once, though both agents use it),
    and an agent's price table under ``model_gateway: false``: each at its place."""
    (tmp_path / "p.json").write_text('{"models": {}}')
    text = V6_V7.replace("  trials: 3\n", "  trials: 3\n  model_upstream: localhost:9\n  prices: p.json\n")
    own = text.replace("    - name: v7\n", "    - name: v7\n      model_upstream: http://127.0.0.1:9\n")
    found = problems(tmp_path, own)
    assert len(found) == 2, found
    assert ":6:19: 'localhost:9' is no upstream" in found[0]
    assert ":7:11: " in found[1]
    assert "has no 'date'" in found[1]
    off = text.replace(
        "    - name: v7\n", "    - name: v7\n      model_gateway: false\n      prices: p.json\n"
    )
    assert (
        ":16:15: prices is for a gateway, and model_gateway: false turns it off" in problems(tmp_path, off)[2]
    )


def test_agent_network_model_gives_every_agent_a_model_only_gateway(tmp_path: Path) -> None:
    """``agent_network: model`` implies each agent's gateway, marked the agent's whole network;
    ``"on"`` (quoted: YAML reads a bare on as true) still reads as ``full``; an agent's
    ``model_gateway: false`` beside it is refused."""
    text = V6_V7.replace("  trials: 3\n", "  trials: 3\n  agent_network: model\n")
    matrix = load_matrix(matrix_file(tmp_path, text))
    assert (matrix.network, matrix.model_only) == (False, True)
    assert [a.gateway.model_only if a.gateway else None for a in matrix.agents] == [True, True]
    on = load_matrix(
        matrix_file(tmp_path, V6_V7.replace("  trials: 3\n", '  trials: 3\n  agent_network: "on"\n'))
    )
    assert (on.network, on.model_only, on.agents[0].gateway) == (True, False, None)
    off = text.replace("    - name: v7\n", "    - name: v7\n      model_gateway: false\n")
    (problem,) = problems(tmp_path, off)
    assert "agent_network: model makes the gateway each agent's whole network" in problem

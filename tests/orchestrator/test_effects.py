"""``prohibited_effects`` as data: the key, its checks, the records, the session's findings, the reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator import ChallengeError, load_challenge
from orchestrator.challenge.model import ChallengeFile
from orchestrator.log.records import (
    Effect,
    EffectFinding,
    Entry,
    SessionEffects,
    SessionGraded,
    TestsEffects,
    decode_entry,
)
from orchestrator.log.report import EffectFound, Effects
from orchestrator.render.phrases import effects_line
from orchestrator.scoring.effects import effects_record
from tests.orchestrator.test_loader import SEED_YAML, make_challenge

EFFECTS_YAML = SEED_YAML.replace(
    "  initial_briefing:", "  prohibited_effects: [network, writes-outside-workspace]\n  initial_briefing:"
)


def problems(root: Path, text: str) -> list[str]:
    """Every problem loading a challenge with ``text`` reports, as printed."""
    with pytest.raises(ChallengeError) as caught:
        load_challenge(make_challenge(root, text))
    return [str(p) for p in caught.value.problems]


def test_the_key_loads_and_the_schema_offers_its_values(tmp_path: Path) -> None:
    """Both effects load in order; ``changeup schema`` lists exactly them for editors."""
    challenge = load_challenge(make_challenge(tmp_path, EFFECTS_YAML))
    assert challenge.model.prohibited_effects == ["network", "writes-outside-workspace"]
    schema = ChallengeFile.model_json_schema(by_alias=True)
    field = schema["$defs"]["ChallengeModel"]["properties"]["prohibited_effects"]
    assert field["items"]["enum"] == ["network", "writes-outside-workspace"]


def test_an_unknown_effect_and_a_repeated_one_are_named_where_they_are(tmp_path: Path) -> None:
    """A misspelt effect says what is allowed, at its place; one listed twice is refused."""
    (unknown,) = problems(tmp_path / "a", EFFECTS_YAML.replace("[network,", "[netwrk,"))
    assert ":3:24:" in unknown
    assert "expected 'network' or 'writes-outside-workspace'" in unknown
    (twice,) = problems(tmp_path / "b", EFFECTS_YAML.replace("writes-outside-workspace]", "network]"))
    assert ":3:33: 'network' is listed twice" in twice


def test_effects_nothing_could_observe_are_refused(tmp_path: Path) -> None:
    """When every phase runs a test command, no hidden pytest run would be watched: an error."""
    text = EFFECTS_YAML + (
        "  phases:\n    - {id: phase1, command: 'true'}\n    - {id: phase2, command: 'true'}\n"
    )
    found = problems(tmp_path, text)
    assert any("prohibited effects are watched in hidden pytest runs" in p for p in found), found


def entry(seq: int, record: object) -> Entry:
    """A log entry at ``seq``."""
    return Entry(seq, float(seq), record)  # type: ignore[arg-type]


def test_the_findings_are_the_final_snapshots_one_per_effect_with_its_tests(tmp_path: Path) -> None:
    """An earlier snapshot's effect is not the final workspace's; the final one's effects are
    merged over its runs, each with the first test that made it and how many did."""
    challenge = load_challenge(make_challenge(tmp_path, EFFECTS_YAML))
    connect = "connect to 203.0.113.7:443"
    entries = [
        entry(1, TestsEffects(1, "early", (Effect("network", "look up api.example.com", "phase1/t.py::a"),))),
        entry(2, TestsEffects(2, "final", (Effect("network", connect, "phase1/t.py::a"),))),
        entry(3, TestsEffects(3, "final", (Effect("network", connect, "phase2/t.py::b"),))),
        entry(4, SessionGraded(0, "final", (), "ok", "", 0.0, True)),
    ]
    record = effects_record(challenge, entries)
    assert record == SessionEffects(
        ("network", "writes-outside-workspace"),
        "final",
        True,
        (EffectFinding("network", connect, "phase1/t.py::a", 2),),
    )
    assert decode_entry({"seq": 5, "t": 5.0, **record.to_record()}).record == record
    unwatched = effects_record(challenge, [entry(1, SessionGraded(0, "final", (), "ok"))])
    assert unwatched is not None
    assert not unwatched.watched
    assert effects_record(load_challenge(make_challenge(tmp_path / "plain")), entries) is None


def test_the_reports_say_watched_clean_or_what_was_seen() -> None:
    """Not watched is never "none"; a finding names its test and how many others made it."""
    said = Effects(prohibited=["network"], snapshot="0" * 40, watched=False, findings=[])
    assert "not observed" in (effects_line(said) or "")
    said = said.model_copy(update={"watched": True})
    assert "none in the hidden test runs" in (effects_line(said) or "")
    found = EffectFound(effect="network", detail="look up x.example", test="phase1/t.py::a", tests=3)
    said = said.model_copy(update={"findings": [found]})
    assert effects_line(said) == (
        "prohibited effects: 1 in the hidden test runs of the final workspace: "
        "network: look up x.example (in phase1/t.py::a and 2 other tests)"
    )
    assert effects_line(None) is None

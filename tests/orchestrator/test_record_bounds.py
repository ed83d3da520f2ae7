"""Records bound what an agent can make grow: each field's cap, applied where the record is made."""

from __future__ import annotations

import dataclasses
import re

from hypothesis import given
from hypothesis import strategies as st

from orchestrator.log.records import (
    FINDINGS,
    Criterion,
    Effect,
    SessionAborted,
    SessionScope,
    SessionScored,
    TestsEffects,
    decode_entry,
)
from triggers import AgentOutput, CommitMade, FileChange, FilesChanged, TestOutcome, decode
from triggers.bounds import DETAIL, ITEMS, NAME, OUTPUT, PATH, TEXT, clip, marker
from triggers.records import TurnSummary

MARKED = re.compile(r"… \[truncated: (more than )?[\d,]+ bytes\]\Z")


@given(st.text(), st.integers(min_value=48, max_value=400))
def test_a_cut_text_keeps_its_head_fits_its_cap_and_cuts_once(text: str, limit: int) -> None:
    """Over the cap: the head of the text, then a marker, within the cap; cutting again changes
    nothing. Within the cap: the text itself."""
    cut = clip(text, limit)
    assert len(cut) <= limit
    assert clip(cut, limit) == cut
    if len(text) <= limit:
        assert cut == text
    else:
        found = MARKED.search(cut)
        assert found is not None
        assert text.startswith(cut[: found.start()])


def test_the_marker_says_the_whole_size_in_bytes() -> None:
    """The figure is the UTF-8 size of the whole text, also when it is cut again to a smaller cap,
    and "more than" when only a head of it was read."""
    text = "é" * 5000
    assert clip(text, 100).endswith("… [truncated: 10,000 bytes]")
    assert clip(clip(text, 1000), 100).endswith("… [truncated: 10,000 bytes]")
    assert clip("x" * 10, 100, size=4096).endswith("… [truncated: more than 4,096 bytes]")
    assert marker(12_345_678) == "… [truncated: 12,345,678 bytes]"


def test_every_agent_fed_field_of_the_engines_records_is_capped() -> None:
    """Subject and sha, path, test id and detail, output, final message: each at its cap."""
    huge = "\x1b[32m" + "A" * 300_000
    assert len(CommitMade(0.0, huge, huge).message) == NAME
    assert len(CommitMade(0.0, huge, huge).sha) == NAME
    assert len(FileChange(huge, "added").path) == PATH
    outcome = TestOutcome(huge, "failed", huge)
    assert (len(outcome.id), len(outcome.detail)) == (PATH, DETAIL)
    assert len(AgentOutput(0.0, huge).text) == OUTPUT
    summary = TurnSummary(0.0, 1, final_message=huge, model=huge, session=huge, transcript=huge)
    assert [len(summary.final_message or ""), len(summary.model), len(summary.session)] == [TEXT, NAME, NAME]
    assert CommitMade(0.0, "abc", "fine").message == "fine"


def test_a_batch_of_changes_keeps_its_first_items_and_counts_the_rest() -> None:
    """100,000 changes: the first ITEMS recorded, the rest counted in ``omitted``; read back, the
    same record. A batch an older log recorded whole is read back whole (replay decides as it did)."""
    changes = tuple(FileChange(f"f{n}", "added") for n in range(100_000))
    batch = FilesChanged(1.0, changes)
    assert (len(batch.changes), batch.omitted) == (ITEMS, 100_000 - ITEMS)
    assert decode(batch.to_record()) == batch
    assert dataclasses.replace(batch, t=2.0).omitted == batch.omitted
    older = {
        "kind": "fs.changed",
        "t": 1.0,
        "changes": [{"path": c.path, "change": c.change} for c in changes],
    }
    read = decode(older)
    assert isinstance(read, FilesChanged)
    assert len(read.changes) == 100_000


def test_the_sessions_records_bound_what_quotes_agent_text() -> None:
    """A traceback, a finding quoting a commit subject, a rubric's findings and data, the scope's
    paths and an effect's detail: each within its cap, counts summarised, read back the same."""
    huge = "<script>" + "B" * 200_000
    aborted = SessionAborted("crashed", huge)
    assert len(aborted.detail) == TEXT
    criterion: Criterion = {
        "id": "removal",
        "title": "",
        "weight": 1.0,
        "score": 0.0,
        "critical": False,
        "critical_failure": False,
        "findings": [f"commit {n}: {huge!r}" for n in range(500)],
        "data": {"paths": [huge] * 5000},
    }
    (scored,) = SessionScored((criterion,)).criteria
    assert len(scored["findings"]) == FINDINGS
    assert scored["findings"][-1] == f"… and {500 - FINDINGS + 1:,} more findings"
    assert all(len(finding) <= DETAIL for finding in scored["findings"])
    assert len(scored["data"]["paths"]) == ITEMS
    assert all(len(path) <= DETAIL for path in scored["data"]["paths"])
    scope = SessionScope(("src/**",), 5000, tuple({"path": f"f{n}", "change": "added"} for n in range(5000)))
    assert (len(scope.findings), scope.omitted) == (ITEMS, 5000 - ITEMS)
    effects = TestsEffects(1, "tree", (Effect("network", huge, huge),))
    assert len(effects.effects[0].detail) == DETAIL
    assert len(effects.effects[0].test) == DETAIL
    for record in (aborted, SessionScored((criterion,)), scope, effects):
        line = {"seq": 1, "t": 0.0, **record.to_record()}
        assert decode_entry(line).record == record

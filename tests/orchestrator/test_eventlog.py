"""The event log: one line per record, exact times, torn tails, versions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.log.eventlog import (
    FORMAT,
    VERSION,
    EventLog,
    EventLogError,
    LogReader,
    read_log,
)
from orchestrator.log.journal import repair
from orchestrator.log.records import (
    AgentSandboxed,
    ClockSkipped,
    Entry,
    PhaseSealed,
    SessionAborted,
    SessionGraded,
    SessionScope,
    SessionScored,
    SharedPath,
    TestsStarted,
    UnknownRecord,
    WorkspaceCreated,
    WorkspaceOverLimits,
)
from orchestrator.log.shapes import KNOWN_KINDS
from triggers import AgentOutput, ClockTick, FileChange, FilesChanged, PhaseResult, TestOutcome, TriggerFired


def test_header_then_records_with_seq_and_exact_t(tmp_path: Path) -> None:
    """Line 1 is the header; records carry seq, t (exactly) and kind."""
    path = tmp_path / "events.jsonl"
    log = EventLog.create(path, {"challenge": "x"})
    assert log.append(ClockTick(0.0), 0.1 + 0.2) == 1
    assert log.append(UnknownRecord("a.b", {"v": "é"}), 1.5, sync=True) == 2
    log.close()
    assert list(LogReader(path)) == [
        {"seq": 1, "t": 0.30000000000000004, "kind": "clock.tick"},
        {"seq": 2, "t": 1.5, "kind": "a.b", "v": "é"},
    ]
    assert list(json.loads(path.read_text().splitlines()[1])) == ["seq", "t", "kind"]
    contents = read_log(path)
    assert contents.header == {"format": FORMAT, "version": VERSION, "challenge": "x"}
    assert contents.entries == [
        Entry(1, 0.30000000000000004, ClockTick(0.30000000000000004)),
        Entry(2, 1.5, UnknownRecord("a.b", {"v": "é"})),
    ]
    assert not contents.torn


def test_create_refuses_to_overwrite(tmp_path: Path) -> None:
    """A log is never silently replaced."""
    path = tmp_path / "events.jsonl"
    EventLog.create(path, {}).close()
    with pytest.raises(FileExistsError):
        EventLog.create(path, {})


def test_torn_tail_is_flagged_on_read_and_cut_on_reopen(tmp_path: Path) -> None:
    """A half-written last line is ignored when read and removed when the log is reopened."""
    path = tmp_path / "events.jsonl"
    log = EventLog.create(path, {})
    log.append(UnknownRecord("k", {}), 1.0)
    log.close()
    with path.open("ab") as handle:
        handle.write(b'{"seq":2,"t":2.0,"ki')
    contents = read_log(path)
    assert contents.torn
    assert len(contents.entries) == 1
    again = EventLog.reopen(path)
    assert again.append(UnknownRecord("k", {}), 3.0) == 2
    again.close()
    assert [r["seq"] for r in list(LogReader(path))] == [1, 2]
    assert not repair(path)


def test_corrupt_line_is_an_error_with_its_line_number(tmp_path: Path) -> None:
    """A complete line that is not JSON is refused, naming the line."""
    path = tmp_path / "events.jsonl"
    EventLog.create(path, {}).close()
    with path.open("a") as handle:
        handle.write("not json\n")
    with pytest.raises(EventLogError, match=r"events.jsonl:2: not a JSON line"):
        read_log(path)


HEAD = f'{{"format": "{FORMAT}", "version": {VERSION}}}\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty log"),
        ('{"format": "other"}\n', "not a changeup event log"),
        (
            f'{{"format": "{FORMAT}", "version": 99}}\n',
            f"version 99; this changeup reads version {VERSION} \\(not one this changeup knows\\)",
        ),
        (
            f'{{"format": "{FORMAT}", "version": 1}}\n',
            f"version 1; this changeup reads version {VERSION} \\(written by an older changeup\\)",
        ),
        (HEAD + "[1]\n", "expected a JSON object"),
        (HEAD + '{"kind": "x"}\n', "needs 'seq' and 'kind'"),
        (HEAD + '{"kind": "x", "seq": "1"}\n', "needs 'seq' and 'kind'"),
        (HEAD + '{"seq": 1, "kind": "x"}{}\n', ":2: not a JSON line"),
        (HEAD + '{"seq": 1, "kind": "x"} 7\n', ":2: not a JSON line"),
    ],
)
def test_unreadable_logs_say_why(tmp_path: Path, text: str, message: str) -> None:
    """Empty files, other formats and unknown versions are refused clearly."""
    path = tmp_path / "events.jsonl"
    path.write_text(text)
    with pytest.raises(EventLogError, match=message):
        read_log(path)


def test_lines_read_as_json_loads_reads_them(tmp_path: Path) -> None:
    """Whitespace around a record (a hand edit, CRLF line ends) is accepted, as by json.loads."""
    path = tmp_path / "events.jsonl"
    EventLog.create(path, {}).close()
    with path.open("a", newline="") as handle:
        handle.write('  {"seq": 1, "t": 0.0, "kind": "a"}\n{"seq": 2, "t": 0.0, "kind": "b"}  \r\n')
    assert [r["kind"] for r in list(LogReader(path))] == ["a", "b"]


def test_missing_log(tmp_path: Path) -> None:
    """A folder without a log says so."""
    with pytest.raises(EventLogError, match="no event log"):
        read_log(tmp_path / "events.jsonl")


TIMES = st.floats(0, 1e6, allow_nan=False)
RECORDS = st.lists(
    st.one_of(
        st.builds(AgentOutput, TIMES, st.text(max_size=30), st.sampled_from(["stdout", "stderr"])),
        st.builds(
            FilesChanged,
            TIMES,
            st.lists(st.builds(FileChange, st.text(max_size=10), st.sampled_from(["added", "deleted"]))).map(
                tuple
            ),
        ),
        st.builds(TriggerFired, st.text(max_size=10), st.text(max_size=30), st.integers(1, 5)),
    ),
    max_size=20,
)


@settings(max_examples=50, deadline=None)
@given(RECORDS, st.lists(st.floats(0, 1e6, allow_nan=False), min_size=20, max_size=20))
def test_round_trip(
    tmp_path_factory: pytest.TempPathFactory,
    records: list[AgentOutput | FilesChanged | TriggerFired],
    times: list[float],
) -> None:
    """Whatever is appended reads back equal, times bit for bit."""
    path = tmp_path_factory.mktemp("log") / "events.jsonl"
    log = EventLog.create(path, {})
    for record, t in zip(records, times, strict=False):
        log.append(record, t)
    log.close()
    back = list(LogReader(path))
    expected = [{k: v for k, v in record.to_record().items() if k != "t"} for record in records]
    assert [{k: v for k, v in r.items() if k not in ("seq", "t")} for r in back] == expected
    assert [r["t"] for r in back] == times[: len(records)]


PHASES = (PhaseResult("phase1", 1, 1, (TestOutcome("phase1/test_a.py::test_x", "failed", "no"),)),)
#: One record of each of the session's own kinds.
SESSION_RECORDS = (
    WorkspaceCreated("abc", "/usr/bin/python3", {"kind": "bubblewrap"}),
    PhaseSealed("phase1", {"test_a.py": "00ff"}, "beef"),
    AgentSandboxed(True, "agent", "none", (SharedPath("/opt/x", False),), (".claude.json",)),
    WorkspaceOverLimits(10001, 5, "too many files"),
    TestsStarted(3, "abc", ("phase1", "phase2")),
    SessionGraded(0, "abc", PHASES, "tampered", "a canary", 1.5, False),
    SessionScored(
        (
            {
                "id": "c",
                "title": "",
                "weight": 1.0,
                "score": None,
                "critical": False,
                "critical_failure": False,
                "findings": ["x"],
                "data": {"k": [1]},
            },
        )
    ),
    SessionScope(("src/**",), 2, ({"path": "README.md", "change": "modified"},)),
    ClockSkipped(1800.0, 1795.25),
    SessionAborted("crashed", "Traceback ..."),
)


def test_the_sessions_own_records_read_back_as_the_records_written(tmp_path: Path) -> None:
    """Each of the session's record types goes in typed and comes out typed, equal."""
    path = tmp_path / "events.jsonl"
    log = EventLog.create(path, {})
    log.append_all(SESSION_RECORDS, 4.5)
    log.close()
    entries = read_log(path).entries
    assert [entry.record for entry in entries] == list(SESSION_RECORDS)
    assert [(entry.seq, entry.t) for entry in entries] == [
        (n, 4.5) for n in range(1, len(SESSION_RECORDS) + 1)
    ]
    assert {record.kind for record in SESSION_RECORDS} <= KNOWN_KINDS


def test_a_grading_that_failed_reads_as_an_invalid_grading_with_no_verdicts(tmp_path: Path) -> None:
    """The short form older logs wrote for a failed final grading decodes with its defaults."""
    path = log_of(tmp_path, {"t": 2.0, "kind": "session.graded", "status": "invalid", "detail": "boom"})
    (entry,) = read_log(path).entries
    assert entry.record == SessionGraded(status="invalid", detail="boom")


def log_of(tmp_path: Path, *records: dict[str, Any]) -> Path:
    """A log holding ``records`` (numbered from 1), as a hand edit could leave them."""
    path = tmp_path / "events.jsonl"
    lines = [HEAD, *(json.dumps({"seq": seq, **r}) + "\n" for seq, r in enumerate(records, 1))]
    path.write_text("".join(lines))
    return path


PHASE = {"phase": "phase1", "passed": 1, "failed": 0, "tests": []}
RESULT = {"t": 1.0, "kind": "tests.result", "request": 1, "snapshot": "abc", "phases": [PHASE]}
CRITERION = {
    "id": "protection",
    "title": "T",
    "weight": 0,
    "score": 1.0,
    "critical": True,
    "critical_failure": False,
    "findings": [],
    "data": {},
}


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (
            {**RESULT, "phases": [{"phase": "phase1", "failed": 0}]},
            "tests.result record: field 'phases[0].passed' is missing (expected an integer)",
        ),
        (
            {**RESULT, "request": True},
            "tests.result record: field 'request' is true, expected an integer",
        ),
        (
            {**RESULT, "phases": [{**PHASE, "tests": [{"id": "a", "outcome": "won"}]}]},
            "field 'phases[0].tests[0].outcome' is \"won\", expected one of 'passed', 'failed'",
        ),
        (
            {"t": 1.0, "kind": "fs.changed", "changes": [{"path": "a", "change": "added"}, {"path": "b"}]},
            "fs.changed record: field 'changes[1].change' is missing (expected one of 'added'",
        ),
        (
            {"t": 1.0, "kind": "message.queued", "trigger": "x", "message_kind": "pivot", "text": 5},
            "message.queued record: field 'text' is 5, expected a string",
        ),
        (
            {"t": 1.0, "kind": "tests.requested", "request": 1, "phases": ["phase1", 2], "reason": ""},
            "tests.requested record: field 'phases[1]' is 2, expected a string",
        ),
        (
            {"t": 1.0, "kind": "session.scored", "criteria": [{**CRITERION, "score": "high"}]},
            "session.scored record: field 'criteria[0].score' is \"high\", expected a number or null",
        ),
        (
            {"t": 1.0, "kind": "session.graded", "status": "ok", "detail": ""},
            "session.graded record: field 'request' is missing (expected an integer)",
        ),
        ({"kind": "clock.tick"}, "clock.tick record: field 't' is missing (expected a number)"),
        (
            {"kind": "anything.else", "t": "soon"},
            "anything.else record: field 't' is \"soon\", expected a number",
        ),
    ],
)
def test_a_record_that_does_not_fit_its_kind_names_line_kind_and_field(
    tmp_path: Path, record: dict[str, Any], message: str
) -> None:
    """A missing field, or one of the wrong type or value, nested or not: line, kind and field."""
    path = log_of(tmp_path, {"t": 0.0, "kind": "session.started", "files": []}, record)
    with pytest.raises(EventLogError) as raised:
        read_log(path)
    assert str(raised.value).startswith(f"{path}:3: ")
    assert message in str(raised.value)


def test_missing_optional_fields_are_filled_in(tmp_path: Path) -> None:
    """A field with a default may be left out; readers find it filled in with the default."""
    path = log_of(
        tmp_path,
        {"t": 0.0, "kind": "phase.unlocked", "phase": "phase1"},
        {**RESULT, "phases": [{"phase": "phase1", "passed": 1, "failed": 0}]},
        {"t": 2.0, "kind": "session.graded", "status": "invalid", "detail": "the final grading failed"},
    )
    unlocked, result, graded = list(LogReader(path))
    assert unlocked["trigger"] == ""
    assert (result["status"], result["detail"], result["seconds"], result["cached"]) == ("ok", "", 0.0, False)
    assert result["phases"][0]["tests"] == []
    assert "phases" not in graded  # the grading failed: no verdicts, nothing to fill in


def test_an_older_logs_network_reads_as_its_name(tmp_path: Path) -> None:
    """``agent.sandboxed`` written with ``network: true``/``false`` reads as ``full``/``none``."""
    sandboxed = {"kind": "agent.sandboxed", "confined": True, "user": None, "shares": [], "home_seeded": []}
    path = log_of(
        tmp_path, {"t": 0.0, **sandboxed, "network": True}, {"t": 0.0, **sandboxed, "network": False}
    )
    assert [entry.record for entry in read_log(path).entries] == [
        AgentSandboxed(True, None, "full", (), ()),
        AgentSandboxed(True, None, "none", (), ()),
    ]


def test_every_kind_with_a_shape_is_documented() -> None:
    """docs/event-log.md describes every kind a log is checked against."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "event-log.md").read_text()
    assert {kind for kind in KNOWN_KINDS if f"| `{kind}` |" not in text} == set()

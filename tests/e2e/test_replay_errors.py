"""replay and re-scoring on damaged logs and incomplete run folders: clear errors, no tracebacks."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.challenge.loader import load_challenge
from orchestrator.log.eventlog import EventLogError, LogReader, read_log
from orchestrator.render.html_report import report_html
from orchestrator.render.markdown import report_markdown
from orchestrator.render.timeline import describe, play
from orchestrator.scoring.report import build_report
from orchestrator.session.replay import replay_records
from tests.cli import REPO, changeup, in_process
from tests.e2e.test_replay import copy_log

pytestmark = pytest.mark.slow


def lines_of(run: Path) -> list[str]:
    """The log's lines, header first."""
    return (run / "events.jsonl").read_text().splitlines(keepends=True)


def test_a_record_without_a_field_names_its_line_kind_and_field(recorded: Path, tmp_path: Path) -> None:
    """A tests.result whose phase lacks ``passed``: the line, the kind and the field; exit 1."""
    lines = lines_of(recorded)
    number, record = next(
        (n, json.loads(line)) for n, line in enumerate(lines, 1) if '"kind":"tests.result"' in line
    )
    del record["phases"][0]["passed"]
    lines[number - 1] = json.dumps(record) + "\n"
    result = in_process("replay", str(copy_log(recorded, tmp_path, lines)))
    assert result.exit_code == 1
    assert (
        f"events.jsonl:{number}: tests.result record: field 'phases[0].passed' is missing "
        "(expected an integer)"
    ) in result.output
    assert isinstance(result.exception, SystemExit)  # a clean error, not a crash


def test_a_header_only_log_has_nothing_to_replay(recorded: Path, tmp_path: Path) -> None:
    """A log with its header alone: 'nothing to replay', exit 1 (nothing was checked)."""
    result = in_process("replay", str(copy_log(recorded, tmp_path, lines_of(recorded)[:1])))
    assert result.exit_code == 1
    assert "nothing to replay: the log has only its header" in result.output
    assert "agrees" not in result.output


def whole_copy(recorded: Path, tmp_path: Path, without: str = "") -> Path:
    """A copy of the recorded run folder, less ``without``."""
    folder = tmp_path / recorded.name
    shutil.copytree(recorded, folder, symlinks=True)
    if without:
        shutil.rmtree(folder / without)
    return folder


@pytest.mark.parametrize("missing", ["workspace", "shadow.git"])
def test_rescore_without_the_snapshots_says_what_is_missing(
    recorded: Path, tmp_path: Path, missing: str
) -> None:
    """A run folder without workspace/ or shadow.git/: what is missing and why re-scoring needs it."""
    done = changeup("replay", str(whole_copy(recorded, tmp_path, missing)), "--rescore")
    assert done.returncode == 1
    assert f"cannot re-score: the run folder has no {missing}/" in done.stderr
    assert "re-tests the snapshots the run recorded in shadow.git/" in done.stderr
    assert "Traceback" not in done.stderr


def test_rescore_keeps_the_rubric_says_it_is_a_rescore_and_shows_progress(
    recorded: Path, tmp_path: Path
) -> None:
    """export-time declares no scoring: the re-score keeps the protection review all the same,
    marks the report as a re-score, and prints a line per test run to stderr (not a terminal)."""
    folder = whole_copy(recorded, tmp_path)
    done = changeup("replay", str(folder), "--rescore")
    assert done.returncode == 0, done.stderr
    before = json.loads((folder / "report.json").read_text())
    after = json.loads((folder / "report-rescored.json").read_text())
    assert [c["id"] for c in before["rubric"]] == ["protection"]
    assert after["rubric"] == before["rubric"]
    assert after["rescore"] == {
        "run": folder.name,
        "challenge": str(folder / "challenge"),  # the copy the run kept
        "challenge_sha256": before["run"]["challenge"]["sha256"],
        "original_score": before["score"]["total"],
        "snapshots_tested": 2,
        "changes": [],
    }
    progress = done.stderr.splitlines()
    assert progress[0].startswith("re-testing snapshot 1/2 (phase1, seq ")
    assert progress[1].startswith("re-testing snapshot 2/2 (phase1, phase2, seq ")


def test_a_challenge_with_another_id_is_refused(recorded: Path) -> None:
    """--challenge naming another challenge: exit 2, both ids named, nothing re-scored."""
    result = in_process(
        "replay", str(recorded), "--rescore", "--challenge", str(REPO / "challenges/normalize-tags")
    )
    assert result.exit_code == 2
    assert "is the challenge 'normalize-tags', but the run" in result.output
    assert "is of 'export-time'" in result.output
    assert not (recorded / "report-rescored.json").exists()


# --- every field replay reads -------------------------------------------------------------------


def paths(value: Any, where: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """Every field of a record, nested ones too (the first item of each list stands for all)."""
    items = value.items() if isinstance(value, dict) else enumerate(value[:1])
    for key, inner in items:
        yield (*where, key)
        if isinstance(inner, dict | list):
            yield from paths(inner, (*where, key))


def mutated(record: dict[str, Any], where: tuple[str | int, ...], wrong: bool) -> dict[str, Any]:
    """``record`` with the field at ``where`` removed, or (``wrong``) of a type no field has there."""
    out = copy.deepcopy(record)
    parent: Any = out
    for key in where[:-1]:
        parent = parent[key]
    if wrong:
        parent[where[-1]] = [] if isinstance(parent[where[-1]], dict) else {"wrong": 1}
    else:
        del parent[where[-1]]
    return out


def read_everything(folder: Path) -> None:
    """What replay, playback and re-scoring read of a log: all of it, through every reader."""
    challenge = load_challenge(REPO / "challenges" / "export-time")
    contents = read_log(folder / "events.jsonl")
    replay_records(challenge.spec, LogReader(folder / "events.jsonl"), torn=contents.torn)
    for entry in contents.entries:
        describe(entry.record, verbose=True)
    play(contents.entries, 1e9, lambda style, text: None, lambda seconds: None, verbose=True)
    report = build_report(challenge, contents)
    report_markdown(report)
    report_html(report, contents.entries)


def field_name(where: tuple[str | int, ...]) -> str:
    """``("phases", 0, "passed")`` → ``phases[0].passed``."""
    return "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in where).lstrip(".")


def test_every_field_is_checked_or_not_needed(recorded: Path, tmp_path: Path) -> None:
    """Each field of each record of a real log, removed or of a wrong type: either reading the
    log names the line, kind and field, or every reader of replay copes (no exception)."""
    lines = lines_of(recorded)
    problems = []
    for number, line in enumerate(lines[1:], 2):
        record = json.loads(line)
        for where in paths(record):
            if where[0] in ("seq", "kind"):  # the record's identity: their own message (test_eventlog)
                continue
            for wrong in (False, True):
                changed = [*lines]
                changed[number - 1] = json.dumps(mutated(record, where, wrong)) + "\n"
                folder = tmp_path / f"{number}-{field_name(where)}-{wrong}"
                folder.mkdir()
                (folder / "events.jsonl").write_text("".join(changed))
                said = f"line {number} {field_name(where)} {'of a wrong type' if wrong else 'missing'}"
                try:
                    read_everything(folder)
                except EventLogError as error:
                    expected = f":{number}: {record['kind']} record: field '{field_name(where)}' "
                    if expected not in str(error):
                        problems.append(f"{said}: the message does not name it: {error}")
                except Exception as error:
                    problems.append(f"{said}: {error!r}")
    assert not problems, "\n".join(problems)

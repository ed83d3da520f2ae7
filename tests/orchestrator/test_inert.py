"""Agent text is shown, never acted on: every rendering of a run whose commit subject, file name,
output, failing test and turn hold escape sequences, a carriage return, a bidi override, a script
and a link (``orchestrator/render/inert.py``)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from markdown_it import MarkdownIt
from rich.console import Console

from orchestrator.log.eventlog import EventLog, LogContents, read_log
from orchestrator.log.report import Report, report_json
from orchestrator.render.html_report import report_html
from orchestrator.render.inert import json_text, markdown, terminal, visible
from orchestrator.render.markdown import report_markdown
from orchestrator.render.terminal import print_summary
from orchestrator.render.timeline import lines
from orchestrator.scoring.report import build_report
from tests.orchestrator.test_report import EXPORT_TIME, RESULT, START, criterion, log
from triggers import CommitMade

FORGERY = (
    "\x1b[32m✓ tests #9: phase1 5/5\x1b[0m\r\u202eevil\u202c <script>alert(1)</script> "
    "[x](javascript:alert(1)) \x9b31m"
)
#: What no rendering may hold raw: C0 controls but newline and tab, DEL and C1, bidi controls.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def forged_run() -> tuple[Report, LogContents]:
    """The report of a run in which every field the agent writes holds :data:`FORGERY`."""
    failing = {"id": f"phase1/test_x.py::test_{FORGERY}", "outcome": "failed", "detail": FORGERY}
    phase = {"phase": "phase1", "passed": 0, "failed": 1, "tests": [failing]}
    contents = log(
        *START,
        {"kind": "fs.changed", "changes": [{"path": f"{FORGERY}.py", "change": "added"}]},
        {"kind": "git.commit", "sha": "a" * 40, "message": FORGERY},
        {"kind": "agent.output", "text": f"{FORGERY}\n{FORGERY}\n", "stream": "stdout"},
        {"kind": "turn.summary", "turn": 1, "final_message": FORGERY, "transcript": f"agent/{FORGERY}"},
        {"kind": "agent.turn_ended", "exit_code": 0, "reason": ""},
        {**RESULT, "phases": [phase], "status": "tampered", "detail": FORGERY},
        {"kind": "session.ended", "reason": "agent_done", "detail": ""},
        {**RESULT, "kind": "session.graded", "request": 0, "phases": [phase], "detail": FORGERY},
        {"kind": "session.scored", "criteria": [criterion("removal", 1.0, 0.0, f"commit aaaa: {FORGERY!r}")]},
        {
            "kind": "session.scope",
            "allowed_paths": ["src/**"],
            "changed": 1,
            "findings": [{"path": f"{FORGERY}.py", "change": "added"}],
        },
        {
            "kind": "session.aborted",
            "status": "crashed",
            "detail": f"Traceback:\n{FORGERY}\n```\n# {FORGERY}",
        },
    )
    return build_report(EXPORT_TIME, contents), contents


def test_each_kind_neutralises_what_it_would_act_on() -> None:
    """Plain text shows controls as escapes; the terminal escapes rich markup too; Markdown escapes
    its constructs; JSON escapes C1 and bidi as it does C0."""
    assert visible("a\x1b[1mb\rc\u202e\n") == "a\\x1b[1mb\\rc\\u202e\\n"
    assert visible("a\nb\tc", lines=True) == "a\nb\tc"
    assert terminal("[bold]x[/bold]\x1b") == "\\[bold]x\\[/bold]\\x1b"
    assert markdown("[x](javascript:alert(1)) <b>*y*</b> | `z`") == (
        "\\[x\\](javascript:alert(1)) \\<b\\>\\*y\\*\\</b\\> \\| \\`z\\`"
    )
    assert markdown("# not a heading") == "\\# not a heading"
    assert json.loads(json_text({"k": FORGERY}, ensure_ascii=False)) == {"k": FORGERY}
    assert not RAW.search(json_text({"k": FORGERY}, ensure_ascii=False))


def test_the_terminal_summary_and_the_timeline_are_inert() -> None:
    """The end-of-run summary and ``show``'s lines (with ``--all`` too) hold no control character,
    and no agent text becomes rich markup or a line of its own."""
    report, contents = forged_run()
    buffer = io.StringIO()
    print_summary(report, Console(file=buffer, force_terminal=True, color_system="truecolor", width=300))
    printed = re.sub(r"\x1b\[[0-9;]*m", "", buffer.getvalue())  # rich's own styles
    assert not RAW.search(printed)
    assert "\\x1b[32m✓ tests #9" in printed
    for verbose in (False, True):
        shown = "\n".join(text for _, _, text in lines(contents.entries, verbose=verbose))
        assert not RAW.search(shown)
        assert all(re.match(r"( {10}|\d\d:\d\d\.\d\d  )", line) for line in shown.splitlines())


def test_report_md_renders_no_html_link_or_block_of_the_agents() -> None:
    """report.md, rendered as CommonMark with tables, holds no tag, link or code fence of the agent's:
    its text is shown, its traceback stays inside its own fence."""
    report, _ = forged_run()
    text = report_markdown(report)
    assert not RAW.search(text)
    rendered = MarkdownIt("commonmark").enable("table").render(text)
    assert "<script" not in rendered
    assert "href=" not in rendered
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered
    fenced = re.findall(r"<pre><code[^>]*>(.*?)</code></pre>", rendered, re.S)
    assert len(fenced) == 1
    assert "# \\x1b[32m✓ tests #9" in fenced[0]  # the agent's fence and heading, inside ours


def test_report_html_and_json_are_inert() -> None:
    """report.html escapes every value (text and attributes) and shows controls; report.json holds
    them as \\u escapes."""
    report, contents = forged_run()
    page = report_html(report, contents.entries)
    assert not RAW.search(page)
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    written = report_json(report)  # as runs.write_reports writes it
    assert not RAW.search(written)
    assert Report.model_validate(json.loads(written)) == report


def test_the_event_log_is_inert_to_print(tmp_path: Path) -> None:
    """events.jsonl holds C1 controls and bidi overrides as \\u escapes (JSON escapes C0 itself),
    and reads back the same text."""
    log = EventLog.create(tmp_path / "events.jsonl", {})
    log.append(CommitMade(1.0, "a" * 40, FORGERY), 1.0)
    log.close()
    assert not RAW.search((tmp_path / "events.jsonl").read_text(encoding="utf-8"))
    (entry,) = read_log(tmp_path / "events.jsonl").entries
    assert entry.record == CommitMade(1.0, "a" * 40, FORGERY)

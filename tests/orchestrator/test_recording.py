"""The gateway's recording, written and read back without a session: what a match compares, what
it sees past, and that a tape serves nothing once a request diverged (or past its end)."""

from __future__ import annotations

import json
from pathlib import Path

from orchestrator.gateway.recording import REDACTED, Divergence, Recorded, Recorder, Tape, normalised

TOKEN = "changeup-session-abc"
RUN = "/runs/export-time-20261204-101500-claude-code/workspace"


def _body(text: str, *, user: str = "u-1", where: str = RUN, token: str = TOKEN) -> bytes:
    """An Anthropic request naming its working folder and holding a session identifier."""
    return json.dumps(
        {
            "model": "claude-haiku-4-5",
            "system": f"Work in {where}; your key is {token}.",
            "metadata": {"user_id": user},
            "messages": [{"role": "user", "content": text}],
        }
    ).encode()


def _recorded(tmp_path: Path, *bodies: bytes) -> Path:
    run = tmp_path / "run"
    recorder = Recorder(run / "model", ["sk-real-key"], TOKEN)
    for number, body in enumerate(bodies, 1):
        headers = [("x-api-key", TOKEN), ("content-type", "application/json")]
        recorder.request(number, "POST", "/anthropic/v1/messages?key=sk-real-key", headers, body)
        recorder.response(number, 200, [("content-type", "application/json")])
        recorder.chunk(number, b'{"content": [], "note": "sk-real-key"}')
    return run


def test_what_is_kept_holds_no_credential(tmp_path: Path) -> None:
    """Headers, query and bodies: the token and the key are redacted wherever they were."""
    run = _recorded(tmp_path, _body("one"))
    for path in (run / "model").iterdir():
        data = path.read_bytes()
        assert TOKEN.encode() not in data, path
        assert b"sk-real-key" not in data, path
    request = json.loads((run / "model" / "0001.request.json").read_text())
    assert ["x-api-key", REDACTED] in request["headers"]
    assert request["target"] == "/anthropic/v1/messages?key=%5Bredacted%5D"


def test_a_match_sees_past_identifiers_paths_and_the_token_but_not_the_conversation(tmp_path: Path) -> None:
    """Another session's user id, run folder and token match; another message does not."""
    tape = Tape(_recorded(tmp_path, _body("one"), _body("two")))
    other = "/elsewhere/export-time-20261205-090000-claude-code/workspace"
    found = tape.answer(
        1, "POST", "/anthropic/v1/messages", _body("one", user="u-2", where=other, token="t2"), "t2"
    )
    assert isinstance(found, Recorded)
    assert found.number == 1
    assert b"".join(found.chunks()) == b'{"content": [], "note": "[redacted]"}'
    wrong = tape.answer(2, "POST", "/anthropic/v1/messages", _body("TWO"), TOKEN)
    assert isinstance(wrong, Divergence)
    assert (wrong.recorded, wrong.reason) == (
        2,
        "/anthropic/v1/messages: the body differs "
        "(messages[0].content at character 0: 'TWO', recorded 'two')",
    )
    # Diverged once, the tape serves nothing more, even the request it holds next.
    again = tape.answer(3, "POST", "/anthropic/v1/messages", _body("two"), TOKEN)
    assert isinstance(again, Divergence)
    assert again.recorded is None


def test_another_path_or_a_request_past_the_end_diverges(tmp_path: Path) -> None:
    """The method and path are compared; a tape that has served all it holds serves no more."""
    run = _recorded(tmp_path, _body("one"))
    moved = Tape(run).answer(1, "POST", "/openai/v1/chat/completions", _body("one"), TOKEN)
    assert isinstance(moved, Divergence)
    assert "where the recording has POST /anthropic" in moved.reason
    tape = Tape(run)
    assert isinstance(tape.answer(1, "POST", "/anthropic/v1/messages", _body("one"), TOKEN), Recorded)
    over = tape.answer(2, "POST", "/anthropic/v1/messages", _body("one"), TOKEN)
    assert isinstance(over, Divergence)
    assert "all served" in over.reason


def test_a_fork_forwards_from_the_first_request_that_carries_its_wording(tmp_path: Path) -> None:
    """Unlike the recording and carrying the new wording: forked (None, upstream, from then on);
    unlike it without the wording: a divergence, as in a plain replay."""
    run = _recorded(tmp_path, _body("one"), _body("two"))
    forks: list[int] = []
    tape = Tape(run, fork="Say it otherwise.", on_fork=forks.append)
    assert isinstance(tape.answer(1, "POST", "/anthropic/v1/messages", _body("one"), TOKEN), Recorded)
    assert tape.answer(2, "POST", "/anthropic/v1/messages", _body("Now: Say it otherwise."), TOKEN) is None
    assert tape.answer(3, "POST", "/anthropic/v1/messages", _body("anything"), TOKEN) is None
    assert forks == [2]
    plain = Tape(run, fork="Say it otherwise.")
    assert isinstance(plain.answer(1, "POST", "/anthropic/v1/messages", _body("else"), TOKEN), Divergence)


def test_a_body_that_is_not_json_is_compared_as_text() -> None:
    """Its text, with the token and run paths replaced."""
    assert normalised(b"hello " + TOKEN.encode(), TOKEN) == f"hello {REDACTED}"


def test_a_recording_stops_at_its_limit_and_a_replay_serves_only_what_was_kept_whole(tmp_path: Path) -> None:
    """The answer that passes the limit is dropped, not kept cut short; nothing after it is kept."""
    run = tmp_path / "run"
    recorder = Recorder(run / "model", [], TOKEN, limit=510)  # request 2 fits, its answer does not
    for number in (1, 2, 3):
        recorder.request(number, "POST", "/anthropic/v1/messages", [], _body(str(number)))
        recorder.response(number, 200, [])
        recorder.chunk(number, b"x" * 60)
    assert recorder.stopped == 2
    assert json.loads((run / "model" / "stopped.json").read_text()) == {"from": 2, "limit": 510}
    assert (run / "model" / "0002.request.json").exists()
    assert not (run / "model" / "0002.response.json").exists()
    assert not (run / "model" / "0003.request.json").exists()
    tape = Tape(run)
    assert [e.number for e in tape.exchanges] == [1]
    assert isinstance(tape.answer(1, "POST", "/anthropic/v1/messages", _body("1"), TOKEN), Recorded)
    over = tape.answer(2, "POST", "/anthropic/v1/messages", _body("2"), TOKEN)
    assert isinstance(over, Divergence)
    assert "stopped at request 2, at its size limit" in over.reason


def test_the_query_is_compared_but_not_its_key(tmp_path: Path) -> None:
    """Gemini's ``alt=sse`` decides the answer's shape; the ``key`` is a credential."""
    run = tmp_path / "run"
    recorder = Recorder(run / "model", [], TOKEN)
    target = "/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    recorder.request(1, "POST", f"{target}?alt=sse&key={TOKEN}", [], b"{}")
    recorder.response(1, 200, [])
    assert isinstance(Tape(run).answer(1, "POST", f"{target}?key=other&alt=sse", b"{}", "other"), Recorded)
    plain = Tape(run).answer(1, "POST", f"{target}?key=other", b"{}", "other")
    assert isinstance(plain, Divergence)
    assert "query [] differs from the recorded [('alt', 'sse')]" in plain.reason


def test_durations_match_and_a_served_answer_names_the_new_run_s_files(tmp_path: Path) -> None:
    """A tool's timing is volatile; a recorded tool call's path into the old run folder is served
    as the same path into the new one."""
    old = tmp_path / "export-time-20261204-101500-claude-code"
    recorder = Recorder(old / "model", [], TOKEN)
    recorder.request(1, "POST", "/anthropic/v1/messages", [], _body("1 passed in 0.00s"))
    recorder.response(1, 200, [])
    recorder.chunk(1, json.dumps({"file_path": f"{old}/workspace/a.py"}).encode())
    new = tmp_path / "export-time-20261205-090000-claude-code"
    tape = Tape(old, here=new)
    found = tape.answer(1, "POST", "/anthropic/v1/messages", _body("1 passed in 0.01s"), TOKEN)
    assert isinstance(found, Recorded)
    assert json.loads(b"".join(found.chunks())) == {"file_path": f"{new}/workspace/a.py"}

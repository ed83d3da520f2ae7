"""Secret redaction over a stream: a secret is redacted however the output is cut into pieces."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.agents.redaction import RedactedStream, Redactor

SECRETS = {"ANTHROPIC_API_KEY": "sk-ant-0123456789abcdef", "GH_TOKEN": "ghp_zyxwvutsrq9876"}
pieces = st.lists(
    st.one_of(st.sampled_from(sorted(SECRETS.values())), st.text("ab \n-", max_size=12)), max_size=30
)


@settings(max_examples=400, deadline=None)
@given(parts=pieces, cuts=st.lists(st.integers(0, 400), max_size=12), hold=st.integers(1, 40))
def test_a_stream_cut_anywhere_redacts_like_the_whole_text(
    parts: list[str], cuts: list[int], hold: int
) -> None:
    """Whatever the chunking and however short the hold, the output is the whole text redacted."""
    text = "".join(parts)
    redact = Redactor(SECRETS)
    stream = RedactedStream(redact, hold=hold)
    bounds = sorted({0, len(text), *(c for c in cuts if c < len(text))})
    out = [stream.feed(text[a:b]) for a, b in itertools.pairwise(bounds)]
    out.append(stream.flush())
    joined = "".join(out)
    assert joined == redact(text)
    assert not any(secret in joined for secret in SECRETS.values())


def test_nothing_is_held_back_once_a_line_ends() -> None:
    """A whole line is written as soon as its end arrives; only the unfinished rest waits."""
    stream = RedactedStream(Redactor(SECRETS))
    assert stream.feed("first line\nsecond ") == "first line\n"
    assert stream.feed("sk-ant-0123") == ""
    assert stream.feed("456789abcdef done\n") == "second [redacted $ANTHROPIC_API_KEY] done\n"
    assert stream.flush() == ""
